"""Output formats of ``plumb validate``: each one renders the same outcome (clean,
violations, waivers, engine errors, input errors) in the shape its consumer expects,
with paths relative to the working directory when the fleet sits under it."""

from __future__ import annotations

import contextlib
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ci.formats import FORMATS, github, sarif
from ci.outcome import ValidateOutcome
from inventory.problems import Location, Problem
from plumb.cli import app
from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
from policies.engine import PolicyReport, Severity, Violation
from service.validation import builtin_policies
from tests.fleetcopy import FleetCopy, copy_orion

BUILTIN_IDS = sorted(p.id for p in builtin_policies())
HOST_MTU = "host: 9000 "
MTU_FILE = "intent/mtu.yaml"

WARN_POLICY = """\
from policies.engine import Finding, policy


@policy("repo.rail-leaves", severity="warn", title="Rail leaves are named after their rail",
        rationale="Names that say the rail make cabling mistakes visible.",
        remediation="Rename the leaf to leaf-r<rail>.")
def rail_leaves(fleet):
    for device in fleet.devices.values():
        if device.rail == 7:
            yield Finding(device.name, f"{device.name} serves rail 7",
                          (fleet.where.devices[device.name],), (device.name,))
"""

RAISING_POLICY = """\
from policies.engine import policy


@policy("repo.broken", title="Broken", rationale="r", remediation="x")
def broken(fleet):
    raise RuntimeError("no route to the CMDB")
"""

WAIVERS = """\
waivers:
  - policy: mtu.host-fits-port
    subject: "gpu-n01:*"
    reason: canary node, re-cabled in ticket NET-1
    expires: 2027-06-30
  - policy: bgp.asn-private
    subject: "*"
    reason: lab ASNs until the renumbering
    expires: 2026-01-31
"""


def _violating(fleet: FleetCopy) -> None:
    fleet.replace(MTU_FILE, HOST_MTU, "host: 9200 ")


def _assorted(fleet: FleetCopy) -> None:
    _violating(fleet)
    fleet.write("policies/waivers.yaml", WAIVERS)
    fleet.write("policies/rails.py", WARN_POLICY)


def _engine_error(fleet: FleetCopy) -> None:
    fleet.write("policies/broken.py", RAISING_POLICY)


def _broken(fleet: FleetCopy) -> None:
    fleet.replace(MTU_FILE, HOST_MTU, 'host: "9000" ')


SCENARIOS: dict[str, Callable[[FleetCopy], None]] = {
    "clean": lambda fleet: None,
    "violating": _violating,
    "assorted": _assorted,
    "engine-error": _engine_error,
    "broken": _broken,
}
EXIT_CODES = {"clean": 0, "violating": 1, "assorted": 1, "engine-error": 2, "broken": 2}


@dataclass(frozen=True)
class Rendered:
    exit_code: int
    stdout: str
    stderr: str
    fleet: FleetCopy

    @property
    def text(self) -> str:
        return self.stdout + self.stderr

    def at(self, needle: str, relative: str = MTU_FILE) -> tuple[str, int, int]:
        """(cwd-relative file, line, col) of the first occurrence of ``needle``."""
        content = (self.fleet.path / relative).read_text()
        index = content.index(needle)
        line = content.count("\n", 0, index) + 1
        col = index - (content.rfind("\n", 0, index) + 1) + 1
        return f"orion/{relative}", line, col


Render = Callable[..., Rendered]


