"""One measurement per abort condition: a declared hard-fault kind, or one metric's
samples judged against its threshold, absolute limits and noise floor. Pure; the
precedence between measurements is :mod:`rollouts.abortcheck`'s business.

Every condition that cannot be judged becomes a measurement in a holding phase with
the reason in its message; nothing here raises for bad or missing evidence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from rollouts import stats
from rollouts.evidence import (
    GroupSamples,
    Json,
    Measurement,
    NoiseFloor,
    Phase,
    SourceFailure,
    json_number,
    worst_phase,
)
from rollouts.spec import Direction, HardFault, Metric, Statistic, TestKind

MetricSamples = tuple[GroupSamples, GroupSamples] | SourceFailure
"""(wave targets, control targets) for one metric, or why the source could not answer."""
FaultCounts = Mapping[str, int] | SourceFailure
"""Wave target -> count of one hard-fault kind, or why the source could not count."""
_RATIOS = (Statistic.median_ratio, Statistic.mean_ratio)


def fmt(value: float) -> str:
    return f"{value:.4g}"


def reduce_targets(metric: Metric, group: GroupSamples) -> dict[str, float]:
    """One value per target, by name (targets without a finite sample are left out)."""
    out = {}
    for target in sorted(group):
        value = stats.target_value(metric.statistic, group[target])
        if value is not None:
            out[target] = value
    return out


def ratio_problem(metric: Metric, *groups: Mapping[str, float]) -> str | None:
    """Why a ratio statistic cannot be taken of these values (a value at or below 0)."""
    if metric.statistic not in _RATIOS:
        return None
    bad = [f"{t} {fmt(v)}" for g in groups for t, v in g.items() if v <= 0]
    return f"{metric.statistic.value} needs positive values: {', '.join(bad[:5])}" if bad else None


def run_test(
    metric: Metric,
    wave: list[float],
    controls: list[float],
    seed: int,
    resampling: stats.Resampling,
) -> stats.TestOutcome:
    """The metric's pre-registered test, seeded by the rollout seed and the metric name."""
    rng = stats.generator(seed, metric.name)
    args: Any = (metric.statistic, metric.direction, wave, controls)
    if metric.test is TestKind.bootstrap:
        return stats.bootstrap_test(
            *args, alpha=metric.alpha, rng=rng, resamples=resampling.resamples
        )
    return stats.permutation_test(
        *args,
        alpha=metric.alpha,
        rng=rng,
        resamples=resampling.resamples,
        exact_limit=resampling.exact_limit,
    )


def hard_fault_measurement(
    kind: HardFault, counts: FaultCounts | None, targets: Collection[str] | None
) -> Measurement:
    """Zero tolerance: any count above 0 fails; no evidence (for any target) holds."""
    name = f"hard_fault/{kind.value}"
    if counts is None:
        return Measurement(name, Phase.inconclusive, f"{kind.value}: no evidence", threshold=0)
    if isinstance(counts, SourceFailure):
        message = f"{kind.value}: source error: {counts.reason}"
        return Measurement(name, Phase.error, message, threshold=0)
    hits = {t: c for t, c in sorted(counts.items()) if c > 0}
    evidence: dict[str, Json] = {"counts": dict(hits), "targets": len(counts), "limit": 0}
    if hits:
        total = sum(hits.values())
        where = ", ".join(f"{t} ({c})" for t, c in list(hits.items())[:8])
        message = f"{kind.value}: failed ({total}) > failure_limit (0) on {where}"
        return Measurement(name, Phase.failed, message, total, threshold=0, evidence=evidence)
    missing = sorted(set(targets or ()) - set(counts))
    if missing:
        evidence["missing"] = list(missing)
        message = f"{kind.value}: no evidence for {', '.join(missing[:8])}"
        return Measurement(name, Phase.inconclusive, message, threshold=0, evidence=evidence)
    message = f"{kind.value}: 0 on {len(counts)} targets"
    return Measurement(name, Phase.successful, message, 0, threshold=0, evidence=evidence)


def _absolute(metric: Metric, wave: Mapping[str, float]) -> list[str]:
    out = []
    for target, value in wave.items():
        if metric.absolute_max is not None and value > metric.absolute_max:
            out.append(f"{target} {fmt(value)} > absolute_max {fmt(metric.absolute_max)}")
        if metric.absolute_min is not None and value < metric.absolute_min:
            out.append(f"{target} {fmt(value)} < absolute_min {fmt(metric.absolute_min)}")
    return out


