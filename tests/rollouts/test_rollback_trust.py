"""Rollback as a user meets it on a fresh lab with drift: counts that agree between
the output and the journal, a refused restore that names a next step which works,
a one-target rollback that leaves the rollout's other changes visible, and a second
rollback with nothing to do that changes nothing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus, TargetStatus, WaveStatus
from tests.fleetcopy import FleetCopy, copy_orion
from tests.rollouts.gitfleet import GitFleet, git

QOS = "qos-mtu-tune"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh lab (with its drift, e.g. a switch port's PFC priorities changed by hand)
    and a committed ECN change rolled out to completion over the switches."""
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


def clone(template: Path, where: Path) -> GitFleet:
    shutil.copytree(template, where / "orion")
    return GitFleet(FleetCopy(where / "orion"))


@pytest.fixture(scope="module")
def kept_by_drift(template: Path, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The targets whose before-state disagrees with a peer (the lab's drift), as a
    safe-subset emergency rollback on a scratch copy finds them."""
    scratch = clone(template, tmp_path_factory.mktemp("scratch"))
    rollout = scratch.only_rollout()
    scratch.plumb("rollback", rollout, ".", "--emergency", "--only-safe")
    return statuses(scratch, rollout).get(TargetStatus.applied, set())


@pytest.fixture
def fleet(template: Path, tmp_path: Path) -> GitFleet:
    return clone(template, tmp_path)


def statuses(fleet: GitFleet, rollout: str) -> dict[TargetStatus, set[str]]:
    found: dict[TargetStatus, set[str]] = {}
    for target in fleet.targets(rollout):
        found.setdefault(target.status, set()).add(target.device)
    return found


def counts(text: str) -> dict[str, int]:
    found = re.search(
        r"restored (\d+) target\(s\), (\d+) already at their before-state, (\d+) failed", text
    )
    assert found, text
    return dict(zip(("restored", "already", "failed"), map(int, found.groups()), strict=True))


def test_emergency_restores_what_it_safely_can_at_once(
    fleet: GitFleet, kept_by_drift: set[str]
) -> None:
    """An emergency rollback does not refuse every target for one unsafe pair: it
    restores every target whose restore is safe in one run, keeps the drifted ones at
    the intended state (exit 1 while any is kept), and says why in one block per
    reason, not one sentence per target; counts agree with the journal."""
    rollout = fleet.only_rollout()
    everyone = {t.device for t in fleet.targets(rollout)}
    assert kept_by_drift and kept_by_drift < everyone
    run = fleet.plumb("rollback", rollout, ".", "--emergency")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert statuses(fleet, rollout) == {
        TargetStatus.rolled_back: everyone - kept_by_drift,
        TargetStatus.applied: kept_by_drift,
    }
    restored = len(everyone) - len(kept_by_drift)
    assert counts(run.stdout) == {"restored": restored, "already": 0, "failed": 0}
    assert f"{len(kept_by_drift)} kept as they are" in run.stdout
    blocks = run.stderr.count("  KEPT at the intended state: ")
    assert 1 <= blocks <= len(kept_by_drift)
    assert run.stderr.count("    why: ") == blocks  # each reason said once
    for name in kept_by_drift:
        assert name in run.stderr
    with fleet.db() as db:
        row = db.journal.get(rollout)
    assert row is not None
    assert f"restored {restored} target(s)" in (row.reason or "")


def test_refused_rollback_names_a_next_step_that_works(
    fleet: GitFleet, kept_by_drift: set[str]
) -> None:
    """--scope rollout restores wave by wave until a wave's drifted before-state is
    refused, and says to add --only-safe; that keeps the drifted targets at intent,
    every other target is exactly at its before-state, only restored fields are
    pinned, and the rollout is not called rolled back."""
    rollout = fleet.only_rollout()
    rows = fleet.targets(rollout)
    before = {t.device: dict(t.before or {}) for t in rows}
    intended = {t.device: dict(t.intended) for t in rows}
    run = fleet.plumb("rollback", rollout, ".", "--scope", "rollout")
    assert run.exit_code == 1
    found = statuses(fleet, rollout)
    said = counts(run.stdout)
    assert said["failed"] == len(found[TargetStatus.rollback_failed]) > 0
    assert said["restored"] == len(found.get(TargetStatus.rolled_back, set()))
    skipped = found.get(TargetStatus.applied, set())
    assert not skipped or f"{len(skipped)} not attempted" in run.stdout
    assert "REFUSED" in run.stderr
    # the suggested command names the fleet repo, wherever it was run from
    assert re.search(rf"plumb rollback {rollout} \S+ --scope rollout --only-safe", run.stderr)
    run = fleet.plumb("rollback", rollout, ".", "--scope", "rollout", "--only-safe")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert counts(run.stdout)["already"] == said["restored"]
    assert "  KEPT at the intended state: " in run.stderr
    for name in kept_by_drift:
        assert name in run.stderr.split("  KEPT at the intended state: ", 1)[1]
    running = fleet.running()
    for device, values in before.items():
        wanted = intended[device] if device in kept_by_drift else values
        assert {p: running[device].get(p) for p in values} == wanted, device
    assert statuses(fleet, rollout)[TargetStatus.applied] == kept_by_drift
    with fleet.db() as db:
        row = db.journal.get(rollout)
        pinned = {p.device for p in db.journal.pins(rollout)}
    assert row is not None and row.status is RolloutStatus.aborted
    left = f"{len(kept_by_drift)} of {len(before)} changed target(s) still hold the change"
    assert left in (row.reason or "")
    assert pinned and not pinned & kept_by_drift


def test_one_target_rollback_does_not_roll_back_the_rollout(
    fleet: GitFleet, kept_by_drift: set[str]
) -> None:
    """Restoring one target leaves the others changed: the rollout and its waves are
    not rolled_back, and the reason says how many still hold the change."""
    rollout = fleet.only_rollout()
    rows = fleet.targets(rollout)
    one = min({t.device for t in rows} - kept_by_drift)
    run = fleet.plumb("rollback", rollout, ".", "--target", one)
    assert run.exit_code == 0, run.stdout + run.stderr
    with fleet.db() as db:
        row = db.journal.get(rollout)
        waves = db.journal.waves(rollout)
    assert row is not None and row.status is not RolloutStatus.rolled_back
    assert f"{len(rows) - 1} of {len(rows)} changed target(s) still hold the change" in (
        row.reason or ""
    )
    mine = next(t.wave for t in rows if t.device == one)
    others = [t for t in rows if t.wave == mine and t.device != one]
    assert (waves[mine - 1].status is WaveStatus.rolled_back) == (not others)


def test_a_second_rollback_with_nothing_to_do_changes_nothing(
    fleet: GitFleet, kept_by_drift: set[str]
) -> None:
    """The reason and the pins' reason of the first rollback survive a second one."""
    rollout = fleet.only_rollout()
    one = min({t.device for t in fleet.targets(rollout)} - kept_by_drift)
    run = fleet.plumb("rollback", rollout, ".", "-t", one, "--reason", "first")
    assert run.exit_code == 0
    with fleet.db() as db:
        first = db.journal.get(rollout)
        pins = db.journal.pins(rollout)
    run = fleet.plumb("rollback", rollout, ".", "-t", one, "--reason", "second")
    assert run.exit_code == 0
    assert "nothing left to restore" in run.stdout + run.stderr
    with fleet.db() as db:
        again = db.journal.get(rollout)
        pins_again = db.journal.pins(rollout)
    assert first is not None and again is not None
    assert (again.status, again.reason) == (first.status, first.reason)
    assert [(p.id, p.reason) for p in pins_again] == [(p.id, p.reason) for p in pins]
    assert pins and all("first" in p.reason for p in pins)


def test_a_wave_rollback_without_wave_names_the_wave_it_took(fleet: GitFleet) -> None:
    """`rollback --scope wave` with no --wave says which wave it picked and why, and
    restores exactly that wave's targets."""
    rollout = fleet.only_rollout()
    rows = fleet.targets(rollout)
    latest = max(t.wave for t in rows)
    run = fleet.plumb("rollback", rollout, ".", "--scope", "wave")
    assert f"rolling back wave {latest} (the latest wave with written targets;" in run.stdout
    touched = {t.device for t in fleet.targets(rollout) if t.status is not TargetStatus.applied}
    assert touched == {t.device for t in rows if t.wave == latest}
