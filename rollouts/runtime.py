"""What a running rollout talks to, as protocols: the clock its bakes wait on, the
maintenance hooks (reboot, acceptance) of the nodes it changes, the drainer that takes
nodes out of service and back (:mod:`rollouts.drain`), the command runners acceptance
tests go through, and where it reports progress. :class:`Runtime` bundles them with
the fleet, the drivers, the state database and the metrics sources;
:mod:`lab.runtime` provides the lab's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from intent.fleet import Fleet
from reconciler.loop import AuditSink, WriteGuard
from reconciler.state.db import StateDB
from reconciler.targets import Targets
from rollouts.commands import CommandRunner, LocalCommands
from rollouts.drain import Drainer
from rollouts.spec import Source

if TYPE_CHECKING:  # the sources import scipy: only a running rollout pays for it
    from rollouts.sources import MetricsSource


class BakeClock(Protocol):
    """Minutes on the clock the rollout's bakes and metrics windows are measured in."""

    def now(self) -> float: ...

    def advance(self, minutes: float) -> float:
        """Let ``minutes`` pass (wait for them, or move virtual time); the new now."""
        ...

    def time(self, minutes: float) -> datetime:
        """The instant ``minutes`` on this clock stands for (metrics windows)."""
        ...


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class WallClock:
    """Real time: a bake of 30 minutes waits 30 minutes (and survives a restart,
    since its end is journaled). The rollout waits on it in slices, so an operator
    abort stops a bake within a slice; drain, flash and reboot take their real time
    in the maintenance steps, so the declared ``drain_minutes`` (a price figure) is
    never slept on it."""

    def now(self) -> float:
        return (datetime.now(UTC) - _EPOCH).total_seconds() / 60.0

    def advance(self, minutes: float) -> float:
        if minutes > 0:
            time.sleep(minutes * 60.0)
        return self.now()

    def time(self, minutes: float) -> datetime:
        return _EPOCH + timedelta(minutes=minutes)


class Maintenance(Protocol):
    """Node maintenance steps a drained change needs."""

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        """Reboot each device; device -> error (None when it came back)."""
        ...

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        """Run the acceptance check on each device; device -> failure (None: passed)."""
        ...


class Reporter(Protocol):
    """Where a running rollout reports what it does (the CLI's progress display)."""

    def message(self, text: str) -> None: ...

    def begin(self, label: str, total: int) -> None: ...

    def advance(self, count: int = 1) -> None: ...

    def end(self) -> None: ...


class QuietReporter:
    def message(self, text: str) -> None:
        return None

    def begin(self, label: str, total: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None

    def end(self) -> None:
        return None


@dataclass
class Runtime:
    """Everything a rollout step touches; built by the CLI (or a test) per process."""

    fleet: Fleet
    targets: Targets
    db: StateDB
    guard: WriteGuard
    audit: AuditSink
    clock: BakeClock
    maintenance: Maintenance
    sources: Mapping[Source, MetricsSource]
    reporter: Reporter = field(default_factory=QuietReporter)
    drainer: Drainer | None = None  # None: the spec's drain.via decides
    local_commands: CommandRunner = field(default_factory=LocalCommands)
    node_commands: CommandRunner | None = None  # None: through each node's driver
    concurrency: int = 16
    confirm_within: float | None = 120.0

    def record(self, kind: str, **fields: Any) -> None:
        self.audit.record(kind, **fields)


def real_time(clock: BakeClock) -> bool:
    """Does waiting on ``clock`` take real time? (A virtual clock moves at once.)"""
    return isinstance(clock, WallClock)
