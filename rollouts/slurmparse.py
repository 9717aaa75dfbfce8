"""What Slurm says about nodes and jobs, parsed (pure): the scheduler's side of a drain.

Slurm 22.05 offers JSON for jobs (``squeue --json``, format ``openapi/v0.0.38``) but not
for ``scontrol`` (``--json`` came in 23.02). Node state is read from ``scontrol -o show
node`` (one ``key=value`` record per line): ``sinfo`` can keep reporting ``mixed`` for
many seconds after a resume, while ``scontrol`` already has the node's real state.

A node is *drained* when it carries the ``DRAIN`` flag and nothing of a job is left on
it (its base state is ``IDLE`` or ``DOWN``); ``MIXED+DRAIN`` / ``ALLOCATED+DRAIN`` /
``+COMPLETING`` is still draining. The drain reason tells who drained it: plumb's
reasons start with ``plumb rollout <id>:``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_RANGE = re.compile(r"^(\d+)-(\d+)$")
_REASON_TAIL = re.compile(r"\s*\[([^\]@]*)@[^\]]*\]\s*$")
_GRES_COUNT = re.compile(r"(?:^|,)(?:gres[:/])?gpu(?::[^:(,]+)?:(\d+)")
_BUSY = frozenset({"ALLOCATED", "MIXED", "COMPLETING"})
_ACTIVE_JOB = frozenset({"RUNNING", "COMPLETING", "SUSPENDED", "CONFIGURING", "STOPPED"})


class SlurmOutputError(ValueError):
    """Output that is not what Slurm prints."""


def expand_hostlist(text: str) -> list[str]:
    """``gpu-n[01-03,07],login1`` -> gpu-n01, gpu-n02, gpu-n03, gpu-n07, login1 (zero
    padding kept, as Slurm prints it)."""
    names: list[str] = []
    for part in _split_top(text.strip()):
        if not part:
            continue
        open_at = part.find("[")
        if open_at < 0:
            names.append(part)
            continue
        close_at = part.find("]", open_at)
        if close_at < 0:
            raise SlurmOutputError(f"unbalanced host list: {text!r}")
        head, body, tail = part[:open_at], part[open_at + 1 : close_at], part[close_at + 1 :]
        rests = expand_hostlist(tail) if tail else [""]
        for item in body.split(","):  # the first bracket varies slowest, as Slurm's own
            names.extend(f"{head}{n}{rest}" for n in _numbers(item, text) for rest in rests)
    return names


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _numbers(item: str, whole: str) -> list[str]:
    match = _RANGE.match(item)
    if match is None:
        if not item.isdigit():
            raise SlurmOutputError(f"bad host list range {item!r} in {whole!r}")
        return [item]
    low, high = match.group(1), match.group(2)
    if int(high) < int(low):
        raise SlurmOutputError(f"descending range {item!r} in {whole!r}")
    width = len(low)
    return [f"{n:0{width}d}" for n in range(int(low), int(high) + 1)]


@dataclass(frozen=True)
class NodeState:
    """One node as ``scontrol -o show node`` reports it."""

    name: str
    base: str  # IDLE, MIXED, ALLOCATED, DOWN, ...
    flags: frozenset[str]  # DRAIN, COMPLETING, NOT_RESPONDING (shown as '*'), ...
    reason: str | None
    reason_by: str | None

    @property
    def drain_flag(self) -> bool:
        return "DRAIN" in self.flags

    @property
    def drained(self) -> bool:
        """Drain flag set and no job left on the node."""
        return self.drain_flag and self.base not in _BUSY and "COMPLETING" not in self.flags

    @property
    def state(self) -> str:
        return "+".join([self.base, *sorted(self.flags)])


def parse_nodes(text: str) -> dict[str, NodeState]:
    """``scontrol -o show node`` output: node name -> its state."""
    nodes: dict[str, NodeState] = {}
    for line in text.splitlines():
        if line.strip():
            node = parse_node_line(line)
            nodes[node.name] = node
    return nodes


def parse_node_line(line: str) -> NodeState:
    """One ``scontrol -o show node`` record. ``Reason=`` is the record's last field and
    may hold spaces; Slurm appends ``[user@time]`` to it."""
    head, has_reason, reason_text = line.partition(" Reason=")
    fields = dict(f.split("=", 1) for f in head.split() if "=" in f)
    name, state = fields.get("NodeName"), fields.get("State")
    if not name or not state:
        raise SlurmOutputError(f"not a node record: {line[:120]!r}")
    base, *flags = state.rstrip("*~#!%$@^-").split("+")
    extra = {"NOT_RESPONDING"} if state.endswith("*") else set()
    reason, by = None, None
    if has_reason:
        tail = _REASON_TAIL.search(reason_text)
        if tail is not None:
            by = tail.group(1) or None
            reason_text = reason_text[: tail.start()]
        reason = reason_text.strip() or None
    return NodeState(name, base, frozenset(flags) | extra, reason, by)


@dataclass(frozen=True)
class Job:
    """A job the scheduler runs: the gang a drain of any of its nodes stalls."""

    id: int
    name: str
    state: str
    user: str
    nodes: tuple[str, ...]
    gpus: int
    requeue: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "user": self.user,
            "nodes": list(self.nodes),
            "gpus": self.gpus,
        }


def parse_jobs(text: str) -> list[Job]:
    """``squeue --json``: the jobs holding nodes (running, completing, suspended)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SlurmOutputError(f"squeue --json is not JSON: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise SlurmOutputError("squeue --json has no jobs list")
    errors = document.get("errors") or []
    if errors:
        raise SlurmOutputError(f"squeue reported errors: {errors}")
    jobs = [_job(j) for j in document["jobs"] if isinstance(j, dict)]
    return [j for j in jobs if j.state in _ACTIVE_JOB]


def _job(raw: Mapping[str, object]) -> Job:
    job_id, nodes_text = raw.get("job_id"), raw.get("nodes")
    if not isinstance(job_id, int):
        raise SlurmOutputError(f"job without a job_id: {str(raw)[:120]}")
    nodes = tuple(expand_hostlist(nodes_text)) if isinstance(nodes_text, str) else ()
    return Job(
        id=job_id,
        name=str(raw.get("name") or ""),
        state=str(raw.get("job_state") or ""),
        user=str(raw.get("user_name") or ""),
        nodes=nodes,
        gpus=_job_gpus(raw, len(nodes)),
        requeue=bool(raw.get("requeue")),
    )


def _job_gpus(raw: Mapping[str, object], node_count: int) -> int:
    """GPUs the job holds: per node from ``gres_detail`` (``gpu:h100:8(IDX:0-7)``), else
    ``tres_per_node`` (``gres:gpu:h100:8``) times its nodes."""
    detail = raw.get("gres_detail")
    if isinstance(detail, list) and detail:
        return sum(_gres_gpus(str(d)) for d in detail)
    per_node = raw.get("tres_per_node")
    if isinstance(per_node, str):
        return _gres_gpus(per_node) * node_count
    return 0


def _gres_gpus(text: str) -> int:
    return sum(int(m.group(1)) for m in _GRES_COUNT.finditer(text.split("(", 1)[0]))


def jobs_on(jobs: Iterable[Job], nodes: Iterable[str]) -> list[Job]:
    """The jobs holding any of ``nodes``."""
    wanted = set(nodes)
    return [j for j in jobs if wanted.intersection(j.nodes)]


def plumb_reason(rollout: str, what: str) -> str:
    """The drain reason plumb sets: it names the rollout, so plumb knows its own drains."""
    return f"plumb rollout {rollout}: {what}"


def drained_by(node: NodeState, rollout: str) -> str | None:
    """Why plumb must leave ``node`` alone: drained (or down) by another actor, whose
    reason is not this rollout's; None when plumb may take it."""
    if not node.drain_flag and node.base != "DOWN":
        return None
    if node.reason is not None and node.reason.startswith(plumb_reason(rollout, "")):
        return None
    by = f" by {node.reason_by}" if node.reason_by else ""
    return f"{node.state}{by}, reason {node.reason or '(none)'!r}"
