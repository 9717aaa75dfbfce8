"""Judging a wave: hard faults at zero tolerance, absolute limits, regressions that are
both significant and practical, the A/A noise floor, and holding on missing evidence.
Step times come from the lab's telemetry model (per-node jitter, log-normal noise)."""

from __future__ import annotations

import functools
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.metrics import Defect, Signal, Window, series
from rollouts import spec
from rollouts.abortcheck import assess_wave, measure_noise_floor
from rollouts.evidence import (
    Decision,
    GroupSamples,
    Measurement,
    NoiseFloor,
    Phase,
    SourceFailure,
    WaveAssessment,
)
from rollouts.judge import MetricSamples
from rollouts.spec import DEFAULT_HARD_FAULTS, Abort, Direction, HardFault, Metric, Statistic
from rollouts.stats import Resampling

NODES = [f"gpu-n{i:02d}" for i in range(1, 33)]
WAVE, CONTROLS, AA_A, AA_B = NODES[:4], NODES[4:12], NODES[12:20], NODES[20:28]
WINDOW = Window(0, 240)
FAST = Resampling(resamples=299)
STEP = Metric(name="step_time", signal="step_time_s", threshold=1.03, min_samples=4)
SM = Metric(
    name="sm_activity",
    signal="gpu_sm_activity",
    threshold=0.97,
    direction=Direction.lower_is_worse,
    min_samples=4,
)
NO_FAULTS = {kind: {t: 0 for t in WAVE} for kind in HardFault}


def telemetry(
    targets: list[str], signal: Signal = Signal.step_time_s, seed: int = 0, **effects: float
) -> dict[str, tuple[float, ...]]:
    """Lab telemetry of ``targets``; ``effects`` (a defect on every one) make them worse."""
    defects = [Defect.with_effects({"role": "gpu-node"}, effects)] if effects else []
    attrs = {"role": "gpu-node"}
    return {t: series(seed, t, attrs, signal, WINDOW, defects) for t in targets}


@functools.cache
def floor(metric: Metric = STEP, seed: int = 0) -> NoiseFloor:
    """The A/A floor of two healthy groups of 8 (exact: 12,870 partitions), once per metric."""
    signal = Signal(metric.signal)
    return measure_noise_floor(
        metric, telemetry(AA_A, signal, seed), telemetry(AA_B, signal, seed), seed, resampling=FAST
    )


def assess(
    samples: MetricSamples,
    metric: Metric = STEP,
    *,
    faults: dict[HardFault, dict[str, int]] | None = None,
    floors: dict[str, NoiseFloor] | None = None,
    seed: int = 0,
    aa: bool = True,
) -> WaveAssessment:
    return assess_wave(
        Abort(metrics=(metric,), aa_noise_floor=aa),
        {metric.name: samples},
        NO_FAULTS if faults is None else faults,
        {metric.name: floor(metric)} if floors is None else floors,
        seed,
        targets=WAVE,
        resampling=FAST,
    )


def measurement(result: WaveAssessment, name: str = "step_time") -> Measurement:
    return next(m for m in result.measurements if m.metric == name)


def test_healthy_wave_proceeds() -> None:
    """Wave and controls alike, no hard fault: proceed, every measurement successful."""
    result = assess((telemetry(WAVE), telemetry(CONTROLS)))
    assert result.decision is Decision.proceed
    assert all(m.phase is Phase.successful for m in result.measurements)
    assert result.reasons == (f"all {len(DEFAULT_HARD_FAULTS) + 1} measurements successful",)
    assert "within threshold 1.03" in measurement(result).message


def test_six_percent_step_time_regression_aborts_with_its_numbers() -> None:
    """A 6 % slower wave: statistic, p-value and per-target values are in the evidence."""
    result = assess((telemetry(WAVE, step_time_factor=1.06), telemetry(CONTROLS)))
    step = measurement(result)
    assert result.decision is Decision.abort and step.phase is Phase.failed
    assert step.statistic is not None and 1.04 < step.statistic < 1.08
    assert step.p_value is not None and step.p_value < 0.05
    assert step.samples == (4, 8) and step.noise_floor is not None
    assert re.search(r"median_ratio 1\.0\d+ > threshold 1\.03 and p 0\.00\d+ < alpha", step.message)
    assert "exact permutation, 4 vs 8 targets" in step.message
    assert set(step.evidence["wave"]) == set(WAVE)  # type: ignore[arg-type]
    assert step.evidence["exact"] is True and step.evidence["resamples"] == 495
    assert result.reasons[0] == step.message


