"""Turn a rollout plan into a journaled rollout (the record ``plumb rollout status``
reads): every wave with its targets, each target's intended values on the carried
paths (the values reviewed at start, applied as recorded even if the intent moves
on), and the plan's strata, coverage and cost, fixed at start.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.settings import Change
from reconciler.state.journal import (
    Lifecycle,
    NewTarget,
    NewWave,
    RolloutRow,
    RolloutStatus,
)
from rollouts.evidence import Json
from rollouts.planning import RolloutPlan
from rollouts.runtime import Runtime


@dataclass(frozen=True)
class Provenance:
    """Where the rollout's declaration came from."""

    spec_path: str  # relative to the fleet repo
    spec_text: bytes
    spec_commit: str | None
    intent_commit: str | None
    actor: str

    @property
    def spec_sha256(self) -> str:
        return hashlib.sha256(self.spec_text).hexdigest()


def plan_record(plan: RolloutPlan) -> dict[str, Json]:
    """What status shows of the plan, fixed at start (JSON)."""
    return {
        "spec": plan.spec.model_dump(mode="json"),
        "strata": [
            {"id": s.id, "key": [list(kv) for kv in s.key], "members": list(s.members)}
            for s in plan.strata.strata
        ],
        "coverage": [
            {
                "stratum": c.stratum,
                "size": c.size,
                "canaries": list(c.canaries),
                "p": c.p,
                "stratified": c.stratified,
                "random": c.random,
            }
            for c in plan.coverage
        ],
        "waves": [
            {
                "number": r.wave.number,
                "canary": r.wave.canary,
                "targets": list(r.wave.targets),
                "strata": list(r.strata),
                "racks": list(r.racks),
                "predicted_stall_gpu_hours": r.stall.gpu_hours,
                "bake_minutes": r.bake.minutes,
            }
            for r in plan.reports
        ],
        "stall": {
            "planned_gpu_hours": plan.total.gpu_hours,
            "lower_bound_gpu_hours": plan.lower_bound.gpu_hours,
            "cap_bound_gpu_hours": plan.cap_bound.gpu_hours,
            "usd_per_gpu_hour": plan.spec.price.usd_per_gpu_hour,
        },
        "selected": len(plan.selected),
        "at_intent": len(plan.at_intent),
    }


def begin(
    rt: Runtime,
    plan: RolloutPlan,
    changes: Mapping[str, Sequence[Change]],
    provenance: Provenance,
) -> str:
    """Journal a new rollout of ``plan``; returns its id. Nothing is written to a
    device here."""
    journal = rt.db.journal
    rollout = journal.new_id(plan.spec.name)
    lifecycle = Lifecycle.in_service if plan.spec.drain else Lifecycle.not_drained
    targets = [
        NewTarget(t, report.wave.number, {c.path: c.after for c in changes[t]}, lifecycle)
        for report in plan.reports
        for t in report.wave.targets
    ]
    waves = [NewWave(r.wave.number, r.wave.canary, r.bake.minutes) for r in plan.reports]
    row = RolloutRow(
        id=rollout,
        spec_name=plan.spec.name,
        spec_path=provenance.spec_path,
        spec_sha256=provenance.spec_sha256,
        spec_commit=provenance.spec_commit,
        intent_commit=provenance.intent_commit,
        status=RolloutStatus.running,
        reason=None,
        actor=provenance.actor,
        created_at="",
        updated_at="",
        plan=plan_record(plan),
    )
    journal.create(row, waves, targets)
    rt.record(
        "rollout",
        detail={
            "rollout": rollout,
            "event": "started",
            "spec": provenance.spec_path,
            "spec_sha256": provenance.spec_sha256,
            "spec_commit": provenance.spec_commit,
            "targets": len(targets),
            "waves": len(waves),
        },
    )
    return rollout
