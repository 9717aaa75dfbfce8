"""Rollback as a user meets it on a fresh lab with drift: counts that agree between
the output and the journal, a refused restore that names a next step which works,
a one-target rollback that leaves the rollout's other changes visible, and a second
rollback with nothing to do that changes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus, TargetStatus, WaveStatus
from tests.fleetcopy import copy_orion
from tests.rollouts.gitfleet import GitFleet, git

QOS = "qos-mtu-tune"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh lab (with its drift: leaf-r2 Ethernet22 carries PFC '3,4' by hand) and a
    committed ECN change rolled out to completion over 9 switches."""
    copy = copy_orion(tmp_path_factory.mktemp("rollback-trust"))
    copy.write(".gitignore", ".plumb/\n")
    git(copy.path, "init", "-q", "-b", "main")
    fleet = GitFleet(copy)
    fleet.commit("ORION as shipped")
    assert fleet.plumb("lab", "init", ".").exit_code == 0
    copy.replace("intent/qos.yaml", "kmin_kb: 200", "kmin_kb: 180")
    fleet.commit("ECN Kmin 180")
    run = fleet.plumb("rollout", "start", QOS, ".")
    assert run.exit_code == 0, run.stdout + run.stderr
    return copy.path


@pytest.fixture
def fleet(template: Path, tmp_path: Path) -> GitFleet:
    import shutil

    from tests.fleetcopy import FleetCopy

    where = tmp_path / "orion"
    shutil.copytree(template, where)
    return GitFleet(FleetCopy(where))


def counts(text: str) -> dict[str, int]:
    found = re.search(
        r"restored (\d+) target\(s\), (\d+) already at their before-state, (\d+) failed", text
    )
    assert found, text
    return dict(zip(("restored", "already", "failed"), map(int, found.groups()), strict=True))


def journal_counts(fleet: GitFleet, rollout: str) -> dict[TargetStatus, set[str]]:
    found: dict[TargetStatus, set[str]] = {}
    for target in fleet.targets(rollout):
        found.setdefault(target.status, set()).add(target.device)
    return found


DRIFTED = {"leaf-r2", "leaf-r5"}  # before-states at odds with their peers (lab drift)


def test_emergency_counts_agree_with_the_journal(fleet: GitFleet) -> None:
    """A refused emergency rollback counts every target it could not restore, in the
    summary, the FAILED lines and the rollout's reason alike; --only-safe then
    restores the 7 others and keeps the 2 drifted ones at intent."""
    rollout = fleet.only_rollout()
    run = fleet.plumb("rollback", rollout, ".", "--emergency")
    assert run.exit_code == 1
    failed = journal_counts(fleet, rollout)[TargetStatus.rollback_failed]
    assert len(failed) == 9
    assert counts(run.stdout)["failed"] == len(failed)
    assert run.stderr.count("  FAILED ") == len(failed)
    assert f"plumb rollback {rollout} --emergency --only-safe" in run.stderr
    with fleet.db() as db:
        row = db.journal.get(rollout)
    assert row is not None and "rollback (emergency): restored 0 target(s)" in (row.reason or "")
    assert "9 failed" in (row.reason or "")
    run = fleet.plumb("rollback", rollout, ".", "--emergency", "--only-safe")
    assert run.exit_code == 1  # two targets still hold the change
    assert counts(run.stdout) == {"restored": 7, "already": 0, "failed": 0}
    assert "2 kept as they are" in run.stdout
    assert journal_counts(fleet, rollout) == {
        TargetStatus.rolled_back: {t.device for t in fleet.targets(rollout)} - DRIFTED,
        TargetStatus.applied: DRIFTED,
    }


def test_refused_rollback_names_a_next_step_that_works(fleet: GitFleet) -> None:
    """--scope rollout restores waves 5..2, is refused on wave 1's drifted
    before-states and says to add --only-safe; that keeps the 2 drifted targets at
    intent, every other target is exactly at its before-state, only restored fields
    are pinned, and the rollout is not called rolled back."""
    rollout = fleet.only_rollout()
    before = {t.device: dict(t.before or {}) for t in fleet.targets(rollout)}
    intended = {t.device: dict(t.intended) for t in fleet.targets(rollout)}
    run = fleet.plumb("rollback", rollout, ".", "--scope", "rollout")
    assert run.exit_code == 1
    assert counts(run.stdout) == {"restored": 7, "already": 0, "failed": 2}
    assert journal_counts(fleet, rollout)[TargetStatus.rollback_failed] == DRIFTED
    assert "REFUSED" in run.stderr
    assert f"plumb rollback {rollout} --scope rollout --only-safe" in run.stderr
    run = fleet.plumb("rollback", rollout, ".", "--scope", "rollout", "--only-safe")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert counts(run.stdout) == {"restored": 0, "already": 7, "failed": 0}
    assert "KEPT leaf-r2 at the intended state" in run.stderr
    running = fleet.running()
    for device, values in before.items():
        wanted = intended[device] if device in DRIFTED else values
        assert {p: running[device].get(p) for p in values} == wanted, device
    assert journal_counts(fleet, rollout)[TargetStatus.applied] == DRIFTED
    with fleet.db() as db:
        row = db.journal.get(rollout)
        pinned = {p.device for p in db.journal.pins(rollout)}
    assert row is not None and row.status is RolloutStatus.aborted
    assert "2 of 9 changed target(s) still hold the change" in (row.reason or "")
    assert pinned and not pinned & DRIFTED


def test_one_target_rollback_does_not_roll_back_the_rollout(fleet: GitFleet) -> None:
    """Restoring leaf-r0 alone leaves 8 changed targets: the rollout and its wave are
    not rolled_back, and the reason says so."""
    rollout = fleet.only_rollout()
    run = fleet.plumb("rollback", rollout, ".", "--target", "leaf-r0")
    assert run.exit_code == 0, run.stdout + run.stderr
    with fleet.db() as db:
        row = db.journal.get(rollout)
        waves = db.journal.waves(rollout)
    assert row is not None and row.status is not RolloutStatus.rolled_back
    assert "8 of 9 changed target(s) still hold the change" in (row.reason or "")
    assert all(w.status is not WaveStatus.rolled_back for w in waves)


def test_a_second_rollback_with_nothing_to_do_changes_nothing(fleet: GitFleet) -> None:
    """The reason and the pins' reason of the first rollback survive a second one."""
    rollout = fleet.only_rollout()
    assert (
        fleet.plumb("rollback", rollout, ".", "-t", "leaf-r0", "--reason", "first").exit_code == 0
    )
    with fleet.db() as db:
        first = db.journal.get(rollout)
        pins = db.journal.pins(rollout)
    run = fleet.plumb("rollback", rollout, ".", "-t", "leaf-r0", "--reason", "second")
    assert run.exit_code == 0
    assert "nothing left to restore" in run.stdout + run.stderr
    with fleet.db() as db:
        again = db.journal.get(rollout)
        pins_again = db.journal.pins(rollout)
    assert first is not None and again is not None
    assert (again.status, again.reason) == (first.status, first.reason)
    assert [(p.id, p.reason) for p in pins_again] == [(p.id, p.reason) for p in pins]
    assert pins and all("first" in p.reason for p in pins)
