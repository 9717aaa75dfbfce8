"""The fleet's control database: single-writer lease with fencing, the freeze switch and
the hash-chained audit log, on both backends (real SQLite files and a real PostgreSQL
server) and, where it matters, real processes."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from reconciler.errors import FencedOut, Frozen
from reconciler.settings import Scalar
from reconciler.state import db as db_module
from reconciler.state.audit import GENESIS, AuditFault, AuditKind, row_hash
from reconciler.state.db import SchemaTooNew, StateBusy, StateDB, open_state_db
from reconciler.state.lease import LeaseHeld, LeaseToken
from reconciler.state.location import open_state
from reconciler.state.version import HEAD

ROOT = Path(__file__).resolve().parent.parent
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh state on each backend: a SQLite file path, or an empty PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / ".plumb" / "plumb.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def db(location: str, clock: FakeClock) -> Iterator[StateDB]:
    with open_state(location, clock=clock) as state:
        yield state


def where(db: StateDB) -> str:
    """What another process opens to reach the same state as ``db``."""
    return str(getattr(db, "url", db.path))


INTEGRITY = (sqlite3.IntegrityError, psycopg.IntegrityError)


def run_python(code: str, *args: str) -> subprocess.Popen[str]:
    """Start a separate interpreter running ``code`` (argv[1:] = ``args``)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def tamper(path: Path, *statements: str) -> None:
    """Change the file behind plumb's back, as someone with the file and sqlite3 could."""
    conn = sqlite3.connect(path)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def behind_plumbs_back(db: StateDB, *statements: str) -> None:
    """Run ``statements`` on ``db``'s state with the database's own client, not plumb."""
    if db.dialect == "sqlite":
        assert db.path is not None
        tamper(db.path, *statements)
        return
    with psycopg.connect(where(db), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def drop_trigger(db: StateDB, name: str) -> str:
    return f"DROP TRIGGER {name}" + (" ON audit" if db.dialect == "postgresql" else "")


def fill_audit(db: StateDB, count: int) -> None:
    for n in range(1, count + 1):
        db.audit.append(
            AuditKind.write,
            actor="alice@host",
            intent_commit="c0ffee",
            device=f"leaf-{n}",
            field="interfaces/Ethernet1/mtu",
            before=1500,
            after=9214,
        )


# --- the database file ---------------------------------------------------------------


def test_open_creates_the_state_dir_in_wal_mode(tmp_path: Path) -> None:
    """Opening creates the parent directory and the file, in WAL mode with FKs on."""
    path = tmp_path / "repo" / ".plumb" / "plumb.db"
    with open_state_db(path) as db, db.reading() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert path.is_file()


def test_reopening_is_idempotent(tmp_path: Path) -> None:
    """Opening an existing database again migrates nothing and keeps its contents."""
    path = tmp_path / "plumb.db"
    with open_state_db(path) as db:
        db.freeze.freeze("alice", "maintenance")
    for _ in range(2):
        with open_state_db(path) as db:
            assert db.schema_version() == HEAD
            assert db.freeze.status() is not None
            with db.reading() as conn:
                versions = [v for (v,) in conn.execute("SELECT version FROM schema_version")]
                revisions = conn.execute("SELECT version_num FROM plumb_revision").fetchall()
            assert versions == list(range(1, HEAD + 1))
            assert revisions == [(f"{HEAD:04d}",)]


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    """A file migrated by a newer plumb is not touched by an older one."""
    path = tmp_path / "plumb.db"
    open_state_db(path).close()
    tamper(path, "UPDATE plumb_revision SET version_num = '0999'")
    with pytest.raises(SchemaTooNew, match="999"):
        open_state_db(path)


def test_a_long_held_write_lock_is_reported_not_hung_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If another process holds the write lock past the busy timeout, StateBusy says so."""
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 200)
    path = tmp_path / "plumb.db"
    with open_state_db(path) as db:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StateBusy, match="locked"):
                db.freeze.freeze("carol@ops", "stop")
        finally:
            other.execute("ROLLBACK")
            other.close()
        db.freeze.freeze("carol@ops", "stop")


# --- the lease -------------------------------------------------------------------------


def test_second_acquire_refuses_at_once_naming_holder_and_since(
    db: StateDB, clock: FakeClock
) -> None:
    """A second acquirer is refused immediately, told who holds the lease and since when."""
    db.lease.acquire("alice@host pid 123", "rollout r-12")
    clock.now = START + timedelta(hours=3, minutes=12)
    with pytest.raises(LeaseHeld) as refused:  # held for good: a wait would never end
        db.lease.acquire("bob@host pid 9", "apply")
    message = str(refused.value)
    assert "alice@host pid 123" in message and "rollout r-12" in message
    assert "2026-12-01T09:00:00+00:00" in message and "3h12m ago" in message
    assert refused.value.holder == "alice@host pid 123" and refused.value.since == START


def test_second_process_is_refused_at_once(db: StateDB) -> None:
    """Another process trying to acquire is refused at once with the holder's name."""
    db.lease.acquire("alice@host pid 123", "apply")
    child = run_python(
        """
        import sys, time
        from pathlib import Path
        from reconciler.state.location import open_state
        from reconciler.state.lease import LeaseHeld
        with open_state(sys.argv[1]) as db:
            started = time.monotonic()
            try:
                db.lease.acquire("bob@other pid 7", "apply")
            except LeaseHeld as exc:
                print(f"{time.monotonic() - started:.3f}", exc)
                sys.exit(3)
        """,
        where(db),
    )
    out, err = child.communicate(timeout=30)
    assert child.returncode == 3, err
    elapsed, message = out.split(" ", 1)
    assert float(elapsed) < 1.0
    assert "alice@host pid 123" in message and "since 2026-12-01T09:00:00" in message


def test_processes_racing_for_the_lease_exactly_one_wins(location: str, tmp_path: Path) -> None:
    """Of several processes acquiring at the same moment, exactly one gets the lease."""
    path = location
    open_state(path).close()
    go = tmp_path / "go"
    code = """
        import sys, time
        from pathlib import Path
        from reconciler.state.location import open_state
        from reconciler.state.lease import LeaseHeld
        with open_state(sys.argv[1]) as db:
            while not Path(sys.argv[2]).exists():
                time.sleep(0.005)
            try:
                db.lease.acquire(f"racer {sys.argv[3]}", "apply")
                print("won")
            except LeaseHeld:
                print("refused")
        """
    racers = [run_python(code, str(path), str(go), str(n)) for n in range(4)]
    time.sleep(0.3)
    go.touch()
    outcomes = sorted(racer.communicate(timeout=30)[0].strip() for racer in racers)
    assert outcomes == ["refused", "refused", "refused", "won"]


def test_an_old_lease_is_never_taken_over(db: StateDB, clock: FakeClock) -> None:
    """However stale its heartbeat, a lease stays held until released or broken."""
    db.lease.acquire("alice@host pid 123", "apply")
    clock.now = START + timedelta(days=30)
    with pytest.raises(LeaseHeld, match="30d0h ago"):
        db.lease.acquire("bob@host", "apply")


def test_break_then_acquire_fences_the_old_token(db: StateDB) -> None:
    """After a break and a new acquire, the old holder's check raises FencedOut."""
    old = db.lease.acquire("alice@host pid 123", "apply")
    broken = db.lease.break_lease("carol@ops", "alice's host is dead")
    assert broken is not None and broken.holder == "alice@host pid 123"
    new = db.lease.acquire("bob@host", "apply")
    assert new.value > old.value
    with pytest.raises(FencedOut, match=r"broken by carol@ops.*alice's host is dead.*bob@host"):
        db.lease.check(old)
    db.lease.check(new)


def test_a_break_is_audited(db: StateDB) -> None:
    """Breaking the lease leaves an audit record naming who broke whose lease and why."""
    db.lease.acquire("alice@host", "rollout r-12")
    db.lease.break_lease("carol@ops", "host lost")
    record = db.audit.records(1, kind=AuditKind.lease)[-1]
    assert record.actor == "carol@ops"
    assert record.detail["action"] == "break" and record.detail["holder"] == "alice@host"
    assert record.detail["reason"] == "host lost"


def test_breaking_with_no_holder_changes_nothing(db: StateDB) -> None:
    """Breaking when nobody holds the lease returns None; a reason is always required."""
    assert db.lease.break_lease("carol@ops", "just in case") is None
    with pytest.raises(ValueError):
        db.lease.break_lease("carol@ops", " ")


def test_release_ends_the_lease_and_fences_its_token(db: StateDB) -> None:
    """A released token no longer passes check; releasing twice is a no-op."""
    token = db.lease.acquire("alice@host", "apply")
    assert db.lease.release(token) is True
    assert db.lease.current() is None
    with pytest.raises(FencedOut, match="released by alice@host"):
        db.lease.check(token)
    assert db.lease.release(token) is False


def test_a_token_never_issued_is_fenced(db: StateDB) -> None:
    """A token this database never issued does not pass check."""
    with pytest.raises(FencedOut, match="never issued"):
        db.lease.check(LeaseToken(41, "mallory", "apply"))


def test_heartbeat_is_shown_and_needs_the_lease(db: StateDB, clock: FakeClock) -> None:
    """A heartbeat updates what others see; a fenced token cannot heartbeat."""
    token = db.lease.acquire("alice@host", "apply")
    clock.now = START + timedelta(minutes=5)
    db.lease.heartbeat(token)
    info = db.lease.current()
    assert info is not None and info.heartbeat_at == clock.now and info.since == START
    db.lease.break_lease("carol@ops", "test")
    with pytest.raises(FencedOut):
        db.lease.heartbeat(token)


def test_held_releases_on_error(db: StateDB) -> None:
    """The ``held`` context releases the lease even when its block fails."""
    with pytest.raises(RuntimeError), db.lease.held("alice@host", "apply") as token:
        db.lease.check(token)
        raise RuntimeError("boom")
    assert db.lease.current() is None


class LeaseMachine(RuleBasedStateMachine):
    """Random acquire/release/break sequences against a model of who holds the lease."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.db = open_state_db(self.dir / "plumb.db")
        self.issued: list[LeaseToken] = []
        self.holder: LeaseToken | None = None

    @rule(who=st.sampled_from(["alice", "bob", "carol"]))
    def acquire(self, who: str) -> None:
        if self.holder is not None:
            with pytest.raises(LeaseHeld):
                self.db.lease.acquire(who, "apply")
            return
        token = self.db.lease.acquire(who, "apply")
        assert all(token.value > earlier.value for earlier in self.issued)
        self.issued.append(token)
        self.holder = token

    @precondition(lambda self: bool(self.issued))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        token = data.draw(st.sampled_from(self.issued))
        assert self.db.lease.release(token) == (token == self.holder)
        if token == self.holder:
            self.holder = None

    @rule()
    def break_lease(self) -> None:
        broken = self.db.lease.break_lease("ops", "test")
        assert (broken.token if broken else None) == (self.holder.value if self.holder else None)
        self.holder = None

    @invariant()
    def at_most_one_holder_and_only_it_passes_check(self) -> None:
        with self.db.reading() as conn:
            (held,) = conn.execute(
                "SELECT count(*) FROM lease WHERE released_at IS NULL"
            ).fetchone()
        assert held == (0 if self.holder is None else 1)
        current = self.db.lease.current()
        assert (current.token if current else None) == (self.holder.value if self.holder else None)
        for token in self.issued:
            if token == self.holder:
                self.db.lease.check(token)
            else:
                with pytest.raises(FencedOut):
                    self.db.lease.check(token)

    def teardown(self) -> None:
        self.db.close()
        shutil.rmtree(self.dir)


LeaseMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=20, deadline=None)
TestLeaseInvariants = LeaseMachine.TestCase


# --- the freeze switch -----------------------------------------------------------------


def test_freeze_stops_writes_with_the_reason(db: StateDB) -> None:
    """While frozen, check raises Frozen naming the actor and reason; unfreeze lifts it."""
    db.freeze.check()
    db.freeze.freeze("carol@ops", "INC-4411 packet loss on rail 3")
    with pytest.raises(Frozen, match=r"carol@ops.*INC-4411 packet loss on rail 3"):
        db.freeze.check()
    lifted = db.freeze.unfreeze("carol@ops")
    assert lifted is not None and lifted.reason == "INC-4411 packet loss on rail 3"
    db.freeze.check()
    assert db.freeze.status() is None and db.freeze.unfreeze("carol@ops") is None


def test_refreezing_keeps_since_and_takes_the_new_reason(db: StateDB, clock: FakeClock) -> None:
    """Freezing a frozen fleet updates reason and actor; since stays the first freeze."""
    db.freeze.freeze("carol@ops", "first")
    clock.now = START + timedelta(hours=1)
    status = db.freeze.freeze("dave@ops", "second")
    assert (status.reason, status.actor, status.since) == ("second", "dave@ops", START)


def test_freeze_and_unfreeze_are_audited(db: StateDB) -> None:
    """Both directions of the switch leave audit records."""
    db.freeze.freeze("carol@ops", "incident")
    db.freeze.unfreeze("dave@ops")
    actions = [(r.actor, r.detail["action"]) for r in db.audit.records(10, kind=AuditKind.freeze)]
    assert actions == [("carol@ops", "freeze"), ("dave@ops", "unfreeze")]


def test_check_write_checks_freeze_then_lease(db: StateDB) -> None:
    """The pre-write guard refuses when frozen, and when the token is fenced."""
    token = db.lease.acquire("alice@host", "apply")
    db.check_write(token)
    db.freeze.freeze("carol@ops", "stop")
    with pytest.raises(Frozen):
        db.check_write(token)
    db.freeze.unfreeze("carol@ops")
    db.lease.release(token)
    with pytest.raises(FencedOut):
        db.check_write(token)


# --- the audit log ---------------------------------------------------------------------


def test_first_record_links_to_genesis(db: StateDB) -> None:
    """The chain starts at 64 zeros and each record links to the previous hash."""
    first = db.audit.append(AuditKind.plan, actor="alice", intent_commit="c0ffee")
    second = db.audit.append("decision", actor="alice", intent_commit="c0ffee")
    assert (first.seq, first.prev_hash) == (1, GENESIS)
    assert (second.seq, second.prev_hash) == (2, first.hash)
    assert db.audit.verify().ok


def test_detail_is_stored_as_canonical_json(db: StateDB) -> None:
    """Detail is stored with sorted keys and no whitespace, and read back as given."""
    record = db.audit.append(
        AuditKind.result, actor="a", intent_commit=None, detail={"z": 1, "a": [1, "x"]}
    )
    with db.reading() as conn:
        (stored,) = conn.execute("SELECT detail FROM audit WHERE seq = ?", (record.seq,)).fetchone()
    assert stored == '{"a":[1,"x"],"z":1}'
    assert db.audit.records(1)[0].detail == {"z": 1, "a": [1, "x"]}


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)


def test_scalars_round_trip_exactly(db: StateDB) -> None:
    """before/after come back with the same type and value (True is not 1, 9000 not 9000.0)."""

    @settings(max_examples=100, deadline=None)
    @given(before=SCALARS, after=SCALARS)
    def round_trip(before: Scalar, after: Scalar) -> None:
        record = db.audit.append(
            "write", actor="a", intent_commit="c", device="d", field="f", before=before, after=after
        )
        stored = db.audit.records(1)[0]
        assert stored == record
        for value, back in ((before, stored.before), (after, stored.after)):
            assert type(back) is type(value) and back == value

    round_trip()
    assert db.audit.verify().ok


def test_appends_from_eight_threads_keep_the_chain(db: StateDB) -> None:
    """Concurrent appends from threads sharing one StateDB give one unbroken chain."""

    def worker(n: int) -> None:
        for i in range(40):
            db.audit.append("write", actor=f"thread-{n}", intent_commit="c", after=i)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    verdict = db.audit.verify()
    assert verdict.ok and verdict.rows == verdict.head_seq == 320


def test_appends_from_two_processes_keep_the_chain(location: str, tmp_path: Path) -> None:
    """Two processes appending to the same state serialise into one unbroken chain."""
    path = location
    open_state(path).close()
    go = tmp_path / "go"
    code = """
        import sys, time
        from pathlib import Path
        from reconciler.state.location import open_state
        with open_state(sys.argv[1]) as db:
            while not Path(sys.argv[2]).exists():
                time.sleep(0.005)
            for i in range(150):
                db.audit.append("write", actor=f"proc-{sys.argv[3]}", intent_commit="c", after=i)
        """
    writers = [run_python(code, str(path), str(go), str(n)) for n in range(2)]
    time.sleep(0.3)
    go.touch()
    for writer in writers:
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
    with open_state(path) as db:
        verdict = db.audit.verify()
        assert verdict.ok and verdict.rows == verdict.head_seq == 300
        for n in range(2):
            mine = [r.after for r in db.audit.records(300) if r.actor == f"proc-{n}"]
            assert mine == list(range(150))


def test_update_and_delete_are_refused(db: StateDB) -> None:
    """The triggers refuse UPDATE and DELETE on the audit table, even from a raw client."""
    fill_audit(db, 3)
    with pytest.raises(INTEGRITY, match="append-only"):
        behind_plumbs_back(db, "UPDATE audit SET after = '1500' WHERE seq = 2")
    with pytest.raises(INTEGRITY, match="append-only"):
        behind_plumbs_back(db, "DELETE FROM audit WHERE seq = 2")
    if db.dialect == "postgresql":
        with pytest.raises(INTEGRITY, match="append-only"):
            behind_plumbs_back(db, "TRUNCATE audit")
    assert db.audit.verify().ok


def test_verify_names_an_edited_row(db: StateDB) -> None:
    """Editing row 7's ``after`` (triggers dropped) is reported as seq 7's hash mismatch."""
    fill_audit(db, 12)
    behind_plumbs_back(
        db, drop_trigger(db, "audit_no_update"), "UPDATE audit SET after = '1500' WHERE seq = 7"
    )
    verdict = db.audit.verify()
    assert not verdict.ok
    assert [(p.seq, p.fault) for p in verdict.problems] == [(7, AuditFault.hash_mismatch)]
    assert verdict.missing_guards == ("audit_no_update",)


def test_verify_names_a_rehashed_row_by_its_broken_link(db: StateDB) -> None:
    """Editing a row and recomputing its hash leaves it self-consistent but breaks seq 8's link."""
    fill_audit(db, 10)
    with db.reading() as conn:
        cursor = conn.execute("SELECT * FROM audit WHERE seq = 7")
        names = [column[0] for column in cursor.description]
        row = dict(zip(names, cursor.fetchone(), strict=True))
    prev_hash = row.pop("prev_hash")
    del row["hash"]
    row["after"] = "1500"
    forged = row_hash(row, prev_hash)
    behind_plumbs_back(
        db,
        drop_trigger(db, "audit_no_update"),
        f"UPDATE audit SET after = '1500', hash = '{forged}' WHERE seq = 7",
    )
    verdict = db.audit.verify()
    assert [(p.seq, p.fault) for p in verdict.problems] == [(8, AuditFault.broken_link)]


def test_verify_names_a_deleted_row_as_a_gap(db: StateDB) -> None:
    """Deleting row 7 (triggers dropped) is reported as a gap at seq 8."""
    fill_audit(db, 10)
    behind_plumbs_back(db, drop_trigger(db, "audit_no_delete"), "DELETE FROM audit WHERE seq = 7")
    verdict = db.audit.verify()
    assert [(p.seq, p.fault) for p in verdict.problems] == [(8, AuditFault.gap)]
    assert "seq 7 missing" in str(verdict.problems[0])


@pytest.mark.parametrize(
    "field", ["bgp/neighbors/10.0.0.1/password", "snmp/Community_Secret", "api/TOKEN", "ssh/key"]
)
def test_secret_values_are_refused(db: StateDB, field: str) -> None:
    """A value for a field named like a secret is never stored."""
    with pytest.raises(ValueError, match="secret"):
        db.audit.append("write", actor="a", intent_commit="c", field=field, after="hunter2")
    db.audit.append("write", actor="a", intent_commit="c", field=field)  # that it changed: fine
    assert [r.after for r in db.audit.records(10)] == [None]


def test_records_filter_by_device_and_kind(db: StateDB) -> None:
    """records() returns the newest matching records, oldest first."""
    fill_audit(db, 5)
    db.audit.append("result", actor="a", intent_commit="c", device="leaf-2")
    assert [r.seq for r in db.audit.records(10, device="leaf-2")] == [2, 6]
    assert [r.seq for r in db.audit.records(2)] == [5, 6]
    assert [r.device for r in db.audit.records(10, kind=AuditKind.result)] == ["leaf-2"]


def test_unknown_kind_is_refused(db: StateDB) -> None:
    """Only the declared kinds may be appended."""
    with pytest.raises(ValueError):
        db.audit.append("gossip", actor="a", intent_commit="c")


def test_a_held_lease_heartbeats_until_released(
    db: StateDB, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While held, the lease's heartbeat advances on its own; it stops at release."""
    from reconciler.state import lease as lease_module

    monkeypatch.setattr(lease_module, "HEARTBEAT_SECONDS", 0.02)
    with db.lease.held("alice@host pid 1", "rollout r-1"):
        clock.now = START + timedelta(minutes=7)
        deadline = time.monotonic() + 10
        while (info := db.lease.current()) is not None and info.heartbeat_at != clock.now:
            assert time.monotonic() < deadline, "no heartbeat was recorded"
            time.sleep(0.01)
        assert info is not None and info.since == START
        assert "last heartbeat 0s ago" in info.describe(clock.now)
    assert db.lease.current() is None
    records = [r.detail["action"] for r in db.audit.records(10, kind=AuditKind.lease)]
    assert records == ["acquire", "release"]  # heartbeats are not audited
