"""``drain: {via: slurm}``: Slurm's own clients drain, watch and resume the nodes.

::

    scontrol update nodename=N1,N2 state=drain reason="plumb rollout ID: wave 2"
    scontrol -o show node            # State=MIXED+DRAIN ... -> IDLE+DRAIN: drained
    squeue --json                    # the jobs (gangs) on the nodes
    scontrol requeue 17 | scancel 17 # the spec's on_timeout, once the wait is over
    scontrol update nodename=N1 state=resume

A node's Slurm name is its device name. The clients find the cluster the usual way
(``SLURM_CONF`` or ``/etc/slurm/slurm.conf``). Parsing is :mod:`rollouts.slurmparse`;
the processes run through a :class:`~rollouts.commands.CommandRunner`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from rollouts.commands import CommandResult, CommandRunner, LocalCommands
from rollouts.drain import DrainError
from rollouts.slurmparse import (
    Job,
    NodeState,
    SlurmOutputError,
    drained_by,
    jobs_on,
    parse_jobs,
    parse_nodes,
)
from rollouts.spec import DrainVia, OnTimeout

CLIENT_TIMEOUT_SECONDS = 60.0
OTHER_ACTOR = "drained by another actor"
"""How a node another actor drained is refused: plumb leaves it alone."""


class SlurmError(DrainError):
    """A Slurm client failed or printed what Slurm does not print."""


class SlurmDrainer:
    """Drains through ``scontrol``; refuses a node another actor drained (its reason
    is not this rollout's) and resumes only nodes drained under this rollout."""

    via = DrainVia.slurm

    def __init__(self, runner: CommandRunner | None = None) -> None:
        self.runner = runner or LocalCommands()

    def _run(self, *argv: str) -> CommandResult:
        result = self.runner.run("slurm", argv, CLIENT_TIMEOUT_SECONDS)
        if not result.ok:
            raise SlurmError(f"{' '.join(argv[:3])}: {result.why()}")
        return result

    def nodes(self) -> dict[str, NodeState]:
        try:
            return parse_nodes(self._run("scontrol", "-o", "show", "node").stdout)
        except SlurmOutputError as exc:
            raise SlurmError(str(exc)) from exc

    def jobs(self, nodes: Sequence[str]) -> list[Job] | None:
        try:
            everything = parse_jobs(self._run("squeue", "--json").stdout)
        except SlurmOutputError as exc:
            raise SlurmError(str(exc)) from exc
        return jobs_on(everything, nodes)

    def _update(self, nodes: Sequence[str], *settings: str) -> dict[str, str | None]:
        if not nodes:
            return {}
        try:
            self._run("scontrol", "update", "nodename=" + ",".join(nodes), *settings)
        except SlurmError as exc:
            return dict.fromkeys(nodes, str(exc))
        return dict.fromkeys(nodes)

    def _mine(
        self, rollout: str, nodes: Sequence[str]
    ) -> tuple[list[str], list[str], dict[str, str | None]]:
        """Split ``nodes``: drained by this rollout, free (in service), refused."""
        try:
            known = self.nodes()
        except SlurmError as exc:
            return [], [], dict.fromkeys(nodes, str(exc))
        mine: list[str] = []
        free: list[str] = []
        refused: dict[str, str | None] = {}
        for name in nodes:
            node = known.get(name)
            if node is None:
                refused[name] = "not a node of this Slurm cluster"
            elif (other := drained_by(node, rollout)) is not None:
                refused[name] = f"{OTHER_ACTOR} ({other}): plumb leaves it alone"
            elif node.drain_flag:
                mine.append(name)
            else:
                free.append(name)
        return mine, free, refused

    def claim(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        mine, free, refused = self._mine(rollout, nodes)
        return {
            **dict.fromkeys(mine),
            **self._update(free, "state=drain", f"reason={reason}"),
            **refused,
        }

    def drained(self, rollout: str, nodes: Sequence[str]) -> dict[str, bool]:
        known = self.nodes()
        return {n: n in known and known[n].drained for n in nodes}

    def stop_jobs(self, jobs: Sequence[Job], how: OnTimeout) -> dict[int, str | None]:
        out: dict[int, str | None] = {}
        for job in jobs:
            argv = (
                ("scontrol", "requeue", str(job.id))
                if how is OnTimeout.requeue
                else ("scancel", str(job.id))
            )
            try:
                self._run(*argv)
                out[job.id] = None
            except SlurmError as exc:
                out[job.id] = str(exc)
        return out

    def release(self, rollout: str, nodes: Sequence[str]) -> dict[str, str | None]:
        mine, free, refused = self._mine(rollout, nodes)
        return {**dict.fromkeys(free), **self._update(mine, "state=resume"), **refused}

    def hold(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        mine, free, refused = self._mine(rollout, nodes)
        return {
            **self._update([*mine, *free], "state=drain", f"reason={reason}"),
            **refused,
        }


DEFAULT_CONF = Path("/etc/slurm/slurm.conf")


def preflight(
    nodes: Sequence[str],
    runner: CommandRunner | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Why a rollout draining ``nodes`` through Slurm cannot start here, or nothing: the
    clients' configuration is found (``SLURM_CONF``, else /etc/slurm/slurm.conf), the
    controller answers ``scontrol ping``, and every node is a node of the cluster. Run
    by ``rollout plan`` and ``rollout start`` before anything is journaled or drained."""
    env = os.environ if environ is None else environ
    conf = Path(env["SLURM_CONF"]) if env.get("SLURM_CONF") else DEFAULT_CONF
    if not conf.is_file():
        where = "SLURM_CONF" if env.get("SLURM_CONF") else "no SLURM_CONF set, and"
        return [f"Slurm clients have no configuration: {where} {conf} is not a file"]
    drainer = SlurmDrainer(runner)
    try:
        answer = drainer._run("scontrol", "ping").stdout
    except SlurmError as exc:
        return [f"the Slurm controller does not answer `scontrol ping`: {exc}"]
    if "UP" not in answer.split():
        first = answer.strip().splitlines()[0] if answer.strip() else "no answer"
        return [f"the Slurm controller is not up: {first}"]
    try:
        known = drainer.nodes()
    except SlurmError as exc:
        return [f"cannot list the cluster's nodes: {exc}"]
    unknown = [n for n in nodes if n not in known]
    if unknown:
        shown = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        return [f"{len(unknown)} target(s) are no nodes of this Slurm cluster: {shown}"]
    return []
