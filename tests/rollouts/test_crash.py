"""Crash safety: ``plumb rollout start`` is killed with SIGKILL at many points (after
the N-th journal transaction, right after a device write before its outcome is
journaled, and at random wall-clock moments), then resumed until the rollout settles.
After every run:

* no target was written twice (the lab counts commits per device);
* no before-state was lost: every written target has one, equal to what the device
  held before the rollout;
* every target ends at its before-state or at the intended state (healthy change:
  all at the intended state; defective change: the canary is rolled back);
* the audit chain verifies.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import PLUMB, plumb_env
from tests.rollouts.gitfleet import FIRMWARE, GitFleet
from tests.rollouts.test_execute import GPU_NODES, NEW, firmware

HEALTHY_JOURNAL_STEPS = 110  # journal transactions of the whole healthy rollout
DEFECT_JOURNAL_STEPS = 32  # ... of the canary, its abort and the rollback
_rng = random.Random(20261202)
HEALTHY_POINTS = sorted({1, 2, 3, *_rng.sample(range(4, HEALTHY_JOURNAL_STEPS), 5)})
DEFECT_POINTS = sorted({*_rng.sample(range(10, DEFECT_JOURNAL_STEPS + 1), 3)})


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> GitFleet:
    return GitFleet.create(tmp_path_factory.mktemp("crash-template"))


def _clone(template: GitFleet, where: Path) -> GitFleet:
    shutil.copytree(template.root, where / "orion", symlinks=True)
    return GitFleet(FleetCopy(where / "orion"), template.base, template.change)


def _start(fleet: GitFleet, failpoint: str | None) -> subprocess.Popen[str]:
    env = plumb_env()
    if failpoint:
        env["PLUMB_FAILPOINT"] = failpoint
    return subprocess.Popen(
        [str(PLUMB), "rollout", "start", FIRMWARE, "."],
        cwd=fleet.root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _settle(fleet: GitFleet) -> str | None:
    """Resume until the rollout is no longer active; None if it was never journaled."""
    with fleet.db() as db:
        rows = db.journal.all()
    if not rows:
        return None
    rollout = rows[0].id
    for _ in range(4):
        with fleet.db() as db:
            row = db.journal.get(rollout)
            holder = db.lease.current()
        assert row is not None
        if not row.status.active:
            return rollout
        if holder is not None:
            broken = fleet.plumb("lease", "break", ".", "--reason", "killed in a crash drill")
            assert broken.exit_code == 0, broken.stderr
        resumed = fleet.plumb("rollout", "resume", rollout, ".")
        assert resumed.exit_code in (0, 1), resumed.stdout + resumed.stderr
    raise AssertionError(f"rollout {rollout} did not settle")


def _check(fleet: GitFleet, initial: dict[str, dict[str, object]], *, defect: bool) -> None:
    rollout = _settle(fleet)
    if rollout is None:  # killed before the rollout was journaled: start again
        broken = fleet.plumb("lease", "break", ".", "--reason", "killed in a crash drill")
        assert broken.exit_code == 0, broken.stderr
        done = fleet.plumb("rollout", "start", FIRMWARE, ".")
        assert done.exit_code in (0, 1), done.stdout + done.stderr
        rollout = fleet.only_rollout()
    with fleet.db() as db:
        row = db.journal.get(rollout)
        targets = db.journal.targets(rollout)
        verdict = db.audit.verify()
    assert row is not None
    writes = fleet.device_writes()
    running = fleet.running()
    for target in targets:
        name = target.device
        if writes.get(name, 0):
            assert target.before == firmware(initial[name]), f"{name}: before-state lost"
        assert firmware(running[name]) in (firmware(initial[name]), NEW), name
    if defect:
        assert row.status is RolloutStatus.rolled_back, row.reason
        changed = {n for n, c in writes.items() if c}
        canary = {t.device for t in targets if t.wave == 1}
        assert changed <= canary
        assert all(writes[n] <= 2 for n in changed), writes  # once forward, once back
        assert running == initial
    else:
        assert row.status is RolloutStatus.completed, row.reason
        assert writes == dict.fromkeys(GPU_NODES, 1), "a target was written twice (or never)"
        # the journal counts every write, also one whose outcome a kill kept it from hearing
        assert {t.device: t.writes for t in targets} == dict.fromkeys(GPU_NODES, 1)
        assert all(firmware(running[n]) == NEW for n in GPU_NODES)
    assert verdict.ok, [str(p) for p in verdict.problems]


@pytest.mark.parametrize(
    ("failpoint", "defect"),
    [(f"journal:{k}", False) for k in HEALTHY_POINTS]
    + [(f"journal:{k}", True) for k in DEFECT_POINTS]
    + [("write:1", False), ("write:9", False), ("write:2", True)],
)
def test_sigkill_at_a_journal_step_then_resume(
    template: GitFleet, tmp_path: Path, failpoint: str, defect: bool
) -> None:
    fleet = _clone(template, tmp_path)
    if defect:
        fleet.hide_b0_defect()
    initial = fleet.running()
    process = _start(fleet, failpoint)
    _, err = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL, f"{failpoint} never fired: {err[-800:]}"
    _check(fleet, initial, defect=defect)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_at_a_random_moment_then_resume(
    template: GitFleet, tmp_path: Path, seed: int
) -> None:
    fleet = _clone(template, tmp_path)
    initial = fleet.running()
    process = _start(fleet, None)
    time.sleep(random.Random(seed).uniform(2.0, 4.5))  # past start-up, inside the waves
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    _check(fleet, initial, defect=False)


@pytest.mark.parametrize("point", [3, 5])
def test_sigkill_during_an_emergency_rollback_then_resume(
    template: GitFleet, tmp_path: Path, point: int
) -> None:
    """The interrupted rollback is finished on resume: every target restored, none
    left drained, the rollout rolled back (not a smaller scope reported as done)."""
    fleet = _clone(template, tmp_path)
    initial = fleet.running()
    assert fleet.plumb("rollout", "start", FIRMWARE, ".").exit_code == 0
    rollout = fleet.only_rollout()
    env = plumb_env()
    env["PLUMB_FAILPOINT"] = f"journal:{point}"
    killed = subprocess.run(
        [str(PLUMB), "rollback", rollout, ".", "--emergency"],
        cwd=fleet.root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-800:]
    assert fleet.plumb("lease", "break", ".", "--reason", "drill").exit_code == 0
    resumed = fleet.plumb("rollout", "resume", rollout, ".")
    assert resumed.exit_code == 1, resumed.stdout + resumed.stderr  # rolled back
    with fleet.db() as db:
        row = db.journal.get(rollout)
        targets = db.journal.targets(rollout)
        assert db.audit.verify().ok
    assert row is not None and row.status is RolloutStatus.rolled_back, row
    assert {t.status.value for t in targets} == {"rolled_back"}
    assert {t.lifecycle.value for t in targets} == {"in_service"}
    assert fleet.running() == initial
    assert all(count <= 2 for count in fleet.device_writes().values())


@pytest.mark.parametrize(
    ("failpoint", "defect"),
    [
        (f"journal:{HEALTHY_POINTS[0]}", False),
        (f"journal:{HEALTHY_POINTS[-1]}", False),
        (f"journal:{DEFECT_POINTS[-1]}", True),
        ("write:9", False),
    ],
)
def test_sigkill_then_resume_with_the_state_on_postgresql(
    template: GitFleet,
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    failpoint: str,
    defect: bool,
) -> None:
    """The same drills with the state in PostgreSQL: a SIGKILLed rollout resumes to the
    same end, its before-states kept and its audit chain whole."""
    monkeypatch.setenv("PLUMB_STATE_URL", pg_url)
    fleet = _clone(template, tmp_path)
    fleet.copy.append("plumb.yaml", "\nstate:\n  backend: postgresql\n")
    fleet.commit("state on PostgreSQL")
    if defect:
        fleet.hide_b0_defect()
    initial = fleet.running()
    process = _start(fleet, failpoint)
    _, err = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL, f"{failpoint} never fired: {err[-800:]}"
    _check(fleet, initial, defect=defect)
