"""The review's formats: the JSON schema's keys, SARIF at the offending value with a
baseline state, JUnit with one case per policy, --report files, and which observed
state the plan compares against."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.ci.gitfleet import FLEET_DIR, GitFleet
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet

TOP_KEYS = [
    "schema",
    "fleet",
    "verdict",
    "exit_code",
    "blockers",
    "base",
    "head",
    "fleet_path",
    "files_changed",
    "observed",
    "input_errors",
    "changes",
    "policies",
    "plan",
    "blast_radius",
    "drain",
    "rollouts",
]


def test_json_has_the_documented_keys_in_order(changes: GitFleet) -> None:
    """plumb.review/v1 keeps its documented keys; the plan and rollout embed their schemas."""
    doc = changes.reviewed("main", "firmware").json
    assert list(doc) == TOP_KEYS
    assert set(doc["blast_radius"]["counts"]) == {
        "devices", "switches", "hosts", "ports", "gpus", "racks", "rails", "gangs"
    }  # fmt: skip
    assert doc["plan"]["schema"] == "plumb.plan/v1"
    assert doc["rollouts"][0]["plan"]["schema"] == "plumb.rollout-plan/v1"
    assert doc["head"]["commit"] == changes.git("rev-parse", "firmware")
    assert doc["base"] == {
        "rev": "main",
        "commit": changes.git("rev-parse", "main"),
        "summary": "ORION as in examples/",
    }


def test_sarif_places_every_result_and_marks_what_is_new(changes: GitFleet) -> None:
    """Each result has a location (the 256 findings at one line are one result);
    introduced findings are new, a refused plan sits on
    plumb.yaml; on a change over a broken base every finding is unchanged."""
    results = json.loads(changes.reviewed("main", "mtu").reports["sarif"])["runs"][0]["results"]
    assert all(r["locations"] for r in results)
    policy = [r for r in results if r["ruleId"] == "mtu.host-fits-port"]
    assert len(policy) == 1 and {r["baselineState"] for r in policy} == {"new"}
    assert policy[0]["properties"]["count"] == 256
    region = policy[0]["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == f"{FLEET_DIR}/intent/mtu.yaml"
    [refused] = [r for r in results if r["ruleId"] == "review.plan"]
    assert refused["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        f"{FLEET_DIR}/plumb.yaml"
    )
    later = json.loads(changes.reviewed("mtu", "mtu-then-clean").reports["sarif"])
    states = {r["baselineState"] for r in later["runs"][0]["results"]}
    assert states == {"unchanged"}


def test_junit_has_one_case_per_policy_failing_only_the_new(changes: GitFleet) -> None:
    """Policies the change breaks fail; the plan and rollout are cases of their own."""
    done = changes.reviewed("main", "roce")
    doc = done.json
    suite = ET.fromstring(done.reports["junit"]).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    policies = [c.get("name") for c in cases if c.get("classname") == "plumb.policy"]
    assert len(policies) == doc["policies"]["summary"]["policies"] == len(set(policies))
    failing = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failing == {v["policy"] for v in doc["policies"]["introduced"]}
    review = [c.get("name") for c in cases if c.get("classname") == "plumb.review"]
    assert review == ["plan has a safe order", "rollout default can be planned"]
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == str(len(failing))


def test_report_files_hold_what_the_format_prints(changes: GitFleet, tmp_path: Path) -> None:
    """--report FORMAT=FILE writes the same bytes --format FORMAT prints (--output too)."""
    written, output = tmp_path / "review.md", tmp_path / "printed.json"
    args = ("--base", "main", "--head", "schema", "-f", "json", "--output", str(output))
    done = changes.review(*args, "--report", f"markdown={written}")
    assert written.read_text() == changes.reviewed("main", "schema").markdown
    assert output.read_text() == done.stdout == changes.reviewed("main", "schema").reports["json"]


def test_unknown_report_format_is_a_usage_error(changes: GitFleet) -> None:
    done = changes.review("--base", "main", "--report", "pdf=x.pdf")
    assert done.exit_code == 2 and "--report 'pdf=x.pdf'" in done.stderr


def test_head_that_does_not_load_reads_as_such_in_markdown(changes: GitFleet) -> None:
    markdown = changes.reviewed("main", "schema").markdown
    assert "### ❌ plumb review: blocked" in markdown
    assert "Head does not load (1 problem(s))" in markdown
    assert f"`{FLEET_DIR}/intent/mtu.yaml:" in markdown


def test_the_lab_is_the_observed_state_when_the_working_tree_has_one(
    own_git_fleet: GitFleet,
) -> None:
    """With a lab database in the working tree, the plan is against the lab's devices
    (older firmware there), while the rollout carries only what the change moves."""
    repo = own_git_fleet
    lab = LabFleet.create(FleetCopy(repo.top / FLEET_DIR))
    lab.close()
    repo.fleet.replace("intent/bgp.yaml", "maximum_paths: 64", "maximum_paths: 48")
    repo.git("commit", "-q", "-am", "fewer paths")
    doc = repo.review("--base", "HEAD~1", "-f", "json").json()
    assert doc["observed"]["source"] == "lab"
    assert doc["plan"]["summary"]["devices_changing"] == 45
    [rollout] = doc["rollouts"]
    assert rollout["plan"]["targets"]["planned"] == 12
    assert rollout["plan"]["components"] == ["bgp"]


def test_review_formats_are_the_command_s_formats() -> None:
    """The names the command accepts are exactly the formats it can render."""
    from ci.review.render import REVIEW_FORMATS
    from plumb.cmd_review import FORMATS

    assert tuple(REVIEW_FORMATS) == FORMATS


def test_importing_the_commands_does_not_load_rollout_planning() -> None:
    """`plumb review` and `plumb snapshot` leave rollout planning to the moment a review
    runs."""
    code = (
        "import sys, plumb.cmd_review, plumb.cmd_snapshot;"
        " print('rollouts.planning' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
