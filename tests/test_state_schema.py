"""The state schema, written once for both backends: databases that plumb made before
Alembic (every version, on SQLite and PostgreSQL) are upgraded to the head with their
rows intact; a database's schema does not depend on its history or its backend; and
the revisions build what the metadata describes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.state import pgconn
from reconciler.state.audit import GENESIS, row_hash
from reconciler.state.conn import Conn
from reconciler.state.errors import SchemaTooNew, StateDamaged
from reconciler.state.location import open_state, upgrade_state
from reconciler.state.migrations import SCRIPT_LOCATION
from reconciler.state.schema import metadata
from reconciler.state.version import HEAD, REVISION_TABLE, revision_id
from tests.statelegacy import LEGACY_HEAD, build_legacy
from tests.stateschema import describe, portable

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ["sqlite", "postgresql"]
AT = "2026-01-02T03:04:05+00:00"

NewLocation = Callable[[], str]


@pytest.fixture(params=BACKENDS)
def new_location(request: pytest.FixtureRequest, tmp_path: Path) -> NewLocation:
    """Makes a fresh, empty place for a state database on one backend."""
    if request.param == "sqlite":
        names = iter(range(1_000))
        return lambda: str(tmp_path / f"s{next(names)}" / "plumb.db")
    server = request.getfixturevalue("pg_server")
    return lambda: str(server.new_database())


def raw(location: str) -> Conn:
    """A connection that is not plumb's (autocommit, ``?`` placeholders on both)."""
    if location.startswith("postgresql://"):
        return pgconn.connect(location)
    Path(location).parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(location, isolation_level=None)


def legacy(location: str, version: int) -> str:
    """``location`` made at ``version`` by the plumb of that version."""
    if not location.startswith("postgresql://"):
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    build_legacy(location, version)
    return location


def chain(count: int) -> list[dict[str, object]]:
    """``count`` audit rows linked as plumb links them."""
    rows, prev = [], GENESIS
    for seq in range(1, count + 1):
        row: dict[str, object] = {
            "seq": seq,
            "at": AT,
            "kind": "write",
            "actor": f"alice{seq}",
            "intent_commit": None,
            "device": f"leaf-{seq}",
            "field": "mtu",
            "before": "1500",
            "after": "9214",
            "detail": "{}",
        }
        digest = row_hash(row, prev)
        rows.append({**row, "prev_hash": prev, "hash": digest})
        prev = digest
    return rows


def record_history(location: str, version: int, audit_rows: int = 3) -> str:
    """Rows in every table ``version`` has, written as that version's plumb wrote them;
    returns the audit chain's head hash."""
    rows = chain(audit_rows)
    conn = raw(location)
    try:
        conn.execute(
            "INSERT INTO lease (holder, purpose, acquired_at, heartbeat_at, released_at,"
            " ended_by) VALUES ('alice pid 1', 'apply', ?, ?, ?, 'alice pid 1')",
            (AT, AT, AT),
        )
        conn.execute("""INSERT INTO "freeze" VALUES (1, 'INC-7', 'carol', ?)""", (AT,))
        for row in rows:
            conn.execute(
                "INSERT INTO audit VALUES (:seq, :at, :kind, :actor, :intent_commit, :device,"
                " :field, :before, :after, :detail, :prev_hash, :hash)",
                row,
            )
        if version >= 2:
            conn.execute(
                "INSERT INTO rollout VALUES ('fw-1', 'fw', 'rollouts/fw.yaml', 'ab', NULL,"
                " NULL, 'running', NULL, 'alice', ?, ?, '{}')",
                (AT, AT),
            )
            conn.execute(
                "INSERT INTO rollout_wave (rollout, number, canary, status, bake_minutes)"
                " VALUES ('fw-1', 1, 1, 'pending', 30.0)"
            )
            conn.execute(
                "INSERT INTO rollout_target (rollout, device, wave, status, lifecycle,"
                " intended, before) VALUES ('fw-1', 'n1', 1, 'recorded', 'in_service',"
                ' \'{"bios":"2"}\', \'{"bios":"1"}\')'
            )
            conn.execute(
                "INSERT INTO pin (device, path, value, reason, rollout, pinned_at)"
                " VALUES ('n1', 'bios', '\"1\"', 'rolled back', 'fw-1', ?)",
                (AT,),
            )
        if version >= 3:
            conn.execute(
                "INSERT INTO outbox (created_at, event, target, format, payload,"
                " next_attempt_at) VALUES (?, 'drift', 'HOOK', 'json', '{}', ?)",
                (AT, AT),
            )
            conn.execute("INSERT INTO controller_cursor VALUES ('audit', 7)")
        if version >= 4:
            conn.execute("INSERT INTO drift_told VALUES ('f1', 'n1', 'bios', ?)", (AT,))
        if version >= 5:
            conn.execute(
                "INSERT INTO rollout_approval (kind, spec_path, spec_sha256, actor,"
                " approved_at, state) VALUES ('start', 'rollouts/fw.yaml', 'ab', 'bob', ?,"
                " 'pending')",
                (AT,),
            )
    finally:
        conn.close()
    return str(rows[-1]["hash"])


