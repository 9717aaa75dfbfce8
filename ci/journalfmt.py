"""Render the rollout journal: ``plumb rollout status`` as text, or stable JSON
(``plumb.rollout-status/v1``, documented in docs/rollouts.md), and ``rollout list``.

Status shows, per wave, each decision with its evidence: every measurement's message
(the statistic, p-value, threshold, noise floor and group sizes), the query a
metric ran when it has one, and the control group; then strata coverage and the cost
so far against the plan and its lower bound."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ci.texttable import Column, table_lines
from reconciler.state.journal import Pin, RolloutRow, TargetRow, WaveRow
from reconciler.state.journal_approvals import ApprovalRow

ROLLOUT_STATUS_SCHEMA = "plumb.rollout-status/v1"
NAMES_SHOWN = 8


def _hm(minutes: float | None) -> str:
    if minutes is None:
        return "-"
    return f"{int(minutes // 60)}h{int(minutes % 60):02d}m"


def _names(names: Sequence[str]) -> str:
    shown = " ".join(names[:NAMES_SHOWN])
    return shown + (f" (+{len(names) - NAMES_SHOWN} more)" if len(names) > NAMES_SHOWN else "")


def cost_so_far(row: RolloutRow, waves: Sequence[WaveRow]) -> dict[str, float]:
    stall = row.plan.get("stall", {})
    spent = sum(w.stall_gpu_hours for w in waves)
    price = float(stall.get("usd_per_gpu_hour", 0.0))
    return {
        "stalled_gpu_hours": spent,
        "stalled_usd": spent * price,
        "planned_gpu_hours": float(stall.get("planned_gpu_hours", 0.0)),
        "lower_bound_gpu_hours": float(stall.get("lower_bound_gpu_hours", 0.0)),
    }


def _queries(row: RolloutRow) -> dict[str, str]:
    """Measurement name -> the PromQL it ran (metrics and hard faults of a Prometheus
    source), as declared: ``{targets}`` and ``{window}`` are filled per wave."""
    from rollouts.sources.templates import fault_query, metric_query
    from rollouts.spec import RolloutSpec, Source

    try:
        spec = RolloutSpec.model_validate(row.plan.get("spec", {}))
    except ValueError:
        return {}
    found = {
        m.name: metric_query(m).text for m in spec.abort.metrics if m.source is Source.prometheus
    }
    if spec.abort.prometheus is not None:
        for kind, query in spec.abort.prometheus.hard_faults.items():
            found[f"hard_fault/{kind.value}"] = fault_query(query).text
    return found


def status_json(
    row: RolloutRow, waves: Sequence[WaveRow], targets: Sequence[TargetRow], pins: Sequence[Pin]
) -> dict[str, Any]:
    return {
        "schema": ROLLOUT_STATUS_SCHEMA,
        "rollout": {
            "id": row.id,
            "spec": row.spec_name,
            "spec_path": row.spec_path,
            "spec_sha256": row.spec_sha256,
            "spec_commit": row.spec_commit,
            "intent_commit": row.intent_commit,
            "status": row.status.value,
            "reason": row.reason,
            "actor": row.actor,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        },
        "strata": row.plan.get("strata", []),
        "coverage": row.plan.get("coverage", []),
        "cost": cost_so_far(row, waves),
        "waves": [
            {
                "number": w.number,
                "canary": w.canary,
                "status": w.status.value,
                "attempts": w.attempts,
                "targets": [t.device for t in targets if t.wave == w.number],
                "bake_minutes": w.bake_minutes,
                "bake_window_minutes": [w.bake_start, w.bake_end],
                "stall_gpu_hours": w.stall_gpu_hours,
                "planned_stall_gpu_hours": _planned_stall(row, w.number),
                "decision": w.decision,
                "evidence": w.evidence,
            }
            for w in waves
        ],
        "targets": [
            {
                "device": t.device,
                "wave": t.wave,
                "status": t.status.value,
                "lifecycle": t.lifecycle.value,
                "writes": t.writes,
                "before_recorded_at": t.before_at,
                "error": t.error,
            }
            for t in targets
        ],
        "pins": [
            {"device": p.device, "path": p.path, "value": p.value, "reason": p.reason} for p in pins
        ],
    }


def _planned_stall(row: RolloutRow, number: int) -> float | None:
    for wave in row.plan.get("waves", []):
        if wave.get("number") == number:
            return float(wave.get("predicted_stall_gpu_hours", 0.0))
    return None


def _drain_lines(wave: WaveRow) -> list[str]:
    """The scheduler's gangs the drain stalled, and each node's acceptance test."""
    evidence = wave.evidence or {}
    lines = []
    drain = evidence.get("drain") or {}
    gangs = drain.get("gangs")
    if isinstance(gangs, list):
        jobs = ", ".join(
            f"job {g['id']} ({g['gpus']} GPUs on {len(g['nodes'])} nodes)" for g in gangs
        )
        lines.append(f"      drained via {drain.get('via')}; running jobs: {jobs or 'none'}")
    tests = evidence.get("acceptance") or {}
    if tests:
        failed = {n: t for n, t in tests.items() if not t.get("passed")}
        line = f"      acceptance tests: {len(tests) - len(failed)} passed, {len(failed)} failed"
        for node, test in sorted(failed.items())[:NAMES_SHOWN]:
            line += (
                f"; {node}: {test.get('error') or 'exit status ' + str(test.get('exit_status'))}"
            )
        lines.append(line)
    return lines


def _evidence_lines(wave: WaveRow, queries: dict[str, str]) -> list[str]:
    evidence = wave.evidence or {}
    lines = [
        f"      decision {str(wave.decision).upper()} over {evidence.get('window', ['?'])[0]}"
        f" .. {evidence.get('window', ['?', '?'])[-1]}; controls: {evidence.get('controls', 0)}"
        f" ({evidence.get('control_group', '-')})"
    ]
    extra = len(evidence.get("judged_targets", [])) - len(evidence.get("wave_targets", []))
    if extra > 0:
        lines.append(f"      judged with {extra} target(s) of earlier passed waves (min_samples)")
    rows: list[tuple[str, str]] = []
    for m in evidence.get("measurements", []):
        mark = {"successful": "ok", "failed": "FAILED", "error": "ERROR"}.get(
            m["phase"], m["phase"].upper()
        )
        rows.append((mark, m["message"]))
        if m["metric"] in queries:
            rows.append(("", f"query: {queries[m['metric']]}"))
    rows += [("A/A", floor["message"]) for floor in (evidence.get("noise_floors") or {}).values()]
    lines += table_lines((Column(), Column()), rows, header=False, indent=8)
    accepted = evidence.get("accepted")
    if isinstance(accepted, dict):
        was = accepted.get("was") or "held"
        lines.append(
            f"      accepted by {accepted.get('by', '?')} (the wave was {was}):"
            f" {accepted.get('reason', '')}"
        )
    return lines


def _strata_lines(row: RolloutRow) -> list[str]:
    """Per stratum: its targets, canaries and how surely they catch a defect confined to
    it (and a random canary of the same size would)."""
    coverage = {c["stratum"]: c for c in row.plan.get("coverage", [])}
    rows = []
    for stratum in row.plan.get("strata", []):
        c = coverage.get(stratum["id"], {})
        key = " ".join(f"{k}={v}" for k, v in stratum["key"] if k.startswith("label.")) or "-"
        rows.append(
            (
                stratum["id"],
                f"{len(stratum['members'])} targets",
                f"canary {_names(c.get('canaries', [])) or '-'}",
                f"covered {c.get('stratified', 0):.3f}",
                f"(random canary {c.get('random', 0):.3f})",
                key,
            )
        )
    columns = (Column(), Column(justify="right"), Column(), Column(), Column(), Column())
    return table_lines(columns, rows, header=False, indent=2)


def _wave_lines(
    row: RolloutRow, waves: Sequence[WaveRow], by_wave: dict[int, list[TargetRow]]
) -> list[str]:
    """One aligned line per wave: number, kind, status, targets and their states, bake,
    stall against the plan, attempts when more than one."""
    rows = []
    for wave in waves:
        mine = by_wave.get(wave.number, [])
        states = Counter(t.status.value for t in mine)
        planned = _planned_stall(row, wave.number)
        rows.append(
            (
                wave.number,
                "canary" if wave.canary else "wave",
                wave.status.value,
                f"{len(mine)} targets",
                f"[{', '.join(f'{k} {v}' for k, v in sorted(states.items()))}]",
                f"bake {_hm(wave.bake_minutes)}",
                f"stalled {wave.stall_gpu_hours:.1f} GPU-h"
                + (f" (planned {planned:.1f})" if planned else ""),
                f"attempts {wave.attempts}" if wave.attempts > 1 else "",
            )
        )
    right = Column(justify="right")
    columns = (right, Column(), Column(), right, Column(), Column(), Column(), Column())
    return table_lines(columns, rows, header=False, indent=2)


def status_text(
    row: RolloutRow, waves: Sequence[WaveRow], targets: Sequence[TargetRow], pins: Sequence[Pin]
) -> str:
    out = [f"rollout {row.id}: {row.status.value.upper().replace('_', ' ')}"]
    commit = (row.spec_commit or "uncommitted")[:12]
    out.append(
        f"  spec {row.spec_path} @ {commit} (sha256 {row.spec_sha256[:12]}), intent @ "
        f"{(row.intent_commit or '-')[:12]}; started by {row.actor} at {row.created_at}"
    )
    if row.reason:
        out.append(f"  reason: {row.reason}")
    out.append("strata")
    out += _strata_lines(row)
    out.append("waves")
    queries = _queries(row)
    by_wave: dict[int, list[TargetRow]] = {}
    for t in targets:
        by_wave.setdefault(t.wave, []).append(t)
    summaries = _wave_lines(row, waves, by_wave)
    for wave, summary in zip(waves, summaries, strict=True):
        out.append(summary)
        out.append(f"      targets: {_names([t.device for t in by_wave.get(wave.number, [])])}")
        out += _drain_lines(wave)
        if wave.evidence and wave.decision:
            out += _evidence_lines(wave, queries)
    states = Counter(t.status.value for t in targets)
    cycles = Counter(t.lifecycle.value for t in targets)
    out.append(
        "targets: "
        + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        + "; lifecycle: "
        + ", ".join(f"{k} {v}" for k, v in sorted(cycles.items()))
    )
    cost = cost_so_far(row, waves)
    out.append(
        f"cost so far: stalled {cost['stalled_gpu_hours']:.1f} GPU-h "
        f"(${cost['stalled_usd']:,.0f}); plan {cost['planned_gpu_hours']:.1f} GPU-h, "
        f"lower bound {cost['lower_bound_gpu_hours']:.1f} GPU-h"
    )
    if pins:
        devices = len({p.device for p in pins})
        out.append(f"pins: {len(pins)} field(s) on {devices} device(s) held at their before-state")
    return "\n".join(out) + "\n"


REASON_WIDTH = 100
"""``rollout list`` wraps a longer reason onto the lines below, never cuts it."""


def list_text(rows: Sequence[RolloutRow], waves: dict[str, list[WaveRow]]) -> str:
    if not rows:
        return "no rollouts recorded\n"
    columns = (
        Column("id"),
        Column("status"),
        Column("waves", "right"),
        Column("updated"),
        Column("reason", wrap=REASON_WIDTH),
    )
    table = []
    for row in rows:
        mine = waves.get(row.id, [])
        done = sum(1 for w in mine if w.status.value == "passed")
        reason = row.reason or ""  # whole: its next step is at its end
        table.append((row.id, row.status.value, f"{done}/{len(mine)}", row.updated_at[:25], reason))
    return "\n".join(table_lines(columns, table)) + "\n"


def queued_text(queued: list[ApprovalRow]) -> str:
    """``rollout list``: the approvals waiting to start, in order."""
    if not queued:
        return ""
    lines = [f"queued for plumb serve ({len(queued)}), in the order they start:"]
    for place, a in enumerate(queued, 1):
        lines.append(
            f"  {place}. {a.spec_path} approved by {a.actor} at {a.approved_at[:25]}"
            f" (approval {a.id})"
        )
    return "\n".join(lines) + "\n"


def queued_json(queued: list[ApprovalRow]) -> list[dict[str, Any]]:
    return [
        {
            "approval": a.id,
            "place": place,
            "spec": a.spec_path,
            "spec_sha256": a.spec_sha256,
            "spec_commit": a.spec_commit,
            "approved_by": a.actor,
            "approved_at": a.approved_at,
        }
        for place, a in enumerate(queued, 1)
    ]
