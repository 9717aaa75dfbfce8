"""Judge one wave against its pre-declared abort conditions (pure: samples in, a
:class:`~rollouts.evidence.WaveAssessment` out), and size the A/A noise floor that
makes those conditions meaningful.

Precedence, by phase (the worst phase decides, see :mod:`rollouts.evidence`):

1. **hard faults** abort at zero tolerance: any count above 0 on a wave target for a
   declared kind (``fec_uncorrectable: failed (3) > failure_limit (0) on ...``);
2. **absolute limits** abort: a wave target whose value passes ``absolute_max`` or
   ``absolute_min``, whatever the statistics say;
3. a **regression** aborts only when it is both statistically significant (p < alpha,
   or the bootstrap band excludes the neutral value) and practically significant
   (the statistic past the threshold);
4. **missing evidence holds**: a source error, a hard-fault kind without counts,
   fewer than ``min_samples`` targets in either group, no A/A noise floor when the
   spec requires one, a threshold inside the floor.

Anything else proceeds. The per-condition judges are in :mod:`rollouts.judge`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from inventory.extras import optional_imports

with optional_imports():
    import numpy as np

from rollouts import stats
from rollouts.evidence import (
    GroupSamples,
    NoiseFloor,
    Phase,
    SourceFailure,
    WaveAssessment,
    summarise,
)
from rollouts.judge import (
    FaultCounts,
    MetricSamples,
    fmt,
    hard_fault_measurement,
    metric_measurement,
    ratio_problem,
    reduce_targets,
)
from rollouts.spec import Abort, Direction, HardFault, Metric, TestKind

__all__ = ["FaultCounts", "MetricSamples", "assess_wave", "measure_noise_floor"]


def _aa_band(
    metric: Metric, a: list[float], b: list[float], seed: int, resampling: stats.Resampling
) -> tuple[float, float]:
    """What chance alone does to the statistic at alpha, on each side of neutral."""
    rng = stats.generator(seed, f"aa/{metric.name}")
    if metric.test is TestKind.bootstrap:
        low, high, _ = stats.bootstrap_band(
            metric.statistic,
            a,
            b,
            confidence=1.0 - 2 * metric.alpha,
            side="two-sided",
            rng=rng,
            resamples=resampling.resamples,
        )
        return low, high
    outcome = stats.permutation_test(
        metric.statistic,
        metric.direction,
        a,
        b,
        alpha=metric.alpha,
        rng=rng,
        resamples=resampling.resamples,
        exact_limit=resampling.exact_limit,
    )
    return outcome.band


def measure_noise_floor(
    metric: Metric,
    control_a: GroupSamples,
    control_b: GroupSamples,
    seed: int,
    *,
    resampling: stats.Resampling | None = None,
) -> NoiseFloor:
    """Compare two groups of healthy controls exactly as a wave would be compared (A/A).

    The floor's width is the larger of |A/A statistic - neutral| and the distance from
    neutral to the test's band at alpha (permutation: the null distribution's alpha
    and 1 - alpha quantiles; bootstrap: the 1 - 2 alpha percentile band). Size the
    groups like the waves to come: the floor shrinks as groups grow.

    Phase ``successful`` when the threshold lies past the floor, ``error`` when it does
    not (undetectable), ``inconclusive`` when a group has fewer than ``min_samples``."""
    resampling = resampling or stats.Resampling()
    middle = stats.neutral(metric.statistic)
    a, b = reduce_targets(metric, control_a), reduce_targets(metric, control_b)
    sizes = (len(a), len(b))
    problem, phase = ratio_problem(metric, a, b), Phase.error
    if min(sizes) < metric.min_samples:
        problem = f"{min(sizes)} targets < min_samples {metric.min_samples}"
        phase = Phase.inconclusive
    if problem is not None:
        message = f"{metric.name}: A/A noise floor not measured: {problem}"
        return NoiseFloor(
            metric.name, phase, message, middle, threshold=metric.threshold, samples=sizes
        )
    xs, ys = list(a.values()), list(b.values())
    observed = float(stats.group_statistic(metric.statistic, np.asarray(xs), np.asarray(ys)))
    low, high = _aa_band(metric, xs, ys, seed, resampling)
    width = max(abs(observed - middle), abs(low - middle), abs(high - middle))
    value = middle + width if metric.direction is Direction.higher_is_worse else middle - width
    if stats.beyond(metric.direction, metric.threshold, value):
        phase = Phase.successful
        message = (
            f"{metric.name}: A/A noise floor {fmt(value)} ({metric.statistic.value} "
            f"{fmt(observed)}, band [{fmt(low)}, {fmt(high)}], {sizes[0]} vs {sizes[1]} "
            f"controls); threshold {fmt(metric.threshold)} is detectable"
        )
    else:
        message = (
            f"{metric.name}: threshold {fmt(metric.threshold)} inside the A/A noise floor "
            f"{fmt(value)}: undetectable"
        )
    return NoiseFloor(
        metric.name,
        phase,
        message,
        middle,
        value=value,
        width=width,
        statistic=observed,
        band=(low, high),
        threshold=metric.threshold,
        samples=sizes,
    )


def assess_wave(
    abort: Abort,
    samples_by_metric: Mapping[str, MetricSamples],
    hard_fault_counts: Mapping[HardFault, FaultCounts],
    noise_floors: Mapping[str, NoiseFloor],
    seed: int,
    *,
    targets: Collection[str] | None = None,
    resampling: stats.Resampling | None = None,
) -> WaveAssessment:
    """Judge a wave: one measurement per declared hard-fault kind, then one per metric.

    ``samples_by_metric`` and ``noise_floors`` are keyed by metric name;
    ``hard_fault_counts`` counts per wave target (when ``targets`` is given, a kind
    that does not report every one of them holds). Deterministic for ``seed``."""
    resampling = resampling or stats.Resampling()
    measurements = [
        hard_fault_measurement(kind, hard_fault_counts.get(kind), targets)
        for kind in abort.hard_faults
    ]
    for metric in abort.metrics:
        measurements.append(
            metric_measurement(
                metric,
                samples_by_metric.get(metric.name),
                noise_floors.get(metric.name),
                abort.aa_noise_floor,
                seed,
                resampling,
            )
        )
    decision, reasons = summarise(measurements)
    faults = {}
    for kind in abort.hard_faults:
        counts = hard_fault_counts.get(kind)
        if counts is not None and not isinstance(counts, SourceFailure):
            faults[kind.value] = {t: c for t, c in sorted(counts.items()) if c > 0}
    return WaveAssessment(decision, tuple(measurements), faults, reasons)
