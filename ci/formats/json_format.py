"""Stable JSON (``"schema": "plumb.validate/v1"``), documented in docs/output-formats.md."""

from __future__ import annotations

import json
from typing import Any

from ci.outcome import ValidateOutcome
from inventory.problems import Location
from policies.engine import Violation

SCHEMA = "plumb.validate/v1"


def _loc(outcome: ValidateOutcome, location: Location) -> dict[str, Any]:
    return {"file": outcome.path(location), "line": location.line, "col": location.col}


def _violation(outcome: ValidateOutcome, v: Violation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "policy": v.policy,
        "severity": v.severity.value,
        "subject": v.subject,
        "message": v.message,
        "locations": [_loc(outcome, loc) for loc in v.locations],
        "objects": list(v.objects),
    }
    if v.waiver is not None:
        out["waiver"] = {"reason": v.waiver.reason, "expires": v.waiver.expires.isoformat()}
    return out


def render(outcome: ValidateOutcome) -> str:
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "fleet": outcome.fleet,
        "exit_code": outcome.exit_code(),
        "input_errors": [
            {**_loc(outcome, p.location), "message": p.message} for p in outcome.problems
        ],
    }
    report = outcome.report
    if report is not None:
        doc["summary"] = {
            "policies": len(report.policies),
            "deny": len(report.denies()),
            "warn": len(report.warnings()),
            "waived": len(report.waived),
            "engine_errors": len(report.errors),
        }
        doc["policies"] = [
            {"id": p.id, "severity": p.severity.value, "title": p.title} for p in report.policies
        ]
        doc["violations"] = [_violation(outcome, v) for v in report.violations]
        doc["waived"] = [_violation(outcome, v) for v in report.waived]
        doc["engine_errors"] = [{"policy": e.policy, "error": e.error} for e in report.errors]
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"
