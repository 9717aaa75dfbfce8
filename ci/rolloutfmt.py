"""Render a rollout plan as text or stable JSON (``plumb.rollout-plan/v1``, documented in
docs/rollouts.md). Floats are rounded to 6 decimals so that the JSON of one plan is
byte-identical across runs and platforms."""

from __future__ import annotations

from typing import Any

from ci.texttable import Column, table_lines
from rollouts.bake import BakeSizing
from rollouts.planning import RolloutPlan
from rollouts.price import Stall
from rollouts.spec import RolloutSpec

ROLLOUT_PLAN_SCHEMA = "plumb.rollout-plan/v1"
NAMES_SHOWN = 12


def _r(value: float) -> float:
    return round(value, 6)


def _stall(stall: Stall) -> dict[str, Any]:
    return {"gangs": dict(stall.drains), "gpu_hours": _r(stall.gpu_hours), "usd": _r(stall.usd)}


def _bake(bake: BakeSizing) -> dict[str, Any]:
    return {
        "minutes": _r(bake.minutes),
        "expected_background": _r(bake.expected_background),
        "critical_count": bake.critical_count,
        "false_alarm": _r(bake.false_alarm),
        "detectable_ratio": _r(bake.detectable_ratio),
        "powered": bake.powered,
        "bound": bake.bound,
    }


def rollout_plan_json(
    plan: RolloutPlan, *, fleet: str, commit: str | None, spec_file: str
) -> dict[str, Any]:
    spec = plan.spec
    strata = plan.strata
    rows = {row.stratum: row for row in plan.coverage}
    return {
        "schema": ROLLOUT_PLAN_SCHEMA,
        "fleet": fleet,
        "intent_commit": commit,
        "rollout": spec.name,
        "spec_file": spec_file,
        "seed": spec.seed,
        "drain": spec.drain is not None,
        "drain_via": None if spec.drain is None else spec.drain.via.value,
        "targets": {
            "select": spec.targets.select,
            "paths": list(spec.targets.paths),
            "selected": len(plan.selected),
            "planned": len(plan.targets),
            "at_intent": list(plan.at_intent),
            "unknown": dict(sorted(plan.unknown.items())),
            "cannot_reach_intent": {n: list(p) for n, p in sorted(plan.unreachable.items())},
        },
        "components": list(strata.components),
        "versioned_components": list(strata.versioned),
        "caps": {field: cap for field, cap in _caps(plan)},
        "canary_size": len(plan.waves.canary),
        "strata": [
            {
                "id": s.id,
                "key": dict(s.key),
                "size": len(s.members),
                "members": list(s.members),
                "canaries": list(rows[s.id].canaries),
                "p": _r(rows[s.id].p),
                "detection": {
                    "stratified": rows[s.id].stratified,
                    "random": _r(rows[s.id].random),
                    "random_distinct": _r(rows[s.id].random_distinct),
                },
            }
            for s in strata.strata
        ],
        "waves": [
            {
                "number": r.wave.number,
                "canary": r.wave.canary,
                "size": r.wave.size,
                "held": r.wave.held,
                "targets": list(r.wave.targets),
                "riders": list(r.wave.riders),
                "racks": list(r.racks),
                "dp_replicas": list(r.dp_replicas),
                "strata": list(r.strata),
                "stall": _stall(r.stall),
                "bake": _bake(r.bake),
            }
            for r in plan.reports
        ],
        "price": {
            "usd_per_gpu_hour": spec.price.usd_per_gpu_hour,
            "drain_minutes": spec.price.drain_minutes,
            "total": _stall(plan.total),
            "lower_bound": _stall(plan.lower_bound),
            "cap_bound": _stall(plan.cap_bound),
        },
        "bake": {
            "mode": spec.bake.mode.value,
            "baseline_failures_per_target_hour": spec.bake.baseline_failures_per_target_hour,
            "detect_rate_ratio": spec.bake.detect_rate_ratio,
            "confidence": spec.bake.confidence,
            "total_minutes": _r(plan.bake_minutes()),
        },
    }


def _caps(plan: RolloutPlan) -> list[tuple[str, int]]:
    return plan.waves.limits.counted()


def _names(names: tuple[str, ...]) -> str:
    shown = " ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f" ... and {more} more" if more > 0 else "")


def _duration(minutes: float) -> str:
    hours, rest = divmod(round(minutes), 60)
    return f"{hours}h{rest:02d}m" if hours else f"{rest}m"


def _money(stall: Stall) -> str:
    return f"{stall.gpu_hours:.1f} GPU-h ${stall.usd:,.0f}"


def _bake_words(bake: BakeSizing, spec: RolloutSpec) -> str:
    words = (
        f"flag at >= {bake.critical_count} failures ({bake.expected_background:.2f} expected, "
        f"false alarm {bake.false_alarm:.3f}); detects >= {bake.detectable_ratio:.2f}x"
    )
    if not bake.powered:
        words += f" (UNDERPOWERED: {spec.bake.detect_rate_ratio:g}x declared)"
    return words


