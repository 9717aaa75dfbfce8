"""Rollout support a driver plugin may supply for its devices: the clock its bakes
wait on, node maintenance (reboot, acceptance) and metrics sources.

Registered under the ``plumb.rollout_support`` entry point group by driver name, as
the lab does (``lab``): a rollout whose targets are all reached by that driver runs
on what its plugin supplies. Drivers with no entry here (real switches and hosts)
run on wall-clock time, with the driver's own reboot and verify, and the metrics
sources the spec configures (Prometheus).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from reconciler.drivers.plugin import TargetContext
from rollouts.runtime import BakeClock, Maintenance
from rollouts.spec import Source

if TYPE_CHECKING:
    from rollouts.sources import MetricsSource

SUPPORT_GROUP = "plumb.rollout_support"


@dataclass
class RolloutSupport:
    """What a plugin supplies to a rollout over its devices; ``close`` releases it."""

    clock: BakeClock
    maintenance: Maintenance
    sources: dict[Source, MetricsSource] = field(default_factory=dict)
    close: Callable[[], None] = lambda: None


SupportFactory = Callable[[TargetContext], RolloutSupport | None]
"""Builds the support for the fleet in ``context``; None when it is not there (a lab
fleet not initialised)."""


@cache
def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=SUPPORT_GROUP)}


def support_factory(driver: str) -> SupportFactory | None:
    """The rollout support the plugin of ``driver`` registers, if any."""
    entry = _entry_points().get(driver)
    if entry is None:
        return None
    factory: SupportFactory = entry.load()
    return factory
