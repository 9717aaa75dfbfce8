"""SARIF 2.1.0: one rule per policy, one result per policy and place (at the offending
value) with the count of findings it stands for and their subjects."""

from __future__ import annotations

import json
from typing import Any

from ci.formats.collapse import collapse
from ci.outcome import ValidateOutcome
from inventory.problems import Location
from policies.engine import WAIVER_EXPIRED

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INPUT_RULE = "input.invalid"
UNREGISTERED_TITLES = {WAIVER_EXPIRED: "Waivers must not be expired"}


def _location(outcome: ValidateOutcome, location: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": outcome.path(location)}}
    if location.line:
        physical["region"] = {"startLine": location.line, "startColumn": location.col}
    return {"physicalLocation": physical}


def render(outcome: ValidateOutcome) -> str:
    rules: list[dict[str, Any]] = [
        {
            "id": INPUT_RULE,
            "shortDescription": {"text": "The fleet repo must load: YAML syntax and schema"},
            "defaultConfiguration": {"level": "error"},
        }
    ]
    results: list[dict[str, Any]] = [
        {
            "ruleId": INPUT_RULE,
            "level": "error",
            "message": {"text": p.message},
            "locations": [_location(outcome, p.location)],
        }
        for p in outcome.problems
    ]
    report = outcome.report
    if report is not None:
        for pol in report.policies:
            rules.append(
                {
                    "id": pol.id,
                    "shortDescription": {"text": pol.title},
                    "fullDescription": {"text": pol.rationale},
                    "help": {"text": pol.remediation},
                    "defaultConfiguration": {
                        "level": "error" if pol.severity.value == "deny" else "warning"
                    },
                }
            )
        known = {rule["id"] for rule in rules}
        for v in (*report.violations, *report.waived):
            if v.policy not in known:  # not a registered policy: waiver.expired
                known.add(v.policy)
                rules.append(
                    {
                        "id": v.policy,
                        "shortDescription": {"text": UNREGISTERED_TITLES.get(v.policy, v.policy)},
                        "defaultConfiguration": {
                            "level": "error" if v.severity.value == "deny" else "warning"
                        },
                    }
                )
        for group in collapse((*report.violations, *report.waived)):
            v = group.first
            result: dict[str, Any] = {
                "ruleId": v.policy,
                "level": "error" if v.severity.value == "deny" else "warning",
                "message": {"text": group.message()},
                # A finding without a place in the repo (line 0) has no SARIF location:
                # "<derived>" is not a URI a code-scanning upload accepts.
                "locations": [_location(outcome, v.location)] if v.location.line else [],
                "relatedLocations": [
                    {"id": i, **_location(outcome, loc)}
                    for i, loc in enumerate(v.locations[1:])
                    if loc.line
                ],
                "partialFingerprints": {"plumbSubject": f"{v.policy}/{v.subject}"},
                "properties": {
                    "count": group.count,
                    "subjects": [f"{v.policy}/{s}" for s in group.subjects],
                },
            }
            if v.waiver is not None:
                result["suppressions"] = [{"kind": "external", "justification": v.waiver.reason}]
            results.append(result)
    # A policy that raised is not a pass: the run itself is marked unsuccessful.
    engine_errors = outcome.report.errors if outcome.report is not None else ()
    invocation = {
        "executionSuccessful": not engine_errors,
        "toolExecutionNotifications": [
            {
                "level": "error",
                "descriptor": {"id": error.policy},
                "message": {"text": f"{error.policy}: the policy raised {error.error}"},
            }
            for error in engine_errors
        ],
    }
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "plumb",
                        "informationUri": "https://plumb.invalid/docs",
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2) + "\n"