def test_half_percent_regression_under_the_threshold_proceeds() -> None:
    """0.5 % slower is below the practical threshold of 3 %: proceed."""
    result = assess((telemetry(WAVE, step_time_factor=1.005), telemetry(CONTROLS)))
    assert result.decision is Decision.proceed
    assert "within threshold" in measurement(result).message


def test_a_regression_past_the_threshold_but_not_significant_holds() -> None:
    """Statistic past the threshold, but noise this large may explain it: inconclusive,
    the wave holds for more evidence rather than passing."""
    wave = {t: (v,) for t, v in zip(WAVE, (1.0, 1.9, 2.1, 3.0), strict=True)}
    controls = {t: (v,) for t, v in zip(CONTROLS, (0.5, 1, 1.5, 2, 2.5, 3, 3.5, 1.8), strict=True)}
    result = assess((wave, controls), aa=False, floors={})
    step = measurement(result)
    assert result.decision is Decision.hold and step.phase is Phase.inconclusive
    assert step.statistic is not None and step.statistic > 1.03
    assert "but not significant" in step.message


def test_threshold_inside_the_aa_noise_floor_is_refused() -> None:
    """A 1 % threshold against ~1.5 % node jitter is undetectable: the floor says so."""
    tight = STEP.model_copy(update={"threshold": 1.01})
    aa = floor(tight)
    assert aa.phase is Phase.error and aa.value is not None and aa.value >= 1.01
    assert re.fullmatch(
        r"step_time: threshold 1\.01 inside the A/A noise floor 1\.0\d+: undetectable", aa.message
    )
    result = assess((telemetry(WAVE), telemetry(CONTROLS)), tight, floors={"step_time": aa})
    assert result.decision is Decision.hold and measurement(result).phase is Phase.error


def test_detectable_threshold_floor_reports_its_band() -> None:
    """A 3 % threshold lies past the floor; the floor carries statistic, band, sizes."""
    aa = floor()
    assert aa.phase is Phase.successful and aa.band is not None and aa.samples == (8, 8)
    assert aa.value is not None and 1.0 < aa.value < 1.03 and "is detectable" in aa.message
    json.dumps(aa.to_dict(), allow_nan=False)


def test_noise_floor_with_too_few_controls_is_inconclusive() -> None:
    """An A/A run on 3 targets per group measures nothing."""
    aa = measure_noise_floor(STEP, telemetry(AA_A[:3]), telemetry(AA_B), 0, resampling=FAST)
    assert aa.phase is Phase.inconclusive and aa.value is None
    assert "3 targets < min_samples 4" in aa.message


def test_fewer_targets_than_min_samples_holds() -> None:
    """3 wave targets with min_samples 4 hold, even when they look 6 % slower."""
    result = assess((telemetry(WAVE[:3], step_time_factor=1.06), telemetry(CONTROLS)))
    step = measurement(result)
    assert result.decision is Decision.hold and step.phase is Phase.inconclusive
    assert step.message == "step_time: 3 wave targets < min_samples 4"
    assert step.p_value is None and step.samples == (3, 8)


def test_targets_without_data_do_not_count() -> None:
    """A target that reported nothing (or only NaN) is not a sample."""
    wave: GroupSamples = {**telemetry(WAVE[:3]), WAVE[3]: (float("nan"),)}
    result = assess((wave, telemetry(CONTROLS)))
    assert result.decision is Decision.hold and measurement(result).samples == (3, 8)


def test_source_error_holds() -> None:
    """A query that failed is an error measurement, and the wave holds."""
    result = assess(SourceFailure("step_time", "prometheus: query timed out after 30s"))
    step = measurement(result)
    assert result.decision is Decision.hold and step.phase is Phase.error
    assert step.message == "step_time: source error: prometheus: query timed out after 30s"


