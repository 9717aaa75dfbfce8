"""A site's acceptance tests for drained nodes (``acceptance:`` in the spec, per role):
NCCL all-reduce, ``dcgmi diag``, ``ib_write_bw``. A test passes on exit status 0;
``key=value`` lines of its output are kept as figures. It runs on the node through the
host driver (``run: node``) or on this machine (``run: local``, a harness that reaches
the node itself); ``{node}`` in the command line is the node's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from intent.fleet import Fleet
from inventory.models import Role
from rollouts.commands import CommandResult, CommandRunner, command_argv, figures
from rollouts.evidence import Json
from rollouts.spec import Acceptance, AcceptanceRun


@dataclass(frozen=True)
class HookOutcome:
    """One node's acceptance test: how it ended and what it measured."""

    node: str
    command: str
    result: CommandResult

    @property
    def failure(self) -> str | None:
        if self.result.ok:
            return None
        return f"acceptance test {self.result.argv[0] if self.result.argv else ''}: " + (
            self.result.why()
        )

    def to_dict(self) -> dict[str, Json]:
        return {
            "command": self.command,
            "exit_status": self.result.exit_status,
            "seconds": round(self.result.seconds, 3),
            "figures": dict(figures(self.result.stdout)),
            "error": self.result.error,
            "passed": self.result.ok,
        }


def run_hooks(
    fleet: Fleet,
    hooks: Mapping[Role, Acceptance],
    nodes: Sequence[str],
    *,
    local: CommandRunner,
    on_node: CommandRunner | None,
) -> dict[str, HookOutcome]:
    """Run each node's role's acceptance test (nodes of a role without one are not in
    the result)."""
    out: dict[str, HookOutcome] = {}
    for node in nodes:
        device = fleet.devices.get(node)
        hook = hooks.get(device.role) if device is not None else None
        if hook is None:
            continue
        argv = command_argv(hook.command, {"node": node})
        runner = local if hook.run is AcceptanceRun.local else on_node
        if runner is None:
            result = CommandResult(
                tuple(argv), None, "", "", 0.0, "no host driver here runs commands on the node"
            )
        else:
            result = runner.run(node, argv, hook.timeout_seconds)
        out[node] = HookOutcome(node, hook.command, result)
    return out
