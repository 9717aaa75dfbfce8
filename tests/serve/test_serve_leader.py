"""Two ``plumb serve`` replicas on one PostgreSQL state: one leads, the other stands
by; when the leader is SIGKILLed mid-correction the standby takes over, ends the lease
the dead leader left, and finishes the correction. A former leader that lost its
session is fenced out of writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.fleet import Fault, FaultKind
from reconciler.errors import FencedOut
from reconciler.state.audit import AuditKind
from reconciler.state.pgdb import open_pg_state_db
from serve.leader_pg import LeaderLock
from serve.reconcile import LeaderGuard
from tests.serve.servefleet import (
    Served,
    add_lab_fault,
    inject_drift,
    lab_values,
    make_repos,
    start_serve,
    wait_until,
)

pytestmark = pytest.mark.slow

SERVE = """
state:
  backend: postgresql
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: correct
"""
QOS = "qos/ecn/3/kmin_kb"


def _leader(replicas: list[Served]) -> Served | None:
    leaders = [r for r in replicas if r.metric("plumb_serve_leader") == 1]
    return leaders[0] if len(leaders) == 1 else None


def test_standby_takes_over_from_a_killed_leader(tmp_path: Path, pg_url: str) -> None:
    """The leader is killed while it holds the lease to correct drift; the standby
    leads, breaks that lease (audited) and corrects the field itself."""
    repos = make_repos(tmp_path, SERVE)
    inject_drift(repos.controller, "leaf-r0", {QOS: 150})
    add_lab_fault(  # a slow device: the correction is still running when the kill comes
        repos.controller, Fault("leaf-r0", FaultKind.latency, path_glob=QOS, latency_ms=5000)
    )
    env = {"PLUMB_STATE_URL": pg_url}
    first = start_serve(repos.controller, env, tmp_path / "a.log")
    second = start_serve(repos.controller, env, tmp_path / "b.log")
    replicas = [first, second]
    db = open_pg_state_db(pg_url)
    try:
        held = wait_until(db.lease.current, 30, "the leader's correction lease")
        leader = wait_until(lambda: _leader(replicas), 20, "one leader")
        standby = second if leader is first else first
        wait_until(lambda: standby.metric("plumb_serve_leader") == 0, 20, "the standby")
        assert standby.get("/readyz")[0] == 200  # a standby is ready
        assert held.purpose.startswith("serve")
        leader.kill()
        wait_until(lambda: standby.metric("plumb_serve_leader") == 1, 20, "the takeover")
        wait_until(lambda: lab_values(repos.controller, "leaf-r0")[QOS] == 200, 30, "the fix")
        wait_until(lambda: db.lease.current() is None, 10, "the lease released")
    finally:
        for replica in replicas:
            replica.stop()
    breaks = [
        r for r in db.audit.records(200, kind=AuditKind.lease) if r.detail["action"] == "break"
    ]
    assert [b.detail["fence"] for b in breaks] == [held.token]
    assert db.audit.verify().ok
    db.close()


def test_a_leader_that_lost_its_session_cannot_write(pg_url: str) -> None:
    """Once the old leader's session is gone, the new leader's take-over breaks its
    lease: the old leader's next write check raises FencedOut."""
    old, new = LeaderLock(pg_url, "orion"), LeaderLock(pg_url, "orion")
    db = open_pg_state_db(pg_url)
    try:
        assert old.try_acquire() and old.still_held()
        assert not new.try_acquire()
        token = db.lease.acquire("old pid 1", "serve: correct drift")
        guard = LeaderGuard(db, token, old.still_held)
        guard.before_write("leaf-r0")  # leading, lease held: the write may start
        with db.transaction() as conn:  # the old leader's session dies (network, kill)
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                " AND granted AND pid <> pg_backend_pid()"
            )
        assert wait_until(new.try_acquire, 10, "the lock freed")
        db.lease.break_lease("new pid 2", "plumb serve took over leadership")
        with pytest.raises(FencedOut):
            guard.before_write("leaf-r0")
        assert not old.still_held()
    finally:
        old.release()
        new.release()
        db.close()
