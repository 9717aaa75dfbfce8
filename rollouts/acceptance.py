"""A site's acceptance tests for drained nodes (``acceptance:`` in the spec, per role):
NCCL all-reduce, ``dcgmi diag``, ``ib_write_bw``. A test passes on exit status 0;
``key=value`` lines of its output are kept as figures. It runs on the node through the
host driver (``run: node``) or on this machine (``run: local``, a harness that reaches
the node itself); ``{node}`` in the command line is the node's name.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from intent.fleet import Fleet
from inventory.models import Role
from reconciler.drivers.base import DeviceRef
from reconciler.errors import DeviceError
from reconciler.targets import Targets
from rollouts.commands import CommandResult, CommandRunner, command_argv, figures
from rollouts.evidence import Json
from rollouts.spec import Acceptance, AcceptanceRun


@runtime_checkable
class _RunsCommands(Protocol):
    def run_command(self, device: DeviceRef, argv: Sequence[str], timeout: float) -> Any: ...


class HostCommands:
    """Commands on the node itself, through its driver (the host driver's
    ``run_command``: ansible); a driver that runs no commands is an error result."""

    def __init__(self, targets: Targets) -> None:
        self.targets = targets

    def run(self, node: str, argv: Sequence[str], timeout: float) -> CommandResult:
        started = time.monotonic()
        driver = self.targets.driver(node)
        if not isinstance(driver, _RunsCommands):
            why = f"the {getattr(driver, 'name', 'device')} driver runs no commands on a node"
            return CommandResult(tuple(argv), None, "", "", 0.0, why)
        try:
            out = driver.run_command(self.targets.ref(node), argv, timeout)
        except DeviceError as exc:
            return CommandResult(tuple(argv), None, "", "", time.monotonic() - started, str(exc))
        error = None if out.rc is not None else f"did not finish within {timeout:g} s"
        return CommandResult(
            tuple(argv), out.rc, out.stdout, out.stderr, time.monotonic() - started, error
        )


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
    on_node: CommandRunner,
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
        result = runner.run(node, argv, hook.timeout_seconds)
        out[node] = HookOutcome(node, hook.command, result)
    return out
