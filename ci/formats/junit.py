"""JUnit XML: one test case per policy; deny findings fail it, warnings go to system-out.

Violations of an id that is not a registered policy (``waiver.expired``) get a test
case of their own, so a failing exit code always shows up as a failing test.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ci.outcome import ValidateOutcome
from inventory.problems import Location
from policies.engine import WAIVER_EXPIRED

UNREGISTERED_TITLES = {WAIVER_EXPIRED: "waivers must not be expired"}


def _where(outcome: ValidateOutcome, location: Location) -> str:
    return f"{outcome.path(location)}:{location.line}:{location.col}"


def render(outcome: ValidateOutcome) -> str:
    suites = ET.Element("testsuites", name="plumb validate")
    suite = ET.SubElement(suites, "testsuite", name=f"plumb.{outcome.fleet or 'fleet'}")
    cases = 0
    failures = 0
    errors = 0
    if outcome.problems:
        case = ET.SubElement(suite, "testcase", classname="plumb.input", name="fleet repo loads")
        error = ET.SubElement(case, "error", message=f"{len(outcome.problems)} input problem(s)")
        error.text = "\n".join(
            f"{_where(outcome, p.location)}: {p.message}" for p in outcome.problems
        )
        cases, errors = 1, 1
    report = outcome.report
    if report is not None:
        grouped = report.by_policy()
        broken = {e.policy: e.error for e in report.errors}
        registered = {pol.id for pol in report.policies}
        unregistered = [
            (policy_id, found[0].severity.value, UNREGISTERED_TITLES.get(policy_id, policy_id))
            for policy_id, found in grouped.items()
            if policy_id not in registered
        ]
        for policy_id, severity, title in [
            *((pol.id, pol.severity.value, pol.title) for pol in report.policies),
            *unregistered,
        ]:
            cases += 1
            case = ET.SubElement(suite, "testcase", classname="plumb.policy", name=policy_id)
            found = grouped.get(policy_id, [])
            body = "\n".join(f"{_where(outcome, v.location)}: {v.message}" for v in found)
            if policy_id in broken:
                errors += 1
                ET.SubElement(case, "error", message=broken[policy_id])
            elif found and severity == "deny":
                failures += 1
                failure = ET.SubElement(
                    case, "failure", message=f"{len(found)} violation(s): {title}"
                )
                failure.text = body
            elif found:
                ET.SubElement(case, "system-out").text = body
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
