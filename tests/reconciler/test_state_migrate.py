"""Moving a fleet's state from its SQLite file to PostgreSQL: every row arrives, the
audit chain verifies with the same head, tokens and pin ids continue past the copied
ones, and a move that could lose or mix history is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.state.db import StateDB, open_state_db
from reconciler.state.location import open_state
from reconciler.state.migrate import MigrationRefused, migrate_state
from tests.reconciler.labfleet import LabFleet, run_plumb
from tests.test_journal import _rollout


def _history(db: StateDB) -> None:
    token = db.lease.acquire("alice@host pid 1", "apply")
    db.audit.append("write", actor="alice", intent_commit="c1", device="leaf-1", after=9214)
    db.lease.release(token)
    db.freeze.freeze("carol@ops", "INC-7")
    rollout = _rollout(db)
    db.journal.record_before(rollout, {"n1": {"firmware/bios": "1"}})
    db.journal.pin(rollout, {"n1": {"firmware/bios": "1"}}, "rolled back")


def test_everything_arrives_with_the_same_chain(tmp_path: Path, pg_url: str) -> None:
    """Rows, freeze, journal and pins arrive; the chain verifies there with the same head."""
    with open_state_db(tmp_path / "plumb.db") as source:
        _history(source)
        head = source.audit.verify()
        with open_state(pg_url) as target:
            moved = migrate_state(source, target, actor="ops")
            assert (moved.head_seq, moved.head_hash) == (head.head_seq, head.head_hash)
            assert moved.rows["lease"] == 1 and moved.rows["pin"] == 1
            verdict = target.audit.verify()
            assert verdict.ok and verdict.rows == head.rows + 1  # + the move itself
            assert target.audit.records(1)[0].detail["action"] == "state migrated"
            freeze = target.freeze.status()
            assert freeze is not None and freeze.reason == "INC-7"
            assert target.journal.holds() == {"n1": {"firmware/bios": ("1", "rolled back")}}
            assert target.journal.targets("fw-1")[0].before == {"firmware/bios": "1"}
            assert target.lease.acquire("bob", "apply").value == 2  # the sequence continues
            target.journal.pin(None, {"n2": {"x": 1}}, "new")
            assert max(p.id for p in target.journal.pins()) == 2


def test_a_target_with_history_is_refused(tmp_path: Path, pg_url: str) -> None:
    """Migrating into a database that already holds state writes nothing."""
    with open_state_db(tmp_path / "plumb.db") as source, open_state(pg_url) as target:
        _history(source)
        target.freeze.freeze("dave", "other fleet")
        rows = target.audit.verify().rows
        with pytest.raises(MigrationRefused, match="already holds state"):
            migrate_state(source, target, actor="ops")
        assert target.audit.verify().rows == rows


def test_a_held_lease_is_refused(tmp_path: Path, pg_url: str) -> None:
    """While a writer holds the source's lease the move is refused, naming it."""
    with open_state_db(tmp_path / "plumb.db") as source, open_state(pg_url) as target:
        source.lease.acquire("alice@host pid 9", "rollout fw-1")
        with pytest.raises(MigrationRefused, match="alice@host pid 9"):
            migrate_state(source, target, actor="ops")


def test_the_cli_moves_a_lab_fleets_state(
    lab: LabFleet, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an apply, `plumb state migrate` moves the state; with `state: postgresql` the
    fleet then verifies the same chain from PostgreSQL."""
    assert run_plumb(lab.root, "apply", "--yes").returncode == 0
    monkeypatch.setenv("PLUMB_STATE_URL", pg_url)
    done = run_plumb(lab.root, "state", "migrate")
    assert done.returncode == 0, done.stderr
    assert "audit chain verified on arrival" in done.stdout
    lab.copy.append("plumb.yaml", "\nstate:\n  backend: postgresql\n")
    verified = run_plumb(lab.root, "audit", "verify")
    assert verified.returncode == 0 and "audit chain ok" in verified.stdout
    again = run_plumb(lab.root, "state", "migrate")
    assert again.returncode == 2 and "already holds state" in again.stderr


def test_an_unreachable_target_says_nothing_was_copied(lab: LabFleet) -> None:
    """A target that cannot be reached is a migrate error, not an apply's fencing text."""
    assert run_plumb(lab.root, "apply", "--yes").returncode == 0
    done = run_plumb(lab.root, "state", "migrate", "--to", "postgresql://plumb@127.0.0.1:9/f")
    assert done.returncode == 2, done.stderr
    assert "cannot be reached" in done.stderr
    assert "nothing was copied" in done.stderr and "plumb state migrate" in done.stderr
    assert "fenced out" not in done.stderr and "lease" not in done.stderr