@pytest.fixture(scope="module")
def render(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Render]:
    """Render a scenario in a format, from the directory that holds the fleet copy."""
    fleets: dict[str, FleetCopy] = {}
    cache: dict[tuple[str, str, str], Rendered] = {}

    def run(scenario: str, fmt: str, cwd: str = "parent") -> Rendered:
        if scenario not in fleets:
            fleet = copy_orion(tmp_path_factory.mktemp(scenario))
            SCENARIOS[scenario](fleet)
            fleets[scenario] = fleet
        fleet = fleets[scenario]
        key = (scenario, fmt, cwd)
        if key not in cache:
            where = fleet.path.parent if cwd == "parent" else tmp_path_factory.mktemp("away")
            args = ["validate", str(fleet.path), "--format", fmt, "--today", "2026-12-01"]
            with contextlib.chdir(where):
                result = CliRunner().invoke(app, args)
            assert result.exception is None or isinstance(result.exception, SystemExit)
            cache[key] = Rendered(result.exit_code, result.stdout, result.stderr, fleet)
        return cache[key]

    yield run


# -- every format -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_exit_code_comes_from_the_outcome_not_the_format(
    render: Render, scenario: str, fmt: str
) -> None:
    """Every format exits 0 clean, 1 on a deny, 2 on an engine or input error."""
    assert render(scenario, fmt).exit_code == EXIT_CODES[scenario]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_input_errors_render_in_every_format(render: Render, fmt: str) -> None:
    """A schema error shows up with its file and line whatever the format."""
    out = render("broken", fmt)
    file, line, col = out.at('"9000"')
    expected = {
        "text": f"{file}:{line}:{col}: mtu.host-leaf.host:",
        "json": f'"file": "{file}",\n      "line": {line},\n      "col": {col}',
        "sarif": f'"uri": "{file}"',
        "junit": f"{file}:{line}:{col}: mtu.host-leaf.host:",
        "github": f"::error file={file},line={line},col={col},title=plumb%3A input error::",
    }[fmt]
    assert expected in out.text
    assert "Traceback" not in out.text


def test_ci_paths_are_repo_relative_when_run_from_elsewhere(render: Render) -> None:
    """Run from a directory that does not hold the fleet, paths are relative to the repo."""
    assert "::error file=intent/mtu.yaml,line=" in render("violating", "github", cwd="away").text


# -- json -------------------------------------------------------------------------------

TOP_KEYS = ["schema", "fleet", "exit_code", "input_errors"]
REPORT_KEYS = ["summary", "policies", "violations", "waived", "engine_errors"]
VIOLATION_KEYS = {"policy", "severity", "subject", "message", "locations", "objects"}


