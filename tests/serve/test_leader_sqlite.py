"""Leadership on a SQLite state: a lock file beside the state file, held with flock for
the life of the process. Two controllers on one state file: one leads; SIGKILL the
leader mid-correction and the standby takes over, ends the dead leader's lease
(audited) and finishes. A leader whose lock file was replaced stops writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.fleet import Fault, FaultKind
from reconciler.errors import FencedOut
from reconciler.state.audit import AuditKind
from reconciler.state.db import open_state_db
from serve.leader_file import FileLeaderLock
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

SERVE = """
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


@pytest.mark.slow
def test_standby_takes_over_from_a_killed_leader_on_sqlite(tmp_path: Path) -> None:
    """Killed while it holds the lease to correct drift, the leader's flock goes with
    it; the standby leads, breaks that lease and corrects the field itself."""
    repos = make_repos(tmp_path, SERVE)
    inject_drift(repos.controller, "leaf-r0", {QOS: 150})
    # The first write touching the field stalls until the kill, however slowly the
    # replicas start: the fault fires once (its one firing is taken before the sleep),
    # so the leader is in its correction when killed and the standby's is not slowed.
    add_lab_fault(
        repos.controller,
        Fault("leaf-r0", FaultKind.latency, path_glob=QOS, count=1, latency_ms=600_000),
    )
    first = start_serve(repos.controller, {}, tmp_path / "a.log")
    second = start_serve(repos.controller, {}, tmp_path / "b.log")
    replicas = [first, second]
    state = repos.controller / ".plumb" / "plumb.db"
    try:
        with open_state_db(state) as db:
            held = wait_until(db.lease.current, 30, "the leader's correction lease")
        assert held.purpose == "serve: correct drift"
        leader = wait_until(lambda: _leader(replicas), 20, "one leader")
        standby = second if leader is first else first
        wait_until(lambda: standby.metric("plumb_serve_leader") == 0, 20, "the standby")
        assert standby.get("/readyz")[0] == 200
        assert lab_values(repos.controller, "leaf-r0")[QOS] == 150  # still stalled
        leader.kill()
        wait_until(lambda: standby.metric("plumb_serve_leader") == 1, 20, "the takeover")
        wait_until(lambda: lab_values(repos.controller, "leaf-r0")[QOS] == 200, 30, "the fix")
    finally:
        for replica in replicas:
            replica.stop()
    with open_state_db(state) as db:
        breaks = [
            r for r in db.audit.records(200, kind=AuditKind.lease) if r.detail["action"] == "break"
        ]
        assert [b.detail["fence"] for b in breaks] == [held.token]
        assert db.lease.current() is None
        assert db.audit.verify().ok


def test_only_one_lock_holder_and_a_replaced_lock_file_fences_the_old_leader(
    tmp_path: Path,
) -> None:
    """While one holds the lock the other cannot; when the lock file is replaced, the
    old holder no longer leads, and once the new leader breaks its lease its next
    write check raises FencedOut."""
    state = tmp_path / "plumb.db"
    old, new = FileLeaderLock(state), FileLeaderLock(state)
    with open_state_db(state) as db:
        try:
            assert old.try_acquire() and old.still_held()
            assert not new.try_acquire()
            assert old.holder().split()[0].isdigit()
            token = db.lease.acquire("old", "serve: correct drift")
            guard = LeaderGuard(db, token, old.still_held)
            guard.before_write("leaf-r0")
            old.path.unlink()  # someone cleans the state folder
            assert not old.still_held()
            with pytest.raises(FencedOut, match="no longer the fleet's leader"):
                guard.before_write("leaf-r0")
            assert new.try_acquire()
            db.lease.break_lease("new", "plumb serve took over leadership")
            with pytest.raises(FencedOut):
                LeaderGuard(db, token, lambda: True).before_write("leaf-r0")
        finally:
            old.release()
            new.release()
