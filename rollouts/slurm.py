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

from collections.abc import Sequence

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
                refused[name] = f"drained by another actor ({other}): plumb leaves it alone"
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