def _json(render: Render, scenario: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(render(scenario, "json").stdout)
    return doc


def test_json_has_the_documented_keys(render: Render) -> None:
    """A loaded fleet's JSON has the v1 schema id and every documented key, in order."""
    doc = _json(render, "violating")
    assert list(doc) == TOP_KEYS + REPORT_KEYS
    assert doc["schema"] == "plumb.validate/v1"
    assert doc["fleet"] == "orion"
    assert doc["exit_code"] == 1


def test_json_summary_counts_the_findings(render: Render) -> None:
    """The summary counts policies, denies, warnings, waivers and engine errors."""
    assert _json(render, "violating")["summary"] == {
        "policies": len(BUILTIN_IDS),
        "deny": 256,
        "warn": 0,
        "waived": 0,
        "engine_errors": 0,
    }


def test_json_violation_points_at_the_offending_value(render: Render) -> None:
    """Each violation lists the owning value first, then the other values involved."""
    out = render("violating", "json")
    violation = json.loads(out.stdout)["violations"][0]
    assert set(violation) == VIOLATION_KEYS
    file, line, col = out.at("9200")
    _, port_line, port_col = out.at("9214")
    assert violation["locations"] == [
        {"file": file, "line": line, "col": col},
        {"file": file, "line": port_line, "col": port_col},
    ]
    assert violation["policy"] == "mtu.host-fits-port"
    assert violation["severity"] == "deny"
    assert violation["subject"] == "gpu-n01:eth0"
    assert violation["objects"] == ["gpu-n01:eth0", "leaf-r0:Ethernet1"]


def test_json_clean_fleet_lists_policies_and_no_findings(render: Render) -> None:
    """A clean fleet exits 0 with every policy listed and empty finding lists."""
    doc = _json(render, "clean")
    assert doc["exit_code"] == 0
    assert [p["id"] for p in doc["policies"]] == BUILTIN_IDS
    assert all(set(p) == {"id", "severity", "title"} for p in doc["policies"])
    assert doc["violations"] == doc["waived"] == doc["engine_errors"] == []


def test_json_waived_violations_carry_their_waiver(render: Render) -> None:
    """Waived violations move to "waived" with the waiver's reason and expiry."""
    doc = _json(render, "assorted")
    assert len(doc["waived"]) == 8
    assert {v["subject"] for v in doc["waived"]} == {f"gpu-n01:eth{i}" for i in range(8)}
    assert doc["waived"][0]["waiver"] == {
        "reason": "canary node, re-cabled in ticket NET-1",
        "expires": "2027-06-30",
    }
    assert doc["summary"]["deny"] == 248 + 1
    assert doc["summary"]["warn"] == 1


def test_json_expired_waiver_is_a_violation_at_its_line(render: Render) -> None:
    """An expired waiver is a deny violation located at the waiver entry."""
    out = render("assorted", "json")
    expired = [v for v in json.loads(out.stdout)["violations"] if v["policy"] == "waiver.expired"]
    file, line, col = out.at("- policy: bgp.asn-private", "policies/waivers.yaml")
    assert len(expired) == 1
    assert expired[0]["severity"] == "deny"
    assert expired[0]["locations"] == [{"file": file, "line": line, "col": col + 2}]


def test_json_engine_errors_name_the_policy(render: Render) -> None:
    """A policy that raised is listed as an engine error with its exception."""
    doc = _json(render, "engine-error")
    assert doc["engine_errors"] == [
        {"policy": "repo.broken", "error": "RuntimeError: no route to the CMDB"}
    ]
    assert doc["exit_code"] == 2


def test_json_input_errors_replace_the_report(render: Render) -> None:
    """When the repo does not load, only the input errors are given, with no fleet name."""
    out = render("broken", "json")
    doc = json.loads(out.stdout)
    file, line, col = out.at('"9000"')
    assert list(doc) == TOP_KEYS
    assert doc["fleet"] is None
    assert doc["input_errors"] == [
        {
            "file": file,
            "line": line,
            "col": col,
            "message": "mtu.host-leaf.host: Input should be a valid integer (got '9000')",
        }
    ]


# -- sarif ------------------------------------------------------------------------------

LEVEL = {"enum": ["none", "note", "warning", "error"]}
LOCATION = {
    "type": "object",
    "required": ["physicalLocation"],
    "properties": {
        "physicalLocation": {
            "type": "object",
            "required": ["artifactLocation", "region"],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": {"type": "string", "pattern": r"^[^<>\s]+$"}},
                },
                "region": {
                    "type": "object",
                    "required": ["startLine"],
                    "properties": {
                        "startLine": {"type": "integer", "minimum": 1},
                        "startColumn": {"type": "integer", "minimum": 1},
                    },
                },
            },
        }
    },
}
SARIF_SUBSET: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string", "minLength": 1},
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {"level": LEVEL},
                                                },
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "invocations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["executionSuccessful"],
                            "properties": {"executionSuccessful": {"type": "boolean"}},
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "level", "message", "locations"],
                            "properties": {
                                "ruleId": {"type": "string", "minLength": 1},
                                "level": LEVEL,
                                "message": {
                                    "type": "object",
                                    "required": ["text"],
                                    "properties": {"text": {"type": "string"}},
                                },
                                "locations": {"type": "array", "items": LOCATION},
                                "relatedLocations": {"type": "array", "items": LOCATION},
                            },
                        },
                    },
                },
            },
        },
    },
}


