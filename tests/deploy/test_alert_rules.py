"""deploy/prometheus/plumb-serve-rules.yml: promtool accepts the rules, its unit tests
(deploy/prometheus/plumb-serve-rules.test.yml: input series, the alerts expected at
each time) pass, every alert has a test that fires it, and the rules name only metrics
the controller exports."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.deploy.promql import exported_samples, unknown_names
from tests.deploy.tools import DEPLOY, require

RULES = DEPLOY / "prometheus" / "plumb-serve-rules.yml"
TESTS = DEPLOY / "prometheus" / "plumb-serve-rules.test.yml"


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = require("promtool", "prometheus")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


def alerts() -> list[dict[str, Any]]:
    return [rule for group in load(RULES)["groups"] for rule in group["rules"]]


def test_promtool_accepts_the_rules() -> None:
    """`promtool check rules` parses every expression and template."""
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in done.stdout


def test_the_rules_unit_tests_pass() -> None:
    """`promtool test rules`: each alert fires when and only when its test expects."""
    done = promtool("test", "rules", str(TESTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_a_wrong_expectation_fails_the_unit_tests(tmp_path: Path) -> None:
    """The harness can fail: expecting the no-leader alert before its 5 minutes is refused."""
    shutil.copy(RULES, tmp_path / RULES.name)
    tests = load(TESTS)
    leadership = next(t for t in tests["tests"] if t["name"] == "leadership")
    early = next(c for c in leadership["alert_rule_test"] if c["eval_time"] == "12m")
    late = next(c for c in leadership["alert_rule_test"] if c["eval_time"] == "16m")
    early["exp_alerts"] = late["exp_alerts"]
    broken = tmp_path / TESTS.name
    with broken.open("w") as out:
        YAML(typ="safe").dump(tests, out)
    done = promtool("test", "rules", str(broken))
    assert done.returncode != 0
    assert "FAILED" in done.stdout + done.stderr
    assert "PlumbServeNoLeader" in done.stdout + done.stderr


def test_every_alert_has_a_test_that_fires_it() -> None:
    """No alert goes untested: each is expected to fire in some test case."""
    fired = {
        case["alertname"]
        for test in load(TESTS)["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert {a["alert"] for a in alerts()} == fired


def test_the_rules_name_only_exported_metrics() -> None:
    """Every metric a rule selects is on the controller's /metrics."""
    assert unknown_names([a["expr"] for a in alerts()], set(exported_samples())) == {}


def test_every_alert_says_how_bad_and_what_happened() -> None:
    """A severity label and a summary and description for whoever is paged."""
    for alert in alerts():
        assert alert["labels"]["severity"] in {"critical", "warning"}, alert["alert"]
        assert alert["annotations"]["summary"] and alert["annotations"]["description"]
