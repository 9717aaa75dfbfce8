"""A spec's acceptance tests are the evidence of its ``acceptance_failed`` hard fault:
a wave whose nodes all pass their test is judged (not held for "no evidence" because
no telemetry acceptance run fell inside a short bake), and a failing test aborts it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus
from tests.rollouts.gitfleet import GitFleet

SPEC = "hx8-accept"
CHECK = """import sys
from pathlib import Path
node = sys.argv[1]
if (Path({failing!r}) / node).exists():
    print("busbw=12.0")
    sys.exit(1)
print("busbw=389.5")
"""


def _spec(script: Path) -> str:
    return f"""rollout:
  name: {SPEC}
  targets: {{select: "name=gpu-n0[1-4]", paths: ["firmware/*"]}}
  waves: {{growth: 4.0}}
  bake: {{mode: fixed, fixed_minutes: 30.0}}
  drain: true
  acceptance:
    gpu-node: {{command: "{sys.executable} {script} {{node}}", timeout_seconds: 30, run: local}}
  abort: {{hard_faults: [acceptance_failed, unreachable, unknown]}}
  rollback: {{automatic: false}}
  seed: 11
"""


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    made = GitFleet.create(tmp_path)
    failing = tmp_path / "failing"
    failing.mkdir()
    script = tmp_path / "check.py"
    script.write_text(CHECK.format(failing=str(failing)))
    made.copy.write(f"rollouts/{SPEC}.yaml", _spec(script))
    made.commit("a rollout with an acceptance test")
    return made


def _acceptance_messages(fleet: GitFleet, rollout: str) -> list[str]:
    with fleet.db() as db:
        waves = db.journal.waves(rollout)
    return [
        m["message"]
        for w in waves
        for m in (w.evidence or {}).get("measurements", [])
        if m["metric"] == "hard_fault/acceptance_failed"
    ]


def test_passing_acceptance_tests_let_the_waves_be_judged(fleet: GitFleet) -> None:
    """Every node passes its test: no wave holds for want of evidence; it completes."""
    run = fleet.plumb("rollout", "start", SPEC, ".")
    assert run.exit_code == 0, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    messages = _acceptance_messages(fleet, rollout)
    assert messages and all("no evidence" not in m for m in messages), messages
    with fleet.db() as db:
        row = db.journal.get(rollout)
    assert row is not None and row.status is RolloutStatus.completed


def test_a_failing_acceptance_test_fails_the_hard_fault(
    fleet: GitFleet, tmp_path: Path
) -> None:
    """A node failing its test counts as acceptance_failed: the wave aborts on it."""
    for node in ("gpu-n01", "gpu-n02", "gpu-n03", "gpu-n04"):
        (tmp_path / "failing" / node).touch()
    run = fleet.plumb("rollout", "start", SPEC, ".")
    assert run.exit_code == 1, run.stdout + run.stderr
    messages = _acceptance_messages(fleet, fleet.only_rollout())
    assert any("acceptance_failed" in m and "no evidence" not in m for m in messages), messages
