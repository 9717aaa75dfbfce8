"""One writer per field from the command line: while a rollout holds before a wave,
`plumb plan` shows its later waves' changes as OWNED and `plumb apply` never writes
them, unless an operator takes them over with a reason, audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus
from tests.rollouts.gitfleet import GitFleet
from tests.serve.test_rollouts_serve import SPEC

NAME = "hx8-serve"
BUNDLE = "firmware/nic_firmware"
OLD, NEW = "28.41.1000", "28.43.1014"


@pytest.fixture
def held(tmp_path: Path) -> tuple[GitFleet, str]:
    """A firmware rollout that did its canary and waits for promotion of wave 2."""
    fleet = GitFleet.create(tmp_path)
    fleet.copy.write(f"rollouts/{NAME}.yaml", SPEC)
    fleet.commit("rollout spec")
    run = fleet.plumb("rollout", "start", NAME, ".")
    assert run.exit_code == 3, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    with fleet.db() as db:
        row = db.journal.get(rollout)
        assert row is not None and row.status is RolloutStatus.awaiting_promotion
    return fleet, rollout


def _later_targets(fleet: GitFleet, rollout: str) -> dict[str, int]:
    return {t.device: t.wave for t in fleet.targets(rollout) if t.wave >= 2}


def test_plan_shows_the_rollouts_pending_changes_as_owned(held: tuple[GitFleet, str]) -> None:
    """The later waves' bundle changes are not in the plan's steps but OWNED, per wave."""
    fleet, rollout = held
    later = _later_targets(fleet, rollout)
    assert later
    run = fleet.plumb("plan", ".", "-f", "json")
    document = json.loads(run.stdout)
    planned = {
        (name, c["path"]) for name, d in document["devices"].items() for c in d["changes"]
    }
    assert not any(path.startswith("firmware/") for _, path in planned)
    owned = {
        (name, o["path"]): o["owner"]
        for name, d in document["devices"].items()
        for o in d["owned"]
    }
    for device, wave in later.items():
        assert owned[(device, BUNDLE)] == f"rollout {rollout} (wave {wave})"
    assert document["summary"]["owned"] == len(owned)
    text = fleet.plumb("plan", ".").stdout
    assert f"OWNED by rollout {rollout} (wave 2): {BUNDLE} -> '28.43.1014'" in text
    assert "--take-over ROLLOUT --reason TEXT" in text


def test_apply_never_writes_what_the_rollout_owns(held: tuple[GitFleet, str]) -> None:
    """`apply --yes` leaves every later-wave target at its old bundle and writes nothing
    to those devices' firmware; the rollout's journal still has them pending."""
    fleet, rollout = held
    later = _later_targets(fleet, rollout)
    before = fleet.running()
    run = fleet.plumb("apply", ".", "--yes")
    assert run.exit_code == 0, run.stdout + run.stderr
    after = fleet.running()
    for device in later:
        assert after[device][BUNDLE] == before[device][BUNDLE] == OLD


def test_take_over_needs_a_reason_and_is_audited(held: tuple[GitFleet, str]) -> None:
    """--take-over without --reason is refused; with one, the fields are written and the
    take-over is an audit record naming the rollout and the reason."""
    fleet, rollout = held
    later = _later_targets(fleet, rollout)
    refused = fleet.plumb("apply", ".", "--yes", "--take-over", rollout)
    assert refused.exit_code == 2 and "--take-over needs --reason" in refused.stderr
    unknown = fleet.plumb("apply", ".", "--yes", "--take-over", "nosuch", "--reason", "x")
    assert unknown.exit_code == 2 and "owns no field now" in unknown.stderr
    done = fleet.plumb(
        "apply", ".", "--yes", "--take-over", rollout, "--reason", "incident 4411"
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    after = fleet.running()
    assert all(after[device][BUNDLE] == NEW for device in later)
    with fleet.db() as db:
        records = db.audit.records(50, kind="decision")
    takes = [r.detail for r in records if r.detail.get("apply") == "take-over"]
    assert takes == [{"apply": "take-over", "rollout": rollout, "reason": "incident 4411"}]


def test_a_saved_plan_that_writes_an_owned_field_is_refused(tmp_path: Path) -> None:
    """A plan saved before the rollout began owns nothing then; applied after the
    rollout owns its fields, it is refused naming the owner, and nothing is written."""
    fleet = GitFleet.create(tmp_path)
    fleet.copy.write(f"rollouts/{NAME}.yaml", SPEC)
    fleet.commit("rollout spec")
    plan_file = tmp_path / "plan.json"
    saved = fleet.plumb("plan", ".", "-o", str(plan_file))
    assert saved.exit_code == 0, saved.stderr
    assert fleet.plumb("rollout", "start", NAME, ".").exit_code == 3
    writes = fleet.device_writes()
    run = fleet.plumb("apply", str(plan_file), "--yes")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert f"owned by rollout {fleet.only_rollout()}" in run.stderr
    assert fleet.device_writes() == writes


def test_lease_show_names_the_rollout_between_its_steps(held: tuple[GitFleet, str]) -> None:
    """No lease is held while the rollout waits for promotion; `lease show` says which
    rollout is under way and where, instead of only "no lease held"."""
    fleet, rollout = held
    shown = fleet.plumb("lease", "show", ".")
    lines = shown.stdout.splitlines()
    assert lines[0] == "no lease held"
    assert lines[1] == (
        f"rollout {rollout} is awaiting_promotion (between waves): no lease is held between"
        " its steps"
    )


def test_a_held_lease_refuses_the_start_once_naming_the_next_command(tmp_path: Path) -> None:
    """While another writer holds the lease, `rollout start` is refused before anything
    is planned or journaled, with the holder and one hint (not two)."""
    fleet = GitFleet.create(tmp_path)
    fleet.copy.write(f"rollouts/{NAME}.yaml", SPEC)
    fleet.commit("rollout spec")
    with fleet.db() as db:
        db.lease.acquire("alice@host pid 9", "apply")
    run = fleet.plumb("rollout", "start", NAME, ".")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert "fleet lease is held by alice@host pid 9 for 'apply'" in run.stderr
    assert run.stderr.count("plumb lease break") == 1
    with fleet.db() as db:
        assert db.journal.all() == []