def _verdict(
    metric: Metric, outcome: stats.TestOutcome, sizes: tuple[int, int]
) -> tuple[Phase, str]:
    """Failed only when the regression is both significant and past the threshold;
    past the threshold but not significant is inconclusive (the wave holds and bakes
    again for more evidence), never a pass."""
    kind = f"{'exact ' if outcome.exact else ''}{outcome.test.value}"
    how = f"{kind}, {sizes[0]} vs {sizes[1]} targets"
    stat = f"{metric.statistic.value} {fmt(outcome.statistic)}"
    threshold = f"threshold {fmt(metric.threshold)}"
    p = f"p {fmt(outcome.p_value)}"
    if outcome.test is TestKind.bootstrap:
        p += f", band [{fmt(outcome.band[0])}, {fmt(outcome.band[1])}]"
    if not stats.beyond(metric.direction, outcome.statistic, metric.threshold):
        return Phase.successful, f"{stat} within {threshold} ({p}, {how})"
    if not outcome.significant:
        why = f"({p}, alpha {metric.alpha}, {how})"
        return Phase.inconclusive, f"{stat} past {threshold} but not significant {why}"
    sign = ">" if metric.direction is Direction.higher_is_worse else "<"
    why = f"{p} < alpha {metric.alpha} ({how})"
    return Phase.failed, f"{stat} {sign} {threshold} and {why}: regression"


def metric_measurement(
    metric: Metric,
    samples: MetricSamples | None,
    floor: NoiseFloor | None,
    require_floor: bool,
    seed: int,
    resampling: stats.Resampling,
) -> Measurement:
    """Judge one metric; its phase is the worst of its checks (absolute limits, noise
    floor, sample counts, the test), its message the checks in that phase."""
    name = metric.name
    if samples is None or isinstance(samples, SourceFailure):
        reason = "no samples from the source" if samples is None else samples.reason
        message = f"{name}: source error: {reason}"
        return Measurement(name, Phase.error, message, threshold=metric.threshold)
    wave, controls = reduce_targets(metric, samples[0]), reduce_targets(metric, samples[1])
    sizes = (len(wave), len(controls))
    checks = [(Phase.failed, breach) for breach in _absolute(metric, wave)]
    evidence: dict[str, Json] = {
        "statistic": metric.statistic.value,
        "test": metric.test.value,
        "direction": metric.direction.value,
        "alpha": metric.alpha,
        "wave": dict(wave),
        "controls": dict(controls),
    }
    if floor is not None:
        evidence["noise_floor"] = floor.to_dict()
        if floor.phase is not Phase.successful:
            checks.append((floor.phase, floor.message.removeprefix(f"{name}: ")))
    elif require_floor:
        checks.append((Phase.inconclusive, "no A/A noise floor measured"))
    problem = ratio_problem(metric, wave, controls)
    if problem is not None:
        checks.append((Phase.error, problem))
    short = [
        f"{n} {group} targets"
        for n, group in zip(sizes, ("wave", "control"), strict=True)
        if n < metric.min_samples
    ]
    if short:
        checks.append(
            (Phase.inconclusive, f"{' and '.join(short)} < min_samples {metric.min_samples}")
        )
    outcome = None
    if problem is None and not short:
        outcome = run_test(metric, list(wave.values()), list(controls.values()), seed, resampling)
        checks.append(_verdict(metric, outcome, sizes))
        evidence.update(
            p_value=outcome.p_value,
            band=[json_number(outcome.band[0]), json_number(outcome.band[1])],
            exact=outcome.exact,
            resamples=outcome.resamples,
        )
    phase = worst_phase([p for p, _ in checks])
    evidence["checks"] = [{"phase": p.value, "message": m} for p, m in checks]
    return Measurement(
        name,
        phase,
        f"{name}: " + "; ".join(m for p, m in checks if p is phase),
        statistic=None if outcome is None else outcome.statistic,
        p_value=None if outcome is None else outcome.p_value,
        threshold=metric.threshold,
        noise_floor=None if floor is None else floor.value,
        samples=sizes,
        evidence=evidence,
    )
