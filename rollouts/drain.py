"""Who takes a rollout's nodes out of service and back: the :class:`Drainer` contract
and the drainers that need no scheduler.

* ``lab`` (:class:`JournalDrainer`): the drain is a journal state only; the lab fleet's
  nodes run no jobs to stop;
* ``command`` (:class:`CommandDrainer`): a site's own commands drain, check and resume a
  node (exit status 0: done);
* ``slurm``: :class:`rollouts.slurm.SlurmDrainer`.

Every call names the rollout, so a drainer that can read a node's drain reason
(Slurm) refuses a node another actor drained and resumes only its own drains. Results
are per node: ``None`` for done, else why not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rollouts.commands import CommandRunner, command_argv
from rollouts.slurmparse import Job
from rollouts.spec import DrainCommands, DrainVia, OnTimeout

COMMAND_TIMEOUT_SECONDS = 120.0
"""How long one drain, check or resume command may take."""


class DrainError(Exception):
    """The drainer could not ask (the scheduler is down, its output unreadable)."""


class Drainer(Protocol):
    """Takes nodes out of service (their jobs end first) and returns them."""

    via: DrainVia

    def jobs(self, nodes: Sequence[str]) -> list[Job] | None:
        """The jobs (gangs) holding any of ``nodes``; None when no scheduler is asked."""
        ...

    def claim(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        """Start draining ``nodes`` with ``reason``: no new work lands on them."""
        ...

    def drained(self, rollout: str, nodes: Sequence[str]) -> dict[str, bool]:
        """Which of ``nodes`` run no work any more."""
        ...

    def stop_jobs(self, jobs: Sequence[Job], how: OnTimeout) -> dict[int, str | None]:
        """Requeue or cancel ``jobs`` (a drain's wait is over); job id -> error."""
        ...

    def release(self, rollout: str, nodes: Sequence[str]) -> dict[str, str | None]:
        """Return ``nodes`` to service (only what this rollout drained)."""
        ...

    def hold(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        """Keep ``nodes`` out of service with a new ``reason`` (repair)."""
        ...


class JournalDrainer:
    """``via: lab``: nothing outside the journal moves."""

    via = DrainVia.lab

    def jobs(self, nodes: Sequence[str]) -> list[Job] | None:
        return None

    def claim(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        return dict.fromkeys(nodes)

    def drained(self, rollout: str, nodes: Sequence[str]) -> dict[str, bool]:
        return dict.fromkeys(nodes, True)

    def stop_jobs(self, jobs: Sequence[Job], how: OnTimeout) -> dict[int, str | None]:
        return {}

    def release(self, rollout: str, nodes: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(nodes)

    def hold(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        return dict.fromkeys(nodes)


class CommandDrainer:
    """``via: command``: a site's drain, drained-check and resume commands, per node.
    plumb cannot tell another actor's drain from its own here: the site's commands
    decide (a drain command that refuses exits non-zero)."""

    via = DrainVia.command

    def __init__(self, commands: DrainCommands, runner: CommandRunner) -> None:
        self.commands = commands
        self.runner = runner

    def _each(self, line: str, nodes: Sequence[str], reason: str = "") -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for node in nodes:
            argv = command_argv(line, {"node": node, "reason": reason})
            result = self.runner.run(node, argv, COMMAND_TIMEOUT_SECONDS)
            out[node] = None if result.ok else f"{argv[0]}: {result.why()}"
        return out

    def jobs(self, nodes: Sequence[str]) -> list[Job] | None:
        return None

    def claim(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        return self._each(self.commands.drain, nodes, reason)

    def drained(self, rollout: str, nodes: Sequence[str]) -> dict[str, bool]:
        return {n: e is None for n, e in self._each(self.commands.drained, nodes).items()}

    def stop_jobs(self, jobs: Sequence[Job], how: OnTimeout) -> dict[int, str | None]:
        return {}

    def release(self, rollout: str, nodes: Sequence[str]) -> dict[str, str | None]:
        return self._each(self.commands.resume, nodes)

    def hold(self, rollout: str, nodes: Sequence[str], reason: str) -> dict[str, str | None]:
        return self._each(self.commands.drain, nodes, reason)
