"""JUnit XML: one test case per policy; deny findings fail it, warnings go to system-out."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ci.outcome import ValidateOutcome


def render(outcome: ValidateOutcome) -> str:
    suites = ET.Element("testsuites", name="plumb validate")
    suite = ET.SubElement(suites, "testsuite", name=f"plumb.{outcome.fleet or 'fleet'}")
    cases = 0
    failures = 0
    errors = 0
    if outcome.problems:
        case = ET.SubElement(suite, "testcase", classname="plumb.input", name="fleet repo loads")
        error = ET.SubElement(case, "error", message=f"{len(outcome.problems)} input problem(s)")
        error.text = "\n".join(str(p) for p in outcome.problems)
        cases, errors = 1, 1
    report = outcome.report
    if report is not None:
        grouped = report.by_policy()
        broken = {e.policy: e.error for e in report.errors}
        for pol in report.policies:
            cases += 1
            case = ET.SubElement(suite, "testcase", classname="plumb.policy", name=pol.id)
            found = grouped.get(pol.id, [])
            body = "\n".join(f"{v.location}: {v.message}" for v in found)
            if pol.id in broken:
                errors += 1
                ET.SubElement(case, "error", message=broken[pol.id])
            elif found and pol.severity.value == "deny":
                failures += 1
                failure = ET.SubElement(
                    case, "failure", message=f"{len(found)} violation(s): {pol.title}"
                )
                failure.text = body
            elif found:
                ET.SubElement(case, "system-out").text = body
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