def _sarif(render: Render, scenario: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(render(scenario, "sarif").stdout)
    return doc


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_sarif_has_the_2_1_0_structure(render: Render, scenario: str) -> None:
    """Every scenario's SARIF validates against the structure code scanning reads."""
    jsonschema.Draft202012Validator(SARIF_SUBSET).validate(_sarif(render, scenario))


def test_sarif_result_is_at_the_offending_value(render: Render) -> None:
    """The 256 ports one host MTU breaks are one result at the violating value's file
    and line, counting them and naming each."""
    out = render("violating", "sarif")
    results = json.loads(out.stdout)["runs"][0]["results"]
    file, line, col = out.at("9200")
    assert len(results) == 1
    assert results[0]["properties"]["count"] == len(set(results[0]["properties"]["subjects"]))
    assert results[0]["properties"]["count"] == 256
    assert "(and 255 more like it: 256 in all)" in results[0]["message"]["text"]
    for result in results:
        assert result["ruleId"] == "mtu.host-fits-port"
        assert result["level"] == "error"
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == file
        assert physical["region"] == {"startLine": line, "startColumn": col}


def test_sarif_every_result_names_a_declared_rule(render: Render) -> None:
    """Every ruleId, waiver.expired and input.invalid included, is a declared rule."""
    for scenario in ("assorted", "broken"):
        run = _sarif(render, scenario)["runs"][0]
        rules = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
        assert {result["ruleId"] for result in run["results"]} <= rules
    assert "waiver.expired" in {
        r["id"] for r in _sarif(render, "assorted")["runs"][0]["tool"]["driver"]["rules"]
    }


def test_sarif_waived_results_are_suppressed(render: Render) -> None:
    """Waived violations are still a result, suppressed externally with the waiver
    reason (the eight at one line collapse into one counting them)."""
    results = _sarif(render, "assorted")["runs"][0]["results"]
    suppressed = [r for r in results if "suppressions" in r]
    assert len(suppressed) == 1 and suppressed[0]["properties"]["count"] == 8
    assert suppressed[0]["suppressions"] == [
        {"kind": "external", "justification": "canary node, re-cabled in ticket NET-1"}
    ]


def test_sarif_warn_policy_results_are_warnings(render: Render) -> None:
    """A warn-severity finding is a SARIF warning, its rule's default level too."""
    run = _sarif(render, "assorted")["runs"][0]
    assert [r["level"] for r in run["results"] if r["ruleId"] == "repo.rail-leaves"] == ["warning"]
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "repo.rail-leaves")
    assert rule["defaultConfiguration"] == {"level": "warning"}


def test_sarif_engine_error_marks_the_run_unsuccessful(render: Render) -> None:
    """A policy that raised makes the invocation unsuccessful and names the policy."""
    invocation = _sarif(render, "engine-error")["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["descriptor"] == {"id": "repo.broken"}
    clean = _sarif(render, "clean")["runs"][0]["invocations"][0]
    assert clean["executionSuccessful"] is True


def test_sarif_location_less_finding_has_no_location() -> None:
    """A finding with no place in the repo gets no location rather than a bogus uri."""
    finding = Violation("orion.audit", Severity.warn, "fleet", "no owner on file", (), ())
    outcome = ValidateOutcome(Path("."), "orion", (), PolicyReport((), (finding,)))
    doc = json.loads(sarif.render(outcome))
    jsonschema.Draft202012Validator(SARIF_SUBSET).validate(doc)
    assert doc["runs"][0]["results"][0]["locations"] == []


# -- junit ------------------------------------------------------------------------------


def _suite(render: Render, scenario: str) -> ET.Element:
    root = ET.fromstring(render(scenario, "junit").stdout)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0]


def test_junit_has_one_testcase_per_policy(render: Render) -> None:
    """Each policy that ran is one test case named by its id, counted in the suite."""
    suite = _suite(render, "clean")
    assert [case.get("name") for case in suite.iter("testcase")] == BUILTIN_IDS
    assert suite.get("tests") == str(len(BUILTIN_IDS))
    assert (suite.get("failures"), suite.get("errors")) == ("0", "0")


