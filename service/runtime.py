"""Build a rollout :class:`~rollouts.runtime.Runtime` for the CLI and the controller:
the fleet's drivers, the lease-fenced write guard, the audit sink, and the clock,
maintenance and metrics sources the targets' driver plugin supplies for rollouts (the
lab's, when they are lab devices: :mod:`rollouts.support`). The caller brings its
reporter (a terminal progress bar, log lines)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from reconciler.drivers.plugin import TargetContext
from reconciler.state.lease import LeaseToken
from reconciler.targets import matching_rule
from rollouts.runtime import QuietReporter, Reporter, Runtime, WallClock
from rollouts.spec import RolloutSpec, Source
from rollouts.support import RolloutSupport, support_factory
from service.context import AuditToDb, DbGuard, FleetContext

if TYPE_CHECKING:
    from rollouts.sources import MetricsSource


class NoMaintenance:
    """Fleets without a lab: reboots are part of the driver's firmware apply, and
    acceptance is the driver's verify by re-observe (no further hook)."""

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices)

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices)


def shared_driver(context: FleetContext, names: Sequence[str]) -> str | None:
    """The one driver name every device in ``names`` is reached by, if they share one."""
    fleet = context.fleet
    rules = fleet.config.drivers
    drivers = {
        rule.driver
        for n in names
        if n in fleet.devices and (rule := matching_rule(rules, fleet.devices[n])) is not None
    }
    return drivers.pop() if len(drivers) == 1 else None


def rollout_support(context: FleetContext, names: Sequence[str]) -> RolloutSupport | None:
    """What the driver plugin of ``names`` supplies to a rollout over them (the lab's
    virtual clock, maintenance and metrics), if it supplies anything."""
    driver = shared_driver(context, names)
    factory = support_factory(driver) if driver is not None else None
    if factory is None:
        return None
    fleet = context.fleet
    return factory(TargetContext(fleet.root, fleet.root / fleet.config.state_dir, fleet))


@contextmanager
def rollout_runtime(
    context: FleetContext,
    token: LeaseToken,
    names: Sequence[str],
    *,
    reporter: Reporter | None = None,
    spec: RolloutSpec | None = None,
    extra_sources: dict[Source, MetricsSource] | None = None,
) -> Iterator[Runtime]:
    """A Runtime for ``names`` (and the Prometheus source ``spec`` configures), on what
    their driver plugin supplies for rollouts; closes drivers and plugin handles on
    exit."""
    from rollouts.sources.prometheus import PrometheusSource

    with ExitStack() as stack:
        targets = context.targets()
        stack.callback(targets.close)
        sources: dict[Source, MetricsSource] = dict(extra_sources or {})
        if spec is not None and spec.abort.prometheus is not None:
            prometheus = PrometheusSource(spec.abort.prometheus)
            stack.callback(prometheus.close)
            sources.setdefault(Source.prometheus, prometheus)
        runtime = Runtime(
            fleet=context.fleet,
            targets=targets,
            db=context.db,
            guard=DbGuard(context.db, token),
            audit=AuditToDb(context),
            clock=WallClock(),
            maintenance=NoMaintenance(),
            sources=sources,
            reporter=reporter or QuietReporter(),
        )
        support = rollout_support(context, names)
        if support is not None:
            stack.callback(support.close)
            runtime.clock = support.clock
            runtime.maintenance = support.maintenance
            for source, metrics in support.sources.items():
                sources.setdefault(source, metrics)
        yield runtime
