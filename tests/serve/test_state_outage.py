"""Two ``plumb serve`` replicas outlive their PostgreSQL state database: while it is
down neither leads nor claims to be ready (``/readyz`` 503 naming the database), the
outage is logged once per replica rather than once per turn, and once the server is
back one replica leads again by itself, tells the outage in one notice, and corrects
drift: no process is restarted by hand.

The server is the test's own (``halting_pg``: it is halted and resumed), not the
suite's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from reconciler.state.pgdb import open_pg_state_db
from tests.pgserver import PgServer
from tests.serve.servefleet import (
    Receiver,
    Served,
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
  notify:
    - url_env: TEST_NOTIFY_URL
      events: [state_unreachable]
"""
QOS = "qos/ecn/3/kmin_kb"


def _leaders(replicas: list[Served]) -> list[Served]:
    return [r for r in replicas if r.metric("plumb_serve_leader") == 1]


def _lines(served: Served, pattern: str) -> list[str]:
    return [line for line in served.log.read_text().splitlines() if re.search(pattern, line)]


def test_replicas_recover_from_a_database_restart_by_themselves(
    tmp_path: Path, halting_pg: PgServer
) -> None:
    server = halting_pg
    url = server.new_database()
    repos = make_repos(tmp_path, SERVE)
    receiver = Receiver()
    env = {"PLUMB_STATE_URL": url, "TEST_NOTIFY_URL": f"{receiver.start()}/json"}
    replicas = [
        start_serve(repos.controller, env, tmp_path / "a.log"),
        start_serve(repos.controller, env, tmp_path / "b.log"),
    ]
    try:
        wait_until(lambda: len(_leaders(replicas)) == 1, 30, "one leader")
        wait_until(lambda: all(r.get("/readyz")[0] == 200 for r in replicas), 30, "both ready")

        server.halt()
        down = time.monotonic()
        for replica in replicas:
            wait_until(
                lambda r=replica: r.metric("plumb_state_database_up") == 0, 60, "the outage seen"
            )
            code, body = replica.get("/readyz")
            assert code == 503, body
            assert "state database unreachable" in body
            assert replica.metric("plumb_serve_leader") == 0
            assert replica.get("/healthz")[0] == 200  # the process itself is fine
        # several retries' worth of outage: each must not log a line
        wait_until(lambda: time.monotonic() - down > 8, 20, "an outage of some seconds")

        server.resume()
        back = time.monotonic()
        wait_until(lambda: len(_leaders(replicas)) == 1, 90, "a leader again")
        led = time.monotonic()
        wait_until(lambda: all(r.get("/readyz")[0] == 200 for r in replicas), 60, "both ready")
        inject_drift(repos.controller, "leaf-r0", {QOS: 150})
        wait_until(lambda: lab_values(repos.controller, "leaf-r0")[QOS] == 200, 60, "the fix")
        corrected = time.monotonic()
        print(
            f"database back -> a leader {led - back:.1f} s;"
            f" -> drift injected then corrected {corrected - back:.1f} s"
        )
        notices = wait_until(lambda: receiver.events("/json"), 60, "the outage notice")
    finally:
        for replica in replicas:
            replica.stop()
        receiver.stop()

    assert {n["event"] for n in notices} == {"state_unreachable"}
    assert len({n["id"] for n in notices}) == 1  # told by the leader only
    for replica in replicas:
        assert len(_lines(replica, r"state database unreachable, not leading")) == 1
        assert len(_lines(replica, r"state database reachable again")) == 1
        assert _lines(replica, r"turn failed") == []
    db = open_pg_state_db(url)
    try:
        assert db.audit.verify().ok
        assert db.lease.current() is None
    finally:
        db.close()