def _strata_lines(plan: RolloutPlan) -> list[str]:
    """One row per stratum: its size and share, its canaries, and the chance that a defect
    confined to it is caught by them and by a random canary of the same size."""
    varying = plan.strata.varying()
    coverage = {row.stratum: row for row in plan.coverage}
    columns = (
        Column("id"),
        Column("size", "right"),
        Column("p", "right"),
        Column("canary"),
        Column("stratified", "right"),
        Column(f"random k={len(plan.waves.canary)}", "right"),
        Column(),
    )
    rows: list[tuple[object, ...]] = []
    for s in plan.strata.strata:
        row = coverage[s.id]
        label = s.label(varying) or "(one stratum)"
        canaries = ",".join(row.canaries)
        rows.append(
            (
                s.id,
                row.size,
                f"{row.p:.3f}",
                canaries,
                f"{row.stratified:.3f}",
                f"{row.random:.4f}",
                label,
            )
        )
    return table_lines(columns, rows, indent=2)


def rollout_plan_text(plan: RolloutPlan, *, fleet: str) -> str:
    spec = plan.spec
    strata = plan.strata
    varying = strata.varying()
    lines = [
        f"rollout {spec.name} on {fleet}: {len(plan.targets)} targets ({len(plan.selected)} "
        f"selected, {len(plan.at_intent)} at intent, {len(plan.unknown)} unknown"
        + (f", {len(plan.unreachable)} cannot reach intent" if plan.unreachable else "")
        + "), "
        f"{len(strata.strata)} strata, {len(plan.reports)} waves, "
        + ("drain" if spec.drain else "no drain"),
        f"touches: {', '.join(strata.components)}"
        + (f" (versions split strata: {', '.join(strata.versioned)})" if strata.versioned else ""),
        f"caps: {', '.join(plan.waves.limits.describe()) or 'none'}; "
        f"growth {spec.waves.growth:g}; seed {spec.seed}",
    ]
    for name, error in sorted(plan.unknown.items()):
        lines.append(f"UNKNOWN {name}: {error} (not planned: its current versions are unknown)")
    for name, paths in sorted(plan.unreachable.items()):
        lines.append(
            f"CANNOT REACH INTENT {name}: {', '.join(paths)} differ and plumb cannot write"
            " them there (see `plumb plan`); not at intent after this rollout"
        )
    common = " ".join(f"{k}={v}" for k, v in strata.strata[0].key if k not in varying)
    lines += ["", f"strata (all share: {common or 'nothing'})"]
    lines += _strata_lines(plan)
    lines += ["", "waves"]
    heads: list[tuple[int, str]] = []
    for r in plan.reports:
        kind = "canary" if r.wave.canary else "wave"
        held = ""
        if r.wave.held:
            whole = " as whole gang shares" if spec.drain else ""
            held = f" of size {r.wave.size}: no further target fit the caps{whole}"
        joined = ",".join(r.strata)
        heads.append(
            (r.wave.number, f"{kind}: {len(r.wave.targets)} targets{held}, strata {joined}")
        )
    numbered = table_lines((Column(justify="right"), Column()), heads, header=False, indent=2)
    for r, head in zip(plan.reports, numbered, strict=True):
        lines.append(head)
        lines.append(f"       targets: {_names(r.wave.targets)}")
        if r.wave.riders:
            lines.append(
                f"       riders: {_names(r.wave.riders)} (stall no gang the canaries do not)"
            )
        lines.append(f"       racks: {_names(r.racks)}")
        if r.dp_replicas:
            lines.append(f"       DP replicas: {_names(r.dp_replicas)}")
        lines.append(f"       bake {_duration(r.bake.minutes)}: {_bake_words(r.bake, spec)}")
        if spec.drain:
            stalled = f"{', '.join(r.stall.gangs)}: {_money(r.stall)}" if r.stall.drains else "0"
            lines.append(f"       stalls {stalled}")
    lines.append("")
    if spec.drain:
        lines.append(
            f"stalled: {_money(plan.total)} (drains: "
            + ", ".join(f"{g} x{n}" for g, n in plan.total.drains.items())
            + f"); lower bound {_money(plan.lower_bound)} (each gang drained once); "
            f"with these caps at least {_money(plan.cap_bound)}"
        )
    else:
        lines.append("stalled: nothing (drain: false)")
    lines.append(
        f"bake: {_duration(plan.bake_minutes())} in all; declared {spec.bake.detect_rate_ratio:g}x "
        f"baseline {spec.bake.baseline_failures_per_target_hour:g}/target-hour at confidence "
        f"{spec.bake.confidence:g}"
    )
    return "\n".join(lines) + "\n"
