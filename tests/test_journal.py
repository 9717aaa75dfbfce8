"""The rollout journal in the state database: before-states are written once and
guarded by the schema, writes need a recorded before-state, pins become plan holds; on
both backends (a SQLite file and a real PostgreSQL database)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from reconciler.state.db import StateDB
from reconciler.state.journal import (
    JournalError,
    Lifecycle,
    NewTarget,
    NewWave,
    RolloutRow,
    RolloutStatus,
    TargetStatus,
)
from reconciler.state.location import open_state


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateDB]:
    if request.param == "sqlite":
        location = str(tmp_path / "plumb.db")
    else:
        location = str(request.getfixturevalue("pg_url"))
    with open_state(location) as state:
        yield state


def _rollout(db: StateDB) -> str:
    rollout = db.journal.new_id("fw")
    row = RolloutRow(
        rollout,
        "fw",
        "rollouts/fw.yaml",
        "ab" * 32,
        "c1",
        "c2",
        RolloutStatus.running,
        None,
        "tester",
        "",
        "",
        {"spec": {}},
    )
    targets = [
        NewTarget("n1", 1, {"firmware/bios": "2"}, Lifecycle.in_service),
        NewTarget("n2", 2, {"firmware/bios": "2"}, Lifecycle.in_service),
    ]
    db.journal.create(row, [NewWave(1, True, 30.0), NewWave(2, False, 60.0)], targets)
    return rollout


def test_ids_count_per_spec(db: StateDB) -> None:
    assert _rollout(db) == "fw-1"
    assert db.journal.new_id("fw") == "fw-2"
    assert db.journal.new_id("other") == "other-1"


def test_before_state_is_recorded_once(db: StateDB) -> None:
    rollout = _rollout(db)
    db.journal.record_before(rollout, {"n1": {"firmware/bios": "1"}})
    db.journal.record_before(rollout, {"n1": {"firmware/bios": "LATER"}})  # ignored
    (n1, n2) = db.journal.targets(rollout)
    assert n1.before == {"firmware/bios": "1"} and n1.status is TargetStatus.recorded
    assert n2.before is None and n2.status is TargetStatus.pending


def test_the_schema_refuses_to_change_a_recorded_before_state(db: StateDB) -> None:
    """Even a raw client of the database cannot change a recorded before-state."""
    rollout = _rollout(db)
    db.journal.record_before(rollout, {"n1": {"firmware/bios": "1"}})
    update = "UPDATE rollout_target SET before = '{}' WHERE device = 'n1'"
    if db.dialect == "sqlite":
        raw = sqlite3.connect(str(db.path))
        with pytest.raises(sqlite3.IntegrityError, match="never changed"):
            raw.execute(update)
        raw.close()
    else:
        with (
            psycopg.connect(db.url, autocommit=True) as conn,
            pytest.raises(psycopg.IntegrityError, match="never changed"),
        ):
            conn.execute(update)
    assert db.journal.targets(rollout)[0].before == {"firmware/bios": "1"}


def test_no_write_without_a_before_state(db: StateDB) -> None:
    rollout = _rollout(db)
    with pytest.raises(JournalError, match="n2: no before-state"):
        db.journal.set_targets(rollout, ["n2"], TargetStatus.in_flight)
    db.journal.record_before(rollout, {"n2": {"firmware/bios": "1"}})
    db.journal.set_targets(rollout, ["n2"], TargetStatus.in_flight)
    db.journal.set_targets(rollout, ["n2"], TargetStatus.applied, wrote=True)
    assert db.journal.targets(rollout, 2)[0].writes == 1


def test_pins_become_holds_and_are_released(db: StateDB) -> None:
    rollout = _rollout(db)
    assert db.journal.pin(rollout, {"n1": {"firmware/bios": "1", "firmware/bmc": None}}, "bad") == 2
    assert db.journal.holds() == {
        "n1": {"firmware/bios": ("1", "bad"), "firmware/bmc": (None, "bad")}
    }
    db.journal.pin(rollout, {"n1": {"firmware/bios": "0"}}, "again")  # replaces, one active
    assert db.journal.holds()["n1"]["firmware/bios"] == ("0", "again")
    assert len(db.journal.pins()) == 2
    assert db.journal.release_pins("tester", device="n1") == 2
    assert db.journal.holds() == {}
    with pytest.raises(JournalError):
        db.journal.release_pins("tester")


def test_wave_updates_reject_unknown_columns(db: StateDB) -> None:
    rollout = _rollout(db)
    db.journal.update_wave(rollout, 1, bake_start=10.0, evidence={"decision": "proceed"})
    wave = db.journal.waves(rollout)[0]
    assert wave.bake_start == 10.0 and wave.evidence == {"decision": "proceed"}
    with pytest.raises(JournalError, match="no wave column"):
        db.journal.update_wave(rollout, 1, drop_table=1)
