"""The assessing step of a rollout wave: which targets are judged (the wave's, plus
earlier passed waves' when the wave is smaller than a metric's ``min_samples``), which
controls they are compared with, the A/A noise floor on those controls, and the
decision journaled with its evidence."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from reconciler.loop import Observation, observe_all
from reconciler.settings import Scalar, State
from reconciler.state.journal import Lifecycle, TargetRow, TargetStatus, WaveRow, WaveStatus
from rollouts.abortcheck import assess_wave, measure_noise_floor
from rollouts.evidence import (
    Decision,
    Json,
    Measurement,
    NoiseFloor,
    Phase,
    WaveAssessment,
    summarise,
)
from rollouts.judge import FaultCounts, MetricSamples
from rollouts.judgeable import short_metrics
from rollouts.nodes import Context
from rollouts.runtime import Runtime
from rollouts.sources import TimeWindow, collect
from rollouts.spec import HardFault


def at(state: State | None, wanted: Mapping[str, Scalar]) -> bool:
    return state is not None and all(state.get(p) == v for p, v in wanted.items())


# -- the wave steps ---------------------------------------------------------------------


def _in_passed_waves(
    rows: Sequence[TargetRow], waves: Sequence[WaveRow], wave: int
) -> list[TargetRow]:
    """Targets changed in earlier waves that passed and still in service, latest first."""
    passed = {w.number for w in waves if w.status is WaveStatus.passed and w.number < wave}
    found = [
        r
        for r in rows
        if r.wave in passed
        and r.status is TargetStatus.applied
        and r.lifecycle in (Lifecycle.in_service, Lifecycle.not_drained)
    ]
    return sorted(found, key=lambda r: (-r.wave, r.device))


def earlier_changed(
    rows: Sequence[TargetRow], waves: Sequence[WaveRow], wave: int, missing: int
) -> list[TargetRow]:
    """A wave smaller than a metric's ``min_samples`` (a canary split over waves, a
    last wave) is judged together with targets of the waves before it that passed
    and are still changed: the change judged so far, not a sliver of it."""
    if missing <= 0:
        return []
    return _in_passed_waves(rows, waves, wave)[:missing]


def controls_for(
    rows: Sequence[TargetRow],
    waves: Sequence[WaveRow],
    wave: int,
    needed: int,
    exclude: set[str] | None = None,
) -> tuple[list[str], str]:
    """Healthy comparison targets: not yet changed, or (when fewer than ``needed``
    remain) changed in waves that passed; never one of ``exclude``."""
    exclude = exclude or set()
    untouched = [
        r.device
        for r in rows
        if r.wave > wave
        and r.device not in exclude
        and r.status is TargetStatus.pending
        and r.lifecycle in (Lifecycle.in_service, Lifecycle.not_drained)
    ]
    if len(untouched) >= needed:
        return untouched, "not yet changed"
    earlier = [r.device for r in _in_passed_waves(rows, waves, wave) if r.device not in exclude]
    return earlier, "changed in waves that passed"


def control_floors(
    ctx: Context, samples: Mapping[str, MetricSamples], size: int, seed: int
) -> dict[str, NoiseFloor]:
    """A/A on the controls: a wave-sized group of them against the rest."""
    floors: dict[str, NoiseFloor] = {}
    for metric in ctx.spec.abort.metrics:
        got = samples.get(metric.name)
        if not isinstance(got, tuple):
            continue
        controls = dict(got[1])
        names = sorted(controls)
        random.Random(seed).shuffle(names)
        k = max(1, min(size, len(names) // 2))
        a = {n: controls[n] for n in names[:k]}
        b = {n: controls[n] for n in names[k:]}
        floors[metric.name] = measure_noise_floor(metric, a, b, seed)
    return floors


def acceptance_counts(waves: Sequence[WaveRow], names: Sequence[str]) -> FaultCounts:
    """Failed acceptance tests per node, from the outcomes the waves journaled
    (``evidence.acceptance``); a node with no recorded test is left out (no evidence)."""
    outcomes: dict[str, Json] = {}
    for row in waves:
        recorded = (row.evidence or {}).get("acceptance")
        if isinstance(recorded, dict):
            outcomes.update(recorded)
    counts: dict[str, int] = {}
    for name in names:
        outcome = outcomes.get(name)
        if isinstance(outcome, dict) and "passed" in outcome:
            counts[name] = 0 if outcome["passed"] else 1
    return counts


def assess_step(rt: Runtime, ctx: Context, wave: WaveRow) -> WaveStatus:
    """Judge a baked wave: the declared abort conditions over the bake window, wave
    targets against controls, with an A/A noise floor measured on the controls."""
    journal = rt.db.journal
    rows = journal.targets(ctx.id)
    waves = journal.waves(ctx.id)
    own = [r for r in rows if r.wave == wave.number]
    spec = ctx.spec
    need = max((m.min_samples for m in spec.abort.metrics), default=0)
    applied = sum(1 for r in own if r.status is TargetStatus.applied)
    mine = own + earlier_changed(rows, waves, wave.number, need - applied)
    judged = [r.device for r in mine if r.status is TargetStatus.applied]
    controls, group = controls_for(rows, waves, wave.number, len(judged) + need, set(judged))
    assert wave.bake_start is not None and wave.bake_end is not None
    window = TimeWindow(rt.clock.time(wave.bake_start), rt.clock.time(wave.bake_end))
    names = [r.device for r in mine]
    seen = observe_all(rt.targets, names, concurrency=rt.concurrency)
    observed: dict[HardFault, FaultCounts] = {
        HardFault.unreachable: {n: int(seen[n].state is None) for n in names},
        HardFault.unknown: {r.device: int(r.status is TargetStatus.unknown) for r in mine},
    }
    if spec.acceptance and HardFault.acceptance_failed in spec.abort.hard_faults:
        # the spec's own acceptance tests are the evidence of acceptance_failed
        observed[HardFault.acceptance_failed] = acceptance_counts(waves, names)
    evidence = collect(rt.sources, spec.abort, judged, controls, window, observed)
    seed = spec.seed * 1000 + wave.number * 10 + wave.attempts
    floors = control_floors(ctx, evidence.samples, len(judged), seed)
    assessment = assess_wave(
        spec.abort,
        evidence.samples,
        evidence.hard_faults,
        floors,
        seed,
        targets=names,
    )
    assessment = _with_apply_outcomes(assessment, mine, seen)
    kept = wave.evidence or {}
    detail: dict[str, Json] = {
        **{k: kept[k] for k in ("drain", "acceptance") if k in kept},
        **assessment.to_dict(),
        "window": [window.start.isoformat(), window.end.isoformat()],
        "wave_targets": [r.device for r in own],
        "judged_targets": list(judged),
        "controls": len(controls),
        "control_group": group,
        "noise_floors": {k: v.to_dict() for k, v in floors.items()},
        "unjudgeable": dict(short_metrics(spec.abort, len(judged), len(controls))),
    }
    status = {
        Decision.proceed: WaveStatus.passed,
        Decision.hold: WaveStatus.held,
        Decision.abort: WaveStatus.aborted,
    }[assessment.decision]
    journal.update_wave(
        ctx.id,
        wave.number,
        status=status,
        decision=assessment.decision.value,
        evidence=detail,
        finished_at=rt.db.now().isoformat(),
    )
    rt.record(
        "decision",
        detail={
            "rollout": ctx.id,
            "wave": wave.number,
            "decision": assessment.decision.value,
            "reasons": list(assessment.reasons[:5]),
        },
    )
    return status


def _with_apply_outcomes(
    assessment: WaveAssessment, rows: Sequence[TargetRow], seen: Mapping[str, Observation]
) -> WaveAssessment:
    """Targets that could not be changed, failed acceptance, or drifted off the
    intended state while baking fail the wave whatever the metrics say."""
    bad = {
        r.device: r.error or r.status.value
        for r in rows
        if r.status in (TargetStatus.failed, TargetStatus.unknown)
    }
    drifted = [
        r.device
        for r in rows
        if r.status is TargetStatus.applied
        and seen[r.device].state is not None
        and not at(seen[r.device].state, r.intended)
    ]
    repair = [r.device for r in rows if r.lifecycle is Lifecycle.repair]
    extra: list[Measurement] = []
    if repair:
        extra.append(
            Measurement(
                "acceptance",
                Phase.failed,
                f"acceptance: {len(repair)} node(s) failed acceptance and went to repair: "
                + ", ".join(repair[:5]),
                evidence={"targets": list[Json](repair)},
            )
        )
    if bad:
        first = next(iter(bad.items()))
        extra.append(
            Measurement(
                "apply",
                Phase.failed,
                f"apply: {len(bad)} target(s) not changed: {first[0]}: {first[1]}",
                evidence={"targets": dict(sorted(bad.items()))},
            )
        )
    if drifted:
        extra.append(
            Measurement(
                "state",
                Phase.failed,
                f"state: {len(drifted)} target(s) left the intended state while baking: "
                + ", ".join(drifted[:5]),
                evidence={"targets": list[Json](drifted)},
            )
        )
    if not extra:
        return assessment
    measurements = (*extra, *assessment.measurements)
    decision, reasons = summarise(measurements)
    return WaveAssessment(decision, measurements, assessment.hard_faults, reasons)