def test_junit_fails_only_deny_policies_with_violations(render: Render) -> None:
    """Only the violated deny policy fails; its failure lists each location."""
    out = render("violating", "junit")
    suite = ET.fromstring(out.stdout).find("testsuite")
    assert suite is not None
    failed = {
        case.get("name"): case
        for case in suite.iter("testcase")
        if case.find("failure") is not None
    }
    assert list(failed) == ["mtu.host-fits-port"]
    assert suite.get("failures") == "1"
    file, line, col = out.at("9200")
    failure = failed["mtu.host-fits-port"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.splitlines()[0].startswith(f"{file}:{line}:{col}: gpu-n01:eth0 host MTU")


def test_junit_warnings_do_not_fail(render: Render) -> None:
    """A warn policy's findings go to system-out of a passing test case."""
    suite = _suite(render, "assorted")
    case = next(c for c in suite.iter("testcase") if c.get("name") == "repo.rail-leaves")
    assert case.find("failure") is None
    out = case.find("system-out")
    assert out is not None and "leaf-r7 serves rail 7" in (out.text or "")


def test_junit_expired_waiver_is_a_failing_testcase(render: Render) -> None:
    """waiver.expired, which is not a registered policy, still gets a failing test case."""
    suite = _suite(render, "assorted")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["waiver.expired"].find("failure")
    assert failure is not None
    assert failure.get("message") == "1 violation(s): waivers must not be expired"
    assert suite.get("tests") == str(len(BUILTIN_IDS) + 2)
    assert suite.get("failures") == "2"


def test_junit_engine_error_is_an_error(render: Render) -> None:
    """A policy that raised is an <error>, not a pass and not a failure."""
    suite = _suite(render, "engine-error")
    case = next(c for c in suite.iter("testcase") if c.get("name") == "repo.broken")
    error = case.find("error")
    assert error is not None and error.get("message") == "RuntimeError: no route to the CMDB"
    assert suite.get("errors") == "1"


def test_junit_input_errors_are_one_erroring_testcase(render: Render) -> None:
    """When the repo does not load, one test case errors with every problem in its body."""
    suite = _suite(render, "broken")
    cases = list(suite.iter("testcase"))
    assert [c.get("name") for c in cases] == ["fleet repo loads"]
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")


# -- github -----------------------------------------------------------------------------

ANNOTATION = re.compile(r"^::(error|warning) file=[^,:]+,line=\d+,col=\d+,title=[^:]+::.+$")


@pytest.mark.parametrize("scenario", ["violating", "assorted", "broken"])
def test_github_lines_are_workflow_commands(render: Render, scenario: str) -> None:
    """Every line is an ::error or ::warning command with file, line, col and title."""
    lines = render(scenario, "github").stdout.splitlines()
    assert lines
    assert all(ANNOTATION.match(line) for line in lines), lines[:3]


def test_github_annotation_is_at_the_offending_value(render: Render) -> None:
    """An annotation names the violating value's file, line and column and the policy."""
    out = render("violating", "github")
    file, line, col = out.at("9200")
    first = out.stdout.splitlines()[0]
    assert first.startswith(
        f"::error file={file},line={line},col={col},title=plumb mtu.host-fits-port::gpu-n01:eth0"
    )


def test_github_collapses_one_policy_at_one_place(render: Render) -> None:
    """The 256 ports one host MTU breaks are one annotation at its line, counting them."""
    lines = render("violating", "github").stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].endswith("(and 255 more like it: 256 in all)")


def test_github_warn_policy_is_a_warning(render: Render) -> None:
    """Warn-severity findings are ::warning annotations; waived ones are not annotated."""
    lines = render("assorted", "github").stdout.splitlines()
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(warnings) == 1 and "title=plumb repo.rail-leaves::" in warnings[0]
    assert not any("gpu-n01:eth0 host MTU" in line for line in lines)


