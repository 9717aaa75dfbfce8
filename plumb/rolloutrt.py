"""Build a rollout :class:`~rollouts.runtime.Runtime` for a command: the fleet's
drivers, the lease-fenced write guard, the audit sink, and the clock, maintenance and
metrics sources of the fleet the targets live on (the lab's, when they are lab
devices), plus a rich progress display on the terminal."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from plumb.context import AuditToDb, DbGuard, FleetContext
from reconciler.lab import lab_db_path
from reconciler.state.labclock import LabClock
from reconciler.state.labdb import LabStore
from reconciler.state.lease import LeaseToken
from reconciler.targets import rule_for
from rollouts.runtime import Runtime, WallClock
from rollouts.spec import RolloutSpec, Source

if TYPE_CHECKING:
    from rollouts.sources import MetricsSource

err = Console(stderr=True, highlight=False)


class ConsoleReporter:
    """Wave messages as lines, device writes as a transient progress bar."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self._progress: Progress | None = None
        self._task: Any = None

    def message(self, text: str) -> None:
        if self.enabled:
            self.console.print(f"  {text}")

    def begin(self, label: str, total: int) -> None:
        if not self.enabled or not self.console.is_terminal:
            return
        self._progress = Progress(
            TextColumn("  {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, count: int = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, count)

    def end(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class NoMaintenance:
    """Fleets without a lab: reboots are part of the driver's firmware apply, and
    acceptance is the driver's verify by re-observe (no further hook)."""

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices)

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices)


def on_lab(context: FleetContext, names: Sequence[str]) -> bool:
    """Do the named devices live on the lab fleet (lab driver, lab database present)?"""
    fleet = context.fleet
    rules = fleet.config.drivers
    lab = all(
        rule_for(rules, fleet.devices[n]).driver == "lab" for n in names if n in fleet.devices
    )
    return lab and lab_db_path(fleet).exists()


@contextmanager
def rollout_runtime(
    context: FleetContext,
    token: LeaseToken,
    names: Sequence[str],
    *,
    show: bool,
    spec: RolloutSpec | None = None,
    extra_sources: dict[Source, MetricsSource] | None = None,
) -> Iterator[Runtime]:
    """A Runtime for ``names`` (and the Prometheus source ``spec`` configures); closes
    drivers and lab handles on exit."""
    from rollouts.labruntime import LabBakeClock, LabMaintenance
    from rollouts.sources.lab import LabMetricsSource
    from rollouts.sources.prometheus import PrometheusSource

    with ExitStack() as stack:
        targets = context.targets()
        stack.callback(targets.close)
        sources: dict[Source, MetricsSource] = dict(extra_sources or {})
        if spec is not None and spec.abort.prometheus is not None:
            sources.setdefault(Source.prometheus, PrometheusSource(spec.abort.prometheus))
        runtime = Runtime(
            fleet=context.fleet,
            targets=targets,
            db=context.db,
            guard=DbGuard(context.db, token),
            audit=AuditToDb(context),
            clock=WallClock(),
            maintenance=NoMaintenance(),
            sources=sources,
            reporter=ConsoleReporter(err, show),
        )
        if on_lab(context, names):
            path = lab_db_path(context.fleet)
            store = LabStore(path)
            stack.callback(store.close)
            clock = LabClock(path)
            stack.callback(clock.close)
            runtime.clock = LabBakeClock(clock)
            runtime.maintenance = LabMaintenance(context.fleet, store, clock)
            sources.setdefault(Source.lab, LabMetricsSource(context.fleet, store, clock))
        yield runtime
