"""The lab fleet as a metrics source: telemetry from :mod:`lab.metrics` for
each target's *current* lab state (so a defect tied to new firmware shows only on
targets where it has landed), on the lab's virtual clock.

* ``Metric.signal`` names a lab signal (``step_time_s``, ``gpu_sm_activity``,
  ``fec_uncorrectable``, ``link_flaps``, ``bgp_down``, ``lossless_discards``,
  ``acceptance``); count signals are given as events per target-hour per sample, so
  a ``rate_difference`` is in events per target-hour;
* a window that ends after the virtual clock has no data yet: a SourceFailure (hold);
* a target that is not in the lab, or has an ``unreachable`` fault, reports nothing
  and is left out of its group;
* hard faults: ``fec_uncorrectable``, ``link_flap``, ``bgp_down``,
  ``lossless_discards`` are summed counts, ``acceptance_failed`` the failed acceptance
  runs; ``unreachable`` and ``unknown`` come from the caller's own observation.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from intent.fleet import Fleet
from lab.clock import LabClock
from lab.fleet import FaultKind
from lab.metrics import (
    HEALTHY,
    SAMPLE_MINUTES,
    Baseline,
    Signal,
    Window,
    lab_minutes,
    lab_time,
    series,
    target_attributes,
)
from lab.store import LabStore
from reconciler.settings import Scalar
from rollouts.evidence import SourceFailure
from rollouts.judge import FaultCounts, MetricSamples
from rollouts.sources import TimeWindow
from rollouts.spec import HardFault, Metric, Source

SIGNAL_OF_FAULT = {
    HardFault.fec_uncorrectable: Signal.fec_uncorrectable,
    HardFault.link_flap: Signal.link_flaps,
    HardFault.bgp_down: Signal.bgp_down,
    HardFault.lossless_discards: Signal.lossless_discards,
    HardFault.acceptance_failed: Signal.acceptance,
}
_PER_HOUR = 60.0 / SAMPLE_MINUTES
CLOCK_TOLERANCE_MINUTES = 1e-6


def inventory_attributes(fleet: Fleet, name: str) -> tuple[dict[str, Scalar], dict[str, str]]:
    """A device's inventory fields a defect can match, and its labels."""
    device = fleet.devices[name]
    fields: dict[str, Scalar] = {
        "name": device.name,
        "role": device.role.value,
        "vendor": device.vendor,
        "model": device.model,
        "platform": device.platform.value,
        "rack": device.rack,
    }
    return fields, dict(device.labels)


class LabMetricsSource:
    """A :class:`~rollouts.sources.MetricsSource` over the lab database."""

    hard_fault_kinds = frozenset(SIGNAL_OF_FAULT)

    def __init__(
        self, fleet: Fleet, store: LabStore, clock: LabClock, *, baseline: Baseline = HEALTHY
    ) -> None:
        self.fleet = fleet
        self.store = store
        self.clock = clock
        self.baseline = baseline

    def _window(self, window: TimeWindow) -> Window | SourceFailure:
        lab = Window(lab_minutes(window.start), lab_minutes(window.end))
        now = self.clock.now()
        if lab.end > now + CLOCK_TOLERANCE_MINUTES:  # datetimes round to microseconds
            return SourceFailure(
                "lab",
                f"window ends {window.end.isoformat()} but the lab clock is at "
                f"{lab_time(now).isoformat()}: no data yet",
            )
        return lab

    def _attributes(self, targets: Collection[str]) -> dict[str, dict[str, Scalar]]:
        """Current attributes of every reachable lab target among ``targets``."""
        running = self.store.read_all_running()
        silent = {f.device for f in self.store.faults_for(None) if f.kind is FaultKind.unreachable}
        out = {}
        for name in targets:
            if name in running and name in self.fleet.devices and name not in silent:
                fields, labels = inventory_attributes(self.fleet, name)
                out[name] = target_attributes(fields, labels, running[name])
        return out

    def _series(
        self, signal: Signal, targets: Sequence[str], window: Window
    ) -> dict[str, tuple[float, ...]]:
        defects = self.clock.defects()
        seed = self.clock.seed
        return {
            name: series(seed, name, attrs, signal, window, defects, self.baseline)
            for name, attrs in self._attributes(targets).items()
        }

    def samples(
        self, metric: Metric, wave: Sequence[str], controls: Sequence[str], window: TimeWindow
    ) -> MetricSamples:
        if metric.source is not Source.lab:
            return SourceFailure(metric.name, f"{metric.source.value} metric asked of the lab")
        try:
            signal = Signal(metric.signal)
        except ValueError:
            known = ", ".join(s.value for s in Signal)
            return SourceFailure(metric.name, f"no lab signal {metric.signal!r} (known: {known})")
        lab = self._window(window)
        if isinstance(lab, SourceFailure):
            return SourceFailure(metric.name, lab.reason)
        scale = _PER_HOUR if signal.is_count else 1.0
        groups = []
        for targets in (wave, controls):
            got = self._series(signal, targets, lab)
            groups.append({t: tuple(v * scale for v in values) for t, values in got.items()})
        return groups[0], groups[1]

    def hard_faults(
        self, kinds: Collection[HardFault], wave: Sequence[str], window: TimeWindow
    ) -> dict[HardFault, FaultCounts]:
        lab = self._window(window)
        out: dict[HardFault, FaultCounts] = {}
        for kind in kinds:
            signal = SIGNAL_OF_FAULT.get(kind)
            if signal is None:
                continue
            if isinstance(lab, SourceFailure):
                out[kind] = SourceFailure(f"hard_fault/{kind.value}", lab.reason)
                continue
            got = self._series(signal, wave, lab)  # no sample: no evidence, left out
            if signal is Signal.acceptance:
                out[kind] = {t: sum(v < 1.0 for v in vs) for t, vs in got.items() if vs}
            else:
                out[kind] = {t: int(sum(vs)) for t, vs in got.items() if vs}
        return out
