"""Typed evidence behind a wave decision: measurements in ordered phases, noise floors,
and the :class:`WaveAssessment` that a rollout journal stores and ``plumb rollout
status`` shows.

Where it sits: a metrics source (:mod:`rollouts.sources`) yields samples or a
:class:`SourceFailure`; :mod:`rollouts.abortcheck` turns them, with :mod:`rollouts.stats`,
into :class:`Measurement` values; the worst phase decides the wave. A probe that
cannot run is a measurement in phase ``error``, never an exception and never a pass.

Phases, best to worst, and the decision each leads to::

    successful    -> proceed
    inconclusive  -> hold     (too few samples, no noise floor yet: wait for evidence)
    error         -> hold     (the probe could not run, or cannot detect its threshold)
    failed        -> abort    (a hard fault, an absolute limit, a confirmed regression)

``error`` ranks below ``failed`` on purpose: a metric whose source timed out must not
mask another metric that saw a regression.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeAlias

Json: TypeAlias = str | int | float | bool | list["Json"] | dict[str, "Json"] | None
GroupSamples: TypeAlias = Mapping[str, Sequence[float]]
"""Per-target observations of one signal over a window: target name -> values."""


class Phase(StrEnum):
    successful = "successful"
    inconclusive = "inconclusive"
    error = "error"
    failed = "failed"

    @property
    def rank(self) -> int:
        return _PHASE_RANK[self]

    @property
    def decision(self) -> Decision:
        return _PHASE_DECISION[self]


class Decision(StrEnum):
    proceed = "proceed"
    hold = "hold"
    abort = "abort"


_PHASE_RANK = {phase: rank for rank, phase in enumerate(Phase)}
_PHASE_DECISION = {
    Phase.successful: Decision.proceed,
    Phase.inconclusive: Decision.hold,
    Phase.error: Decision.hold,
    Phase.failed: Decision.abort,
}


def worst_phase(phases: Sequence[Phase]) -> Phase:
    """The worst of ``phases``; ``successful`` for none."""
    return max(phases, key=lambda phase: phase.rank, default=Phase.successful)


def json_number(value: float | None) -> Json:
    """JSON has no NaN or infinity: NaN becomes null, infinities their name."""
    if value is None or math.isfinite(value):
        return value
    if math.isnan(value):
        return None
    return "inf" if value > 0 else "-inf"


@dataclass(frozen=True)
class SourceFailure:
    """A metrics source could not answer (query failed, timed out, too few series)."""

    metric: str
    reason: str


@dataclass(frozen=True)
class Measurement:
    """One judged condition: a metric, or one declared hard-fault kind.

    ``samples`` is (wave targets, control targets) that contributed; ``evidence``
    holds everything else a reviewer needs (per-target values, band, resamples)."""

    metric: str
    phase: Phase
    message: str
    statistic: float | None = None
    p_value: float | None = None
    threshold: float | None = None
    noise_floor: float | None = None
    samples: tuple[int, int] | None = None
    evidence: Mapping[str, Json] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Json]:
        return {
            "metric": self.metric,
            "phase": self.phase.value,
            "message": self.message,
            "statistic": json_number(self.statistic),
            "p_value": json_number(self.p_value),
            "threshold": json_number(self.threshold),
            "noise_floor": json_number(self.noise_floor),
            "samples": None if self.samples is None else list(self.samples),
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True)
class NoiseFloor:
    """How far a metric's statistic moves between two groups of healthy controls (A/A).

    ``width`` is the larger of |A/A statistic - neutral| and the distance from neutral
    to the edge of the test's band at alpha; ``value`` puts it on the worse side of
    neutral. A threshold no further out than ``value`` cannot be told from noise:
    the floor is then in phase ``error`` and the metric can never pass or abort."""

    metric: str
    phase: Phase
    message: str
    neutral: float
    value: float | None = None
    width: float | None = None
    statistic: float | None = None
    band: tuple[float, float] | None = None
    threshold: float | None = None
    samples: tuple[int, int] | None = None

    def as_measurement(self) -> Measurement:
        evidence: dict[str, Json] = {"neutral": self.neutral, "width": json_number(self.width)}
        if self.band is not None:
            evidence["band"] = [json_number(self.band[0]), json_number(self.band[1])]
        return Measurement(
            metric=self.metric,
            phase=self.phase,
            message=self.message,
            statistic=self.statistic,
            threshold=self.threshold,
            noise_floor=self.value,
            samples=self.samples,
            evidence=evidence,
        )

    def to_dict(self) -> dict[str, Json]:
        return self.as_measurement().to_dict()


@dataclass(frozen=True)
class WaveAssessment:
    """The decision on one wave and every number behind it.

    ``hard_faults`` is kind -> target -> count for the declared kinds (zeros left out);
    ``reasons`` are the messages of the measurements that did not succeed, worst first."""

    decision: Decision
    measurements: tuple[Measurement, ...]
    hard_faults: Mapping[str, Mapping[str, int]]
    reasons: tuple[str, ...]

    @property
    def phase(self) -> Phase:
        return worst_phase([m.phase for m in self.measurements])

    def to_dict(self) -> dict[str, Json]:
        return {
            "decision": self.decision.value,
            "phase": self.phase.value,
            "reasons": list(self.reasons),
            "hard_faults": {
                kind: {target: count for target, count in sorted(counts.items())}
                for kind, counts in sorted(self.hard_faults.items())
            },
            "measurements": [m.to_dict() for m in self.measurements],
        }


def summarise(measurements: Sequence[Measurement]) -> tuple[Decision, tuple[str, ...]]:
    """The decision of the worst phase, and the non-successful messages, worst first."""
    phase = worst_phase([m.phase for m in measurements])
    failing = sorted(
        (m for m in measurements if m.phase is not Phase.successful),
        key=lambda m: -m.phase.rank,
    )
    reasons = tuple(m.message for m in failing)
    if not reasons:
        reasons = (f"all {len(measurements)} measurements successful",)
    return phase.decision, reasons
