"""The review for CI tools, built on the ``plumb validate`` formats (:mod:`ci.formats`):

* **sarif**: every finding at head, one result per policy and place at the
  offending value, with ``baselineState`` ``new`` (the change introduces one of its
  findings) or ``unchanged`` (base has them all too); head input problems; and the
  review's own blockers (a refused plan, a rollout spec that cannot be planned) as
  ``review.plan`` and ``review.rollout`` results, at the fleet repo's ``plumb.yaml``
  when they have no place of their own;
* **junit**: one test case per policy, failing on deny violations the change
  introduces, plus ``plumb.review`` cases for the plan and each rollout;
* **github**: workflow annotations for what the change introduces and the review's
  blockers, then one ``::notice`` with the verdict.

All three agree with the exit code: pre-existing violations do not fail junit or
github, and SARIF marks them ``unchanged``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

from ci.formats import github, junit, sarif
from ci.formats.github import _annotation, _escape_data
from ci.formats.sarif import _location
from ci.outcome import ValidateOutcome
from ci.review.model import Blocker, BlockerKind, Review
from inventory.problems import Location

FLEET_FILE = Location("plumb.yaml", 1, 1)
REVIEW_RULES = {
    BlockerKind.plan: ("review.plan", "The change's plan has a safe order"),
    BlockerKind.rollout: ("review.rollout", "The change's rollout can be loaded and planned"),
}


def introduced_outcome(review: Review) -> ValidateOutcome:
    """Head's outcome with only the violations the change introduces."""
    outcome, delta = review.head_outcome, review.policies
    if outcome.report is None or delta is None:
        return outcome
    return replace(outcome, report=replace(outcome.report, violations=delta.introduced))


def _review_blockers(review: Review) -> list[Blocker]:
    return [b for b in review.blockers if b.kind in REVIEW_RULES]


def render_sarif(review: Review) -> str:
    outcome = review.head_outcome
    document: dict[str, Any] = json.loads(sarif.render(outcome))
    run = document["runs"][0]
    new = {f"{v.policy}/{v.subject}" for v in review.policies.introduced} if review.policies else ()
    for result in run["results"]:
        subjects = result.get("properties", {}).get("subjects", [])
        known = subjects and not any(s in new for s in subjects)
        result["baselineState"] = "unchanged" if known else "new"
    blockers = _review_blockers(review)
    for kind in sorted({b.kind for b in blockers}):
        rule_id, title = REVIEW_RULES[kind]
        run["tool"]["driver"]["rules"].append(
            {
                "id": rule_id,
                "shortDescription": {"text": title},
                "defaultConfiguration": {"level": "error"},
            }
        )
    for blocker in blockers:
        # Code scanning wants a place for every result: a review finding with none of
        # its own (a refused plan) sits on the fleet repo's plumb.yaml.
        location = blocker.location if blocker.location and blocker.location.line else FLEET_FILE
        run["results"].append(
            {
                "ruleId": REVIEW_RULES[blocker.kind][0],
                "level": "error",
                "message": {"text": blocker.message},
                "locations": [_location(outcome, location)],
                "baselineState": "new",
            }
        )
    return json.dumps(document, indent=2) + "\n"


def _case(suite: ET.Element, name: str, failure: str | None, out: str | None = None) -> bool:
    case = ET.SubElement(suite, "testcase", classname="plumb.review", name=name)
    if failure is not None:
        ET.SubElement(case, "failure", message=failure).text = failure
    elif out is not None:
        ET.SubElement(case, "system-out").text = out
    return failure is not None


def render_junit(review: Review) -> str:
    root = ET.fromstring(junit.render(introduced_outcome(review)))
    root.set("name", "plumb review")
    suite = root.find("testsuite")
    assert suite is not None  # junit.render always writes one suite
    cases = failures = 0
    if review.plan is not None:
        cases += 1
        failures += _case(suite, "plan has a safe order", review.plan.refused)
    for item in review.rollouts:
        cases += 1
        fails = item.error if item.error is not None and not item.is_default else None
        failures += _case(suite, f"rollout {item.source} can be planned", fails, item.error)
    suite.set("tests", str(int(suite.get("tests", "0")) + cases))
    suite.set("failures", str(int(suite.get("failures", "0")) + failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render_github(review: Review) -> str:
    outcome = introduced_outcome(review)
    lines = github.render(outcome).splitlines()
    for blocker in _review_blockers(review):
        title = f"plumb {REVIEW_RULES[blocker.kind][0]}"
        if blocker.location is not None and blocker.location.line:
            lines.append(_annotation(outcome, "error", blocker.location, title, blocker.message))
        else:
            lines.append(f"::error title={title}::{_escape_data(blocker.message)}")
    summary = f"{review.verdict}: {len(review.blockers)} blocker(s)"
    lines.append(f"::notice title=plumb review::{_escape_data(summary)}")
    return "\n".join(lines) + "\n"