def test_metric_missing_from_the_samples_holds() -> None:
    """No answer at all for a declared metric is an error too."""
    result = assess_wave(Abort(metrics=(STEP,)), {}, NO_FAULTS, {}, 0)
    assert result.decision is Decision.hold
    assert measurement(result).message == "step_time: source error: no samples from the source"


def test_missing_noise_floor_holds_when_required() -> None:
    """aa_noise_floor: true and no floor measured yet: hold."""
    result = assess((telemetry(WAVE), telemetry(CONTROLS)), floors={})
    assert result.decision is Decision.hold
    assert "no A/A noise floor measured" in measurement(result).message


def test_fec_uncorrectable_on_a_wave_target_aborts_at_zero_tolerance() -> None:
    """One uncorrectable codeword aborts though step time is fine."""
    faults = {**NO_FAULTS, HardFault.fec_uncorrectable: {**dict.fromkeys(WAVE, 0), WAVE[2]: 1}}
    result = assess((telemetry(WAVE), telemetry(CONTROLS)), faults=faults)
    fec = measurement(result, "hard_fault/fec_uncorrectable")
    assert result.decision is Decision.abort and fec.phase is Phase.failed
    assert fec.message == f"fec_uncorrectable: failed (1) > failure_limit (0) on {WAVE[2]} (1)"
    assert measurement(result).phase is Phase.successful
    assert result.hard_faults["fec_uncorrectable"] == {WAVE[2]: 1}


def test_hard_fault_without_evidence_holds() -> None:
    """A declared kind nobody counted, or counted for part of the wave only, holds."""
    faults = {k: v for k, v in NO_FAULTS.items() if k is not HardFault.link_flap}
    faults[HardFault.acceptance_failed] = {t: 0 for t in WAVE[:3]}
    result = assess((telemetry(WAVE), telemetry(CONTROLS)), faults=faults)
    assert result.decision is Decision.hold
    assert "link_flap: no evidence" in result.reasons
    assert f"acceptance_failed: no evidence for {WAVE[3]}" in result.reasons


def test_hard_fault_source_error_holds() -> None:
    """A hard-fault probe that failed is an error, not zero faults."""
    faults = {**NO_FAULTS, HardFault.bgp_down: SourceFailure("bgp", "timeout")}
    result = assess_wave(Abort(), {}, faults, {}, 0)
    assert result.decision is Decision.hold
    assert result.reasons == ("bgp_down: source error: timeout",)


def test_undeclared_hard_fault_kinds_are_not_judged() -> None:
    """Only the kinds the spec declares count."""
    faults = {HardFault.link_flap: {WAVE[0]: 2}}
    result = assess_wave(Abort(hard_faults=()), {}, faults, {}, 0)
    assert result.decision is Decision.proceed and result.measurements == ()


def test_absolute_max_aborts_even_without_enough_samples() -> None:
    """A wave target past absolute_max aborts whatever the statistics say."""
    capped = STEP.model_copy(update={"absolute_max": 1.3})
    wave = {**telemetry(WAVE[:2]), WAVE[2]: (1.5, 1.6, 1.55)}
    result = assess((wave, telemetry(CONTROLS)), capped)
    step = measurement(result)
    assert result.decision is Decision.abort and step.phase is Phase.failed
    assert step.message == f"step_time: {WAVE[2]} 1.55 > absolute_max 1.3"


def test_absolute_min_aborts() -> None:
    """An SM activity under absolute_min on a wave target aborts."""
    floored = SM.model_copy(update={"absolute_min": 0.5})
    wave = {**telemetry(WAVE[:3], Signal.gpu_sm_activity), WAVE[3]: (0.2, 0.3)}
    result = assess((wave, telemetry(CONTROLS, Signal.gpu_sm_activity)), floored)
    assert result.decision is Decision.abort
    assert f"{WAVE[3]} 0.25 < absolute_min 0.5" in measurement(result, "sm_activity").message


def test_lower_is_worse_metric_aborts_on_a_drop() -> None:
    """SM activity 8 % lower on the wave: a regression when lower is worse."""
    wave = telemetry(WAVE, Signal.gpu_sm_activity, sm_activity_factor=0.92)
    result = assess((wave, telemetry(CONTROLS, Signal.gpu_sm_activity)), SM)
    sm = measurement(result, "sm_activity")
    assert result.decision is Decision.abort and "< threshold 0.97" in sm.message


