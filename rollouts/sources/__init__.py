"""Where abort conditions get their evidence: a :class:`MetricsSource` answers, for one
metric and a time window, per-target samples of the wave and of its controls, and
per-target hard-fault counts. The lab fleet's source is :mod:`lab.source`;
a Prometheus source implements the same protocol.

The contract that keeps "hold on missing evidence" true: a source never raises for a
probe that cannot run. A query that fails, times out or returns too few series
answers a :class:`~rollouts.evidence.SourceFailure` (the metric's measurement is then
in phase ``error`` and the wave holds); a target with no data is left out of its
group (too few targets holds). :func:`collect` enforces it for any source.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from rollouts.evidence import SourceFailure
from rollouts.judge import FaultCounts, MetricSamples
from rollouts.spec import Abort, HardFault, Metric, Source


@dataclass(frozen=True)
class TimeWindow:
    """``[start, end)``, timezone-aware."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("a metrics window needs timezone-aware times")
        if self.end < self.start:
            raise ValueError(f"window ends ({self.end}) before it starts ({self.start})")

    @classmethod
    def ending(cls, end: datetime, minutes: float) -> TimeWindow:
        return cls(end - timedelta(minutes=minutes), end)


class MetricsSource(Protocol):
    """Evidence for abort conditions from one kind of backend."""

    @property
    def hard_fault_kinds(self) -> frozenset[HardFault]:
        """The hard-fault kinds this source can count."""
        ...

    def samples(
        self, metric: Metric, wave: Sequence[str], controls: Sequence[str], window: TimeWindow
    ) -> MetricSamples:
        """(wave target -> samples, control target -> samples), or a SourceFailure."""
        ...

    def hard_faults(
        self, kinds: Collection[HardFault], wave: Sequence[str], window: TimeWindow
    ) -> dict[HardFault, FaultCounts]:
        """For each of ``kinds`` this source counts: wave target -> count, or a failure."""
        ...


@dataclass(frozen=True)
class Evidence:
    """Everything :func:`rollouts.abortcheck.assess_wave` needs from the sources."""

    samples: dict[str, MetricSamples]
    hard_faults: dict[HardFault, FaultCounts]


def _failure(name: str, exc: Exception) -> SourceFailure:
    return SourceFailure(name, f"{type(exc).__name__}: {exc}")


def collect(
    sources: Mapping[Source, MetricsSource],
    abort: Abort,
    wave: Sequence[str],
    controls: Sequence[str],
    window: TimeWindow,
    observed: Mapping[HardFault, FaultCounts] | None = None,
) -> Evidence:
    """Ask each metric's source for samples and every source for the hard faults it
    counts; ``observed`` adds what the caller saw itself (``unreachable``,
    ``unknown`` from observing the wave's devices). Never raises for a failing source:
    an exception from a source becomes a SourceFailure, so the wave holds."""
    samples: dict[str, MetricSamples] = {}
    for metric in abort.metrics:
        source = sources.get(metric.source)
        if source is None:
            samples[metric.name] = SourceFailure(
                metric.name, f"no {metric.source.value} metrics source is configured"
            )
            continue
        try:  # a broken probe holds the wave; it must not crash the rollout
            samples[metric.name] = source.samples(metric, wave, controls, window)
        except Exception as exc:
            samples[metric.name] = _failure(metric.name, exc)
    faults: dict[HardFault, FaultCounts] = dict(observed or {})
    for source in sources.values():
        kinds = [k for k in abort.hard_faults if k in source.hard_fault_kinds and k not in faults]
        if not kinds:
            continue
        try:
            faults.update(source.hard_faults(kinds, wave, window))
        except Exception as exc:
            faults.update({kind: _failure(f"hard_fault/{kind.value}", exc) for kind in kinds})
    return Evidence(samples, faults)
