"""A lease whose holder is provably gone (its process on a SQLite state, its database
session on PostgreSQL) and silent for longer than ``state.lease_takeover_minutes`` is
taken over by the next writer, audited as a break; the dead holder's token then
refuses a write. A live holder, or one this process cannot see, is never taken over."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reconciler.errors import FencedOut
from reconciler.state.audit import AuditKind
from reconciler.state.db import StateDB
from reconciler.state.lease import LeaseHeld, LeaseToken
from reconciler.state.location import open_state
from tests.pgserver import PgServer

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
sys.path.insert(0, sys.argv[2])
from reconciler.state.location import open_state
db = open_state(sys.argv[1])
token = db.lease.acquire("alice@host pid 1", "rollout fw-1")
print(token.value, flush=True)
time.sleep(600)
"""
BOUND = timedelta(minutes=5)


class Clock:
    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "plumb.db")
    server: PgServer = request.getfixturevalue("pg_server")
    return server.new_database()


@pytest.fixture
def opened(location: str) -> Iterator[Callable[[Clock], StateDB]]:
    dbs: list[StateDB] = []

    def open_at(clock: Clock) -> StateDB:
        db = open_state(location, clock=clock)
        db.lease.takeover_after = BOUND
        dbs.append(db)
        return db

    yield open_at
    for db in dbs:
        db.close()


def _held_by_a_process_then(location: str, *, kill: bool) -> tuple[subprocess.Popen[str], int]:
    """A separate process takes the lease; killed with SIGKILL when ``kill``."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, location, str(ROOT)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    token = int(holder.stdout.readline())
    if kill:
        holder.kill()
        holder.wait()
    return holder, token


def test_a_dead_holders_lease_is_taken_over_after_the_bound(
    location: str, opened: Callable[[Clock], StateDB]
) -> None:
    clock = Clock()
    db = opened(clock)
    _, dead = _held_by_a_process_then(location, kill=True)
    clock.at += timedelta(seconds=30)  # gone, but its heartbeat is still recent
    with pytest.raises(LeaseHeld) as early:
        db.lease.acquire("bob@host pid 2", "apply")
    assert "is gone: the next writer takes the lease over" in str(early.value)
    assert "plumb lease break --reason" in str(early.value)

    clock.at += BOUND
    token = db.lease.acquire("bob@host pid 2", "apply")
    assert token.value > dead
    (record,) = [
        r for r in db.audit.records(20, kind=AuditKind.lease) if r.detail["action"] == "break"
    ]
    assert record.detail["fence"] == dead and record.detail["automatic"] == "true"
    # the holder beat on its own clock, a moment after this test's clock was read
    assert re.search(r"is gone and its last heartbeat is 5m[23]\ds old", record.detail["reason"])
    assert record.actor == "bob@host pid 2"
    with pytest.raises(FencedOut, match="was broken by bob@host pid 2"):
        db.check_write(LeaseToken(dead, "alice@host pid 1", "rollout fw-1"))
    assert db.audit.verify().ok


def test_a_live_holder_is_never_taken_over(
    location: str, opened: Callable[[Clock], StateDB]
) -> None:
    """However old its heartbeat looks, a holder whose session is open keeps the lease."""
    clock = Clock()
    db = opened(clock)
    holder, _ = _held_by_a_process_then(location, kill=False)
    try:
        clock.at += timedelta(days=1)
        with pytest.raises(LeaseHeld, match="if that holder is gone, run `plumb lease break"):
            db.lease.acquire("bob@host pid 2", "apply")
    finally:
        holder.kill()
        holder.wait()


def test_without_a_bound_breaking_stays_manual(
    location: str, opened: Callable[[Clock], StateDB]
) -> None:
    clock = Clock()
    db = opened(clock)
    db.lease.takeover_after = None  # state.lease_takeover_minutes: null
    _held_by_a_process_then(location, kill=True)
    clock.at += timedelta(days=1)
    with pytest.raises(LeaseHeld, match="plumb lease break --reason"):
        db.lease.acquire("bob@host pid 2", "apply")


def test_a_holder_on_another_host_is_left_to_a_human(tmp_path: Path) -> None:
    """A SQLite holder's process is only visible on its own host: unknown is not gone."""
    clock = Clock()
    db = open_state(str(tmp_path / "plumb.db"), clock=clock)
    db.lease.takeover_after = BOUND
    db.lease.acquire("carol@elsewhere pid 9", "apply")
    with db.transaction() as conn:
        conn.execute("UPDATE lease SET session = 'proc elsewhere 9 12345'")
    clock.at += timedelta(days=1)
    with pytest.raises(LeaseHeld, match="if that holder is gone"):
        db.lease.acquire("bob@host pid 2", "apply")
    db.close()