def versions_table(location: str) -> list[int]:
    conn = raw(location)
    try:
        return [int(v) for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    finally:
        conn.close()


def test_head_is_the_last_revision_of_one_line() -> None:
    """The revisions are 0001..HEAD, each the step from the one before."""
    script = ScriptDirectory(str(SCRIPT_LOCATION))
    ordered = list(reversed(list(script.walk_revisions())))
    assert [r.revision for r in ordered] == [revision_id(n) for n in range(1, HEAD + 1)]
    assert [r.down_revision for r in ordered] == [None, *(r.revision for r in ordered[:-1])]
    assert script.get_heads() == [revision_id(HEAD)]


@pytest.mark.parametrize("version", range(1, LEGACY_HEAD + 1))
def test_each_earlier_version_is_upgraded_to_head_with_its_rows(
    new_location: NewLocation, version: int
) -> None:
    """A database plumb made at ``version`` before Alembic opens at the head: every row
    is still there, the audit chain verifies with the same head, sequences continue, and
    its schema is exactly a fresh database's."""
    location = legacy(new_location(), version)
    head_hash = record_history(location, version)
    with open_state(location) as db:
        assert db.schema_version() == HEAD
        verdict = db.audit.verify()
        assert verdict.ok and (verdict.rows, verdict.head_hash) == (3, head_hash)
        freeze = db.freeze.status()
        assert freeze is not None and freeze.reason == "INC-7"
        assert db.lease.acquire("bob", "apply").value == 2  # the fencing token continues
        if version >= 2:
            assert db.journal.targets("fw-1")[0].before == {"bios": "1"}
            assert db.journal.holds() == {"n1": {"bios": ("1", "rolled back")}}
        if version >= 3:
            assert (db.outbox.undelivered(), db.outbox.cursor("audit")) == (1, 7)
        if version >= 4:
            with db.reading() as conn:
                assert db.drift_told.told(conn) == {"f1"}
        if version >= 5:
            assert [a.actor for a in db.approvals.rows()] == ["bob"]
    fresh = new_location()
    open_state(fresh).close()
    assert describe(location) == describe(fresh)
    assert versions_table(location) == list(range(1, HEAD + 1))


@given(
    version=st.integers(1, LEGACY_HEAD),
    audit_rows=st.integers(1, 40),
    reopen=st.integers(1, 3),
)
@settings(max_examples=20, deadline=None)
def test_upgrading_keeps_the_audit_chain(version: int, audit_rows: int, reopen: int) -> None:
    """Whatever version a SQLite file is at and however long its chain, the upgrade keeps
    every audit row and the chain's head, and opening again changes nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        location = legacy(str(Path(tmp) / "plumb.db"), version)
        head_hash = record_history(location, version, audit_rows)
        for _ in range(reopen):
            with open_state(location) as db:
                verdict = db.audit.verify()
                assert verdict.ok and (verdict.rows, verdict.head_hash) == (audit_rows, head_hash)
        assert versions_table(location) == list(range(1, HEAD + 1))


def test_upgrade_says_from_which_version_and_is_then_a_no_op(new_location: NewLocation) -> None:
    """An upgrade reports the version it found and the one it left; a second finds the
    head and changes nothing."""
    location = legacy(new_location(), 2)
    first = upgrade_state(location)
    assert (first.before, first.after, first.changed) == (2, HEAD, True)
    second = upgrade_state(location)
    assert (second.before, second.after, second.changed) == (HEAD, HEAD, False)
    assert versions_table(location) == list(range(1, HEAD + 1))


def test_the_last_database_from_before_alembic_gets_its_revision_then_the_rest(
    new_location: NewLocation,
) -> None:
    """A version-5 database from before Alembic is stamped at its revision (nothing of
    revisions 1-5 is made again) and upgraded from there to the head like any other."""
    location = legacy(new_location(), LEGACY_HEAD)
    done = upgrade_state(location)
    assert (done.before, done.after, done.stamped) == (LEGACY_HEAD, HEAD, True)
    fresh = new_location()
    open_state(fresh).close()
    assert describe(location) == describe(fresh)


def test_upgrade_creates_a_missing_schema(new_location: NewLocation) -> None:
    """With nothing there yet, the upgrade creates the whole schema (from version 0)."""
    location = new_location()
    done = upgrade_state(location)
    assert (done.before, done.after) == (0, HEAD)
    with open_state(location) as db:
        assert db.schema_version() == HEAD


def test_a_newer_database_is_refused(new_location: NewLocation) -> None:
    """A database a newer plumb upgraded is neither opened nor upgraded, and keeps its
    revision."""
    location = new_location()
    open_state(location).close()
    conn = raw(location)
    conn.execute(f"UPDATE {REVISION_TABLE} SET version_num = '0999'")
    conn.close()
    for attempt in (open_state, upgrade_state):
        with pytest.raises(
            SchemaTooNew, match=f"version 999 is newer than this plumb knows .{HEAD}."
        ):
            attempt(location)
    conn = raw(location)
    assert conn.execute(f"SELECT version_num FROM {REVISION_TABLE}").fetchall() == [("0999",)]
    conn.close()


def test_a_database_that_is_not_plumbs_is_refused(new_location: NewLocation) -> None:
    """A database holding an audit table but no plumb version is refused, not adopted."""
    location = new_location()
    conn = raw(location)
    conn.execute("CREATE TABLE audit (id INTEGER)")
    conn.close()
    with pytest.raises(StateDamaged, match="not a plumb state database"):
        upgrade_state(location)


def test_processes_upgrading_at_once_upgrade_once(new_location: NewLocation) -> None:
    """Four processes opening one version-1 database at once all open it; each revision
    ran once (the upgrade holds the single-writer lock)."""
    location = legacy(new_location(), 1)
    code = textwrap.dedent(
        """
        import sys, time
        from reconciler.state.location import open_state
        start = float(sys.argv[2])
        while time.time() < start:
            pass
        with open_state(sys.argv[1]) as db:
            db.audit.append("decision", actor=sys.argv[3], intent_commit=None)
        """
    )
    start = str(time.time() + 2.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, location, start, f"p{n}"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    assert versions_table(location) == list(range(1, HEAD + 1))
    with open_state(location) as db:
        verdict = db.audit.verify()
        assert verdict.ok and verdict.rows == 4


def test_the_two_backends_create_the_same_schema(tmp_path: Path, pg_url: str) -> None:
    """Tables, columns (in order, with their type family, nullability and defaults),
    keys, checks, indexes and triggers are the same on SQLite and PostgreSQL; the only
    difference is the trigger refusing TRUNCATE, which SQLite does not have."""
    location = str(tmp_path / "plumb.db")
    open_state(location).close()
    open_state(pg_url).close()
    on_sqlite, on_postgresql = portable(describe(location)), portable(describe(pg_url))
    assert sorted(on_sqlite) == sorted(on_postgresql)
    assert on_sqlite["lease"].indexes and on_sqlite["freeze"].checks  # compared, not empty
    for name, table in on_sqlite.items():
        other = on_postgresql[name]
        if name == "audit":
            assert other.triggers - table.triggers == {"audit_no_truncate"}
            other = replace(other, triggers=table.triggers)
        assert table == other, name


def test_the_revisions_build_what_the_metadata_describes(new_location: NewLocation) -> None:
    """The schema the revisions leave is the one ``schema.metadata`` creates, column for
    column and index for index (the triggers come from the revisions alone)."""
    migrated, described = new_location(), new_location()
    open_state(migrated).close()
    if described.startswith("postgresql://"):
        url = described.replace("postgresql://", "postgresql+psycopg://", 1)
    else:
        Path(described).parent.mkdir(parents=True)
        url = f"sqlite:///{described}"
    engine = sa.create_engine(url)
    metadata.create_all(engine)
    engine.dispose()
    from_revisions = describe(migrated)
    from_metadata = describe(described)
    assert sorted(from_revisions) == sorted([*from_metadata, REVISION_TABLE])
    for name, table in from_metadata.items():
        assert replace(from_revisions[name], triggers=frozenset()) == table, name
