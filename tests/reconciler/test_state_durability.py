"""plumb records to a PostgreSQL state only where a commit survives a crash: every
connection asks for synchronous_commit, and a server with fsync or full_page_writes off
is read-only to plumb unless PLUMB_STATE_NONDURABLE=accept says it is a throwaway.
On a durable server, records committed before an immediate shutdown are all there
after the restart."""

from __future__ import annotations

import pytest

from reconciler.state.errors import StateReadOnly
from reconciler.state.pgdb import open_pg_state_db
from tests.pgserver import PgServer


def test_a_nondurable_server_is_read_only_unless_accepted(
    pg_server: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = pg_server.new_database()  # the suite's server runs with fsync off
    monkeypatch.delenv("PLUMB_STATE_NONDURABLE", raising=False)
    with open_pg_state_db(url) as db:
        assert db.lease.current() is None  # reading works
        with pytest.raises(StateReadOnly) as refused:
            db.lease.acquire("alice@host pid 1", "apply")
    message = str(refused.value)
    assert "fsync = off" in message and "full_page_writes = off" in message
    assert "PLUMB_STATE_NONDURABLE=accept" in message and "plumb lease show" in message
    monkeypatch.setenv("PLUMB_STATE_NONDURABLE", "accept")
    with open_pg_state_db(url) as db:
        db.lease.release(db.lease.acquire("alice@host pid 1", "apply"))


def test_plumbs_sessions_commit_synchronously_and_are_watched(pg_server: PgServer) -> None:
    """The server's default is synchronous_commit = off; plumb's sessions are on, and
    the server probes them (keepalives) to find a client that is gone; options the URL
    gives are kept."""
    url = pg_server.new_database() + "?options=-c%20statement_timeout%3D60000"
    names = ("synchronous_commit", "tcp_keepalives_idle", "statement_timeout")
    with open_pg_state_db(url) as db, db.reading() as conn:
        row = conn.execute(
            "SELECT " + ", ".join(f"current_setting('{n}')" for n in names)
        ).fetchone()
    assert tuple(row) == ("on", "5", "1min")


def test_commits_survive_an_immediate_shutdown(
    halting_pg: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Audit records of writes, committed, then SIGQUIT: all of them are there after,
    on a server whose own default is synchronous_commit = off (a commit returns before
    its WAL is flushed): plumb's sessions ask for it on."""
    monkeypatch.delenv("PLUMB_STATE_NONDURABLE", raising=False)  # durable: not needed
    url = halting_pg.new_database()
    with open_pg_state_db(url) as db:
        for n in range(20):
            db.audit.append("write", actor="alice", intent_commit="c1", device=f"leaf-{n}")
        head = db.audit.records(1)[-1].seq
    halting_pg.halt()
    halting_pg.resume()
    with open_pg_state_db(url) as db:
        assert db.audit.records(1)[-1].seq == head
        assert db.audit.verify().ok
