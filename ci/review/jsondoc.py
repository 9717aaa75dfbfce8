"""The review as stable JSON, ``plumb.review/v1`` (documented in docs/ci.md).

The plan and each rollout are embedded as their own documents (``plumb.plan/v1``,
``plumb.rollout-plan/v1``) and violations in the shape of ``plumb.validate/v1``, so
a script that reads those reads these. Keys may be added in v1, never removed or
changed in meaning.
"""

from __future__ import annotations

from typing import Any

from ci.formats.json_format import _violation
from ci.outcome import ValidateOutcome
from ci.planfmt import plan_json
from ci.review.model import (
    REVIEW_SCHEMA,
    BlastRadius,
    CatalogueChange,
    Drain,
    IntentDelta,
    Review,
    RevisionInfo,
    RolloutReview,
)
from ci.rolloutfmt import rollout_plan_json
from inventory.problems import Location


def location_json(outcome: ValidateOutcome, location: Location | None) -> dict[str, Any] | None:
    if location is None:
        return None
    return {"file": outcome.path(location), "line": location.line, "col": location.col}


def _revision(info: RevisionInfo) -> dict[str, Any]:
    return {"rev": info.name, "commit": info.commit, "summary": info.summary}


def _catalogue(outcome: ValidateOutcome, items: tuple[CatalogueChange, ...]) -> list[Any]:
    return [
        {"name": c.name, "change": c.change, "location": location_json(outcome, c.location)}
        for c in items
    ]


def _intent(review: Review, delta: IntentDelta) -> dict[str, Any]:
    head, base = review.head_outcome, review.base_outcome
    return {
        "settings": [
            {
                "setting": c.setting,
                "before": c.before,
                "after": c.after,
                "location": location_json(head, c.location),
                "base_location": location_json(base, c.base_location),
                "devices": list(c.devices),
                "applies_to": list(c.applies_to),
            }
            for c in delta.settings
        ],
        "devices": _catalogue(head, delta.devices),
        "bundles": _catalogue(head, delta.bundles),
        "links_added": list(delta.links_added),
        "links_removed": list(delta.links_removed),
    }


def _policies(review: Review) -> dict[str, Any] | None:
    delta, report = review.policies, review.head_outcome.report
    if delta is None or report is None:
        return None
    head, base = review.head_outcome, review.base_outcome
    return {
        "summary": {
            "policies": len(report.policies),
            "deny": len(report.denies()),
            "warn": len(report.warnings()),
            "waived": len(report.waived),
            "engine_errors": len(report.errors),
            "introduced": len(delta.introduced),
            "fixed": len(delta.fixed),
        },
        "introduced": [_violation(head, v) for v in delta.introduced],
        "fixed": [_violation(base, v) for v in delta.fixed],
        "remaining": [_violation(head, v) for v in delta.remaining],
        "waived": [_violation(head, v) for v in report.waived],
        "engine_errors": [{"policy": e.policy, "error": e.error} for e in report.errors],
    }


def _blast(blast: BlastRadius | None) -> dict[str, Any] | None:
    if blast is None:
        return None
    return {
        "counts": {
            "devices": len(blast.devices),
            "switches": len(blast.switches),
            "hosts": len(blast.hosts),
            "ports": len(blast.ports),
            "gpus": blast.gpus,
            "racks": len(blast.racks),
            "rails": len(blast.rails),
            "gangs": len(blast.gangs),
        },
        "devices": list(blast.devices),
        "ports": list(blast.ports),
        "racks": list(blast.racks),
        "rails": list(blast.rails),
        "gangs": list(blast.gangs),
    }


def _drain(drain: Drain | None) -> dict[str, Any] | None:
    if drain is None:
        return None
    return {
        "required": drain.required,
        "reasons": list(drain.reasons),
        "lossless_settings": list(drain.lossless_settings),
        "hosts": list(drain.hosts),
        "gangs": list(drain.gangs),
        "gpus": drain.gpus,
    }


def _rollout(review: Review, item: RolloutReview) -> dict[str, Any]:
    plan = None
    if item.plan is not None:
        plan = rollout_plan_json(
            item.plan, fleet=review.fleet, commit=review.head.commit, spec_file=item.source
        )
    return {
        "source": item.source,
        "name": item.spec.name if item.spec is not None else None,
        "error": item.error,
        "error_location": location_json(review.head_outcome, item.error_at),
        "note": item.note,
        "plan": plan,
    }


def review_json(review: Review) -> dict[str, Any]:
    head = review.head_outcome
    return {
        "schema": REVIEW_SCHEMA,
        "fleet": review.fleet,
        "verdict": review.verdict,
        "exit_code": review.exit_code(),
        "blockers": [
            {
                "kind": b.kind.value,
                "message": b.message,
                "location": location_json(head, b.location),
            }
            for b in review.blockers
        ],
        "base": _revision(review.base),
        "head": _revision(review.head),
        "fleet_path": review.prefix.rstrip("/") or ".",
        "files_changed": [f"{review.prefix}{f}" for f in review.files],
        "observed": {"source": review.observed.kind, "detail": review.observed.detail},
        "input_errors": [
            {**(location_json(head, p.location) or {}), "message": p.message} for p in head.problems
        ],
        "changes": _intent(review, review.intent),
        "policies": _policies(review),
        "plan": (
            plan_json(review.plan, fleet=review.fleet, commit=review.head.commit)
            if review.plan is not None
            else None
        ),
        "blast_radius": _blast(review.blast),
        "drain": _drain(review.drain),
        "rollouts": [_rollout(review, r) for r in review.rollouts],
    }