def test_github_engine_error_is_an_error_annotation(render: Render) -> None:
    """A policy that raised becomes an ::error annotation naming the policy."""
    assert render("engine-error", "github").stdout == (
        "::error title=plumb engine error::repo.broken: RuntimeError: no route to the CMDB\n"
    )


def test_github_clean_fleet_prints_nothing(render: Render) -> None:
    """A clean fleet produces no annotations at all."""
    assert render("clean", "github").stdout == ""


def test_github_escapes_properties_and_data() -> None:
    """Commas, colons, newlines and percent signs cannot break out of a command."""
    outcome = ValidateOutcome(
        Path("."),
        None,
        (Problem(Location("intent/a,b:c%\nd.yaml", 3, 4), "bad: 50%,\nsecond line"),),
    )
    assert github.render(outcome) == (
        "::error file=intent/a%2Cb%3Ac%25%0Ad.yaml,line=3,col=4,title=plumb%3A input error"
        "::bad: 50%25,%0Asecond line\n"
    )


def test_github_location_less_finding_names_no_file() -> None:
    """A problem with no place in the repo (line 0) is annotated without a file."""
    outcome = ValidateOutcome(Path("."), None, (Problem(Location("<derived>", 0, 0), "odd"),))
    assert github.render(outcome) == "::error title=plumb%3A input error::odd\n"


# -- text -------------------------------------------------------------------------------


def test_text_groups_by_policy_with_title_count_and_fix(render: Render) -> None:
    """Findings print under their policy with its title, count and remediation."""
    out = render("violating", "text").stdout
    assert out.startswith(
        "DENY mtu.host-fits-port: host_mtu + 22 <= port_mtu of the cabled switch port (256)\n"
    )
    assert "  fix: Lower the host MTU or raise the switch port MTU of that link class.\n" in out
    assert out.endswith(
        f"FAIL: orion: {len(BUILTIN_IDS)} policies, 256 deny, 0 warn, 0 waived, 0 engine errors\n"
    )


def test_text_collapses_repeats_of_one_location(render: Render) -> None:
    """A value that breaks 256 ports prints three of them and a count of the rest."""
    out = render("violating", "text")
    file, line, col = out.at("9200")
    lines = [x for x in out.stdout.splitlines() if x.startswith(f"  {file}:{line}:{col}: ")]
    assert len(lines) == 4
    assert lines[3] == (
        f"  {file}:{line}:{col}: ... and 253 more from this value "
        "(gpu-n01:eth3, gpu-n01:eth4, gpu-n01:eth5, ...)"
    )


def test_text_shows_the_other_values_involved(render: Render) -> None:
    """Each shown finding is followed by "see" lines for the other values it involves."""
    out = render("violating", "text")
    file, line, col = out.at("9214")
    assert out.stdout.splitlines()[2] == f"      see {file}:{line}:{col}"


def test_text_clean_fleet_is_one_ok_line(render: Render) -> None:
    """A clean fleet prints a single ok summary line."""
    assert render("clean", "text").stdout == (
        f"ok: orion: {len(BUILTIN_IDS)} policies, 0 deny, 0 warn, 0 waived, 0 engine errors\n"
    )


def test_text_expired_waiver_has_its_own_group(render: Render) -> None:
    """An expired waiver prints as a deny group of its own."""
    assert "DENY waiver.expired: waivers must not be expired (1)\n" in (
        render("assorted", "text").stdout
    )


def test_text_input_errors_go_to_stderr(render: Render) -> None:
    """Input errors print to stderr, one located line each, then a count."""
    out = render("broken", "text")
    file, line, col = out.at('"9000"')
    assert out.stdout == ""
    assert out.stderr == (
        f"{file}:{line}:{col}: mtu.host-leaf.host: Input should be a valid integer (got '9000')\n"
        "error: 1 problem(s) in the fleet repo; nothing was evaluated\n"
    )
