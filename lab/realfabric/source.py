"""The real-network lab as a metrics source: hard faults from the network itself.

``bgp_down`` counts each wave target's expected sessions that are not Established;
``path_mtu`` counts the black-holed DF probes between racks whose path may cross the
target (see :mod:`lab.realfabric.dataplane`). Both are read when the wave is judged,
after a settle time for sessions a change reset; a target whose evidence could not be
read is left out, so the wave holds rather than passes. The lab answers no sampled
metrics: declare the data-plane faults under ``abort.hard_faults``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from intent.fleet import Fleet
from lab.realfabric.dataplane import fault_counts, verify
from lab.realfabric.state import FabricState
from rollouts.evidence import SourceFailure
from rollouts.judge import FaultCounts, MetricSamples
from rollouts.sources import TimeWindow
from rollouts.spec import HardFault, Metric

DATA_PLANE_FAULTS = frozenset({HardFault.bgp_down, HardFault.path_mtu})


class FabricMaintenance:
    """The real-network lab reboots nothing and runs no acceptance test: its devices
    are namespaces, and a change that needs either cannot be rolled out on it."""

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices, "the real-network lab cannot reboot a device")

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        return dict.fromkeys(devices, "the real-network lab runs no acceptance test")


class DataPlaneSource:
    """Hard faults of the real-network lab's fabric, probed at judgement."""

    hard_fault_kinds = DATA_PLANE_FAULTS

    def __init__(self, fleet: Fleet, state: FabricState, settle_s: float = 30.0) -> None:
        self.fleet = fleet
        self.state = state
        self.settle_s = settle_s

    def samples(
        self, metric: Metric, wave: Sequence[str], controls: Sequence[str], window: TimeWindow
    ) -> MetricSamples:
        return SourceFailure(
            metric.name, "the real-network lab answers hard faults only (bgp_down, path_mtu)"
        )

    def hard_faults(
        self, kinds: Collection[HardFault], wave: Sequence[str], window: TimeWindow
    ) -> dict[HardFault, FaultCounts]:
        wanted = [k for k in kinds if k in DATA_PLANE_FAULTS]
        if not wanted:
            return {}
        verification = verify(self.fleet, self.state, settle_s=self.settle_s)
        sessions, paths, _ = fault_counts(verification, wave)
        counts: dict[HardFault, FaultCounts] = {
            HardFault.bgp_down: sessions,
            HardFault.path_mtu: paths,
        }
        return {k: counts[k] for k in wanted}