def test_rate_difference_on_link_flaps() -> None:
    """Link flaps 3 per hour above controls abort on a 1-per-hour threshold."""
    flaps = Metric(
        name="flaps",
        signal="link_flaps",
        statistic=Statistic.rate_difference,
        threshold=1.0,
        min_samples=4,
    )
    wave = {t: (3.0, 4.0, 2.0) for t in WAVE}
    controls = {t: (0.0, 0.0, 0.0) for t in CONTROLS}
    result = assess((wave, controls), flaps, aa=False, floors={})
    got = measurement(result, "flaps")
    assert result.decision is Decision.abort and got.statistic == 3.0


def test_bootstrap_metric_aborts_on_regression_and_proceeds_when_healthy() -> None:
    """The bootstrap band judges the same way: it excludes 1 only for the slow wave."""
    boot = STEP.model_copy(update={"test": spec.TestKind.bootstrap})
    bad = assess((telemetry(WAVE, step_time_factor=1.06), telemetry(CONTROLS)), boot)
    good = assess((telemetry(WAVE), telemetry(CONTROLS)), boot)
    assert bad.decision is Decision.abort and "band [1.0" in measurement(bad).message
    assert good.decision is Decision.proceed


def test_ratio_of_non_positive_values_is_an_error() -> None:
    """A ratio statistic over zeros cannot be judged: error, hold."""
    wave = {t: (0.0,) for t in WAVE}
    result = assess((wave, telemetry(CONTROLS)), aa=False, floors={})
    assert result.decision is Decision.hold
    assert "median_ratio needs positive values" in measurement(result).message


def test_a_failed_metric_is_not_masked_by_another_metrics_error() -> None:
    """One regression and one failing source: abort (failed ranks above error)."""
    abort = Abort(metrics=(STEP, SM), hard_faults=(), aa_noise_floor=False)
    samples: dict[str, MetricSamples] = {
        "step_time": (telemetry(WAVE, step_time_factor=1.06), telemetry(CONTROLS)),
        "sm_activity": SourceFailure("sm_activity", "no series"),
    }
    result = assess_wave(abort, samples, {}, {}, 0, resampling=FAST)
    assert result.decision is Decision.abort
    assert result.reasons[0].startswith("step_time:") and result.reasons[1].startswith("sm_")


def test_assessment_is_deterministic_for_a_seed_and_json_serialisable() -> None:
    """Same seed, same numbers (Monte Carlo included); the journal form is strict JSON."""
    monte_carlo = Resampling(resamples=199, exact_limit=0)

    def run(seed: int) -> WaveAssessment:
        return assess_wave(
            Abort(metrics=(STEP,), aa_noise_floor=False),
            {"step_time": (telemetry(WAVE, step_time_factor=1.02), telemetry(CONTROLS))},
            NO_FAULTS,
            {},
            seed,
            resampling=monte_carlo,
        )

    first = run(7)
    assert run(7).to_dict() == first.to_dict()
    assert measurement(run(8)).p_value != measurement(first).p_value
    text = json.dumps(first.to_dict(), allow_nan=False)
    assert json.loads(text)["measurements"][-1]["evidence"]["exact"] is False


@settings(max_examples=3, deadline=None, derandomize=True)
@given(base=st.integers(0, 2**31))
def test_aa_false_abort_rate_stays_below_alpha(base: int) -> None:
    """Healthy waves over 150 lab seeds, judged on significance alone (threshold at
    neutral): aborts stay under alpha 0.05 plus a binomial tolerance of 5 points."""
    neutral = STEP.model_copy(update={"threshold": 1.0})
    abort = Abort(metrics=(neutral,), hard_faults=(), aa_noise_floor=False)
    resampling = Resampling(resamples=199, exact_limit=0)
    aborts = 0
    for trial in range(150):
        seed = base + trial
        samples = {"step_time": (telemetry(WAVE, seed=seed), telemetry(CONTROLS, seed=seed))}
        result = assess_wave(abort, samples, {}, {}, seed, resampling=resampling)
        aborts += result.decision is Decision.abort
    assert aborts / 150 <= 0.05 + 0.05
