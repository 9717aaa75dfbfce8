"""The lab as a plugin: its ``plumb.drivers`` entry point (the driver over the lab
store) and its ``plumb.rollout_support`` entry point (the virtual clock bakes wait on,
lab maintenance, the lab metrics source). Production code reaches the lab only
through these two."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING

from intent.models import DriverRule
from lab.driver import LabDriver
from lab.fleet import LAB_DB
from lab.store import LabStore
from reconciler.drivers.base import Driver
from reconciler.drivers.plugin import TargetContext, TargetError

if TYPE_CHECKING:
    from rollouts.support import RolloutSupport


def driver(context: TargetContext, rule: DriverRule) -> Driver:
    """The ``lab`` driver of a fleet whose lab was made by ``plumb lab init``; while a
    real-network lab is up (``plumb lab init --real``), the linux-frr driver over its
    namespaces."""
    from lab.realfabric.state import fabric_driver, load_state

    try:
        real = load_state(context.state_dir)
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    if real is not None:
        if not real.complete:
            raise TargetError(
                f"the real-network lab is incomplete: run `plumb lab down {context.root}`, "
                "then `plumb lab init --real` again"
            )
        return fabric_driver(real)
    path = context.state_dir / LAB_DB
    if not path.is_file():  # opening the store would create an empty lab here
        raise TargetError(
            f"the lab fleet does not exist yet: run `plumb lab init {context.root}` first"
        )
    store = LabStore(path)
    if not store.exists():
        store.close()
        raise TargetError(
            f"the lab fleet does not exist yet: run `plumb lab init {context.root}` first"
        )
    return LabDriver(store)


def rollout_support(context: TargetContext) -> RolloutSupport | None:
    """The lab's clock, maintenance and metrics for a rollout over lab devices."""
    # Imported here: the lab's telemetry needs the rollouts extra (numpy), its driver not.
    from lab.clock import LabClock
    from lab.runtime import LabBakeClock, LabMaintenance
    from lab.source import LabMetricsSource
    from rollouts.spec import Source
    from rollouts.support import RolloutSupport

    real = _real_support(context)
    if real is not None:
        return real
    path = context.state_dir / LAB_DB
    if not path.exists():
        return None
    with ExitStack() as stack:
        store = LabStore(path)
        stack.callback(store.close)
        clock = LabClock(path)
        stack.callback(clock.close)
        support = RolloutSupport(
            clock=LabBakeClock(clock),
            maintenance=LabMaintenance(context.fleet, store, clock),
            sources={Source.lab: LabMetricsSource(context.fleet, store, clock)},
            close=stack.pop_all().close,
        )
    return support


REAL_CLOCK_DB = "realfabric-clock.db"


def _real_support(context: TargetContext) -> RolloutSupport | None:
    """A rollout over the real-network lab: bakes on a virtual clock of its own (the
    probes judge the network as it is when the wave is assessed), hard faults from
    the data plane (:mod:`lab.realfabric.source`)."""
    from lab.clock import LabClock
    from lab.realfabric.source import DataPlaneSource, FabricMaintenance
    from lab.realfabric.state import load_state
    from lab.runtime import LabBakeClock
    from rollouts.spec import Source
    from rollouts.support import RolloutSupport

    try:
        state = load_state(context.state_dir)
    except ValueError:
        return None  # the driver says what is wrong with the state file
    if state is None or not state.complete:
        return None
    clock = LabClock(context.state_dir / REAL_CLOCK_DB)
    return RolloutSupport(
        clock=LabBakeClock(clock),
        maintenance=FabricMaintenance(),
        sources={Source.dataplane: DataPlaneSource(context.fleet, state)},
        close=clock.close,
    )
