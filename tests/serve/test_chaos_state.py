"""Chaos on real parts: two ``plumb serve`` replicas drive a firmware rollout on a
PostgreSQL state, and the database is restarted, or stopped for 60 s, while the
rollout writes and bakes. Both replicas recover without a restart, one leads, the
rollout completes, no target is written twice, no before-state is lost and the audit
chain verifies."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus, WaveStatus
from reconciler.state.pgdb import open_pg_state_db
from tests.pgserver import PgServer
from tests.prometheus.server import free_port
from tests.serve.servefleet import PLUMB, Repos, Served, make_repos, wait_until
from tests.serve.test_rollouts_serve import SPEC, lab_writes

pytestmark = pytest.mark.slow

SERVE = """
state:
  backend: postgresql
serve:
  poll_seconds: 1
  interval_seconds: 3600
"""
UNATTENDED = SPEC.replace("  approval:\n    before_waves: [2]\n", "")
PACE = "10"  # virtual minutes per real second: a 30-minute bake takes 3 s


def _serve(repos: Repos, env: dict[str, str], log: Path) -> Served:
    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(str(PLUMB), "serve", str(repos.controller)),
                *("--listen", f"127.0.0.1:{port}", "--lab-pace", PACE),
            ],
            env={**os.environ, "PLUMB_ACTOR": "controller@test", **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, port, log)
    wait_until(lambda: served.get("/healthz")[0] == 200 or process.poll() is not None, 20, "up")
    assert process.poll() is None, log.read_text()[-2000:]
    return served


def _status(url: str) -> tuple[RolloutStatus, list[WaveStatus]] | None:
    try:
        with open_pg_state_db(url) as db:
            rows = db.journal.all()
            if not rows:
                return None
            return rows[0].status, [w.status for w in db.journal.waves(rows[0].id)]
    except Exception:  # the database is down: not an answer yet
        return None


@pytest.mark.parametrize("down_seconds", [0, 60], ids=["restarted", "stopped-60s"])
def test_a_served_rollout_outlives_its_database(
    tmp_path: Path, halting_pg: PgServer, down_seconds: int
) -> None:
    url = halting_pg.new_database()
    repos = make_repos(tmp_path, SERVE)
    groups = (repos.author / "intent" / "groups.yaml").read_text()
    repos.push(
        "intent/groups.yaml",
        groups.replace("bundle: hx8-2026.09", "bundle: hx8-2026.06"),
        "HX8 nodes to hx8-2026.06",
    )
    repos.push("rollouts/hx8-serve.yaml", UNATTENDED, "rollout spec hx8-serve")
    env = {"PLUMB_STATE_URL": url}
    replicas = [
        _serve(repos, env, tmp_path / "a.log"),
        _serve(repos, env, tmp_path / "b.log"),
    ]
    try:
        wait_until(
            lambda: (repos.controller / "rollouts" / "hx8-serve.yaml").exists(), 30, "the fetch"
        )
        approved = subprocess.run(
            [str(PLUMB), "rollout", "approve", "hx8-serve", "."],
            cwd=repos.controller,
            env={**os.environ, "PLUMB_ACTOR": "alice@test", **env},
            capture_output=True,
            text=True,
            check=False,
        )
        assert approved.returncode == 0, approved.stderr
        # mid-rollout: wave 1 passed or baking, later waves still to write
        wait_until(
            lambda: (s := _status(url)) is not None and s[1][0] is not WaveStatus.pending,
            60,
            "the rollout under way",
        )
        halting_pg.halt()
        for replica in replicas:
            wait_until(
                lambda r=replica: r.metric("plumb_state_database_up") == 0, 60, "the outage"
            )
        time.sleep(down_seconds)
        halting_pg.resume()
        done = wait_until(
            lambda: (s := _status(url)) is not None and s[0] is RolloutStatus.completed and s,
            240,
            "the rollout to complete",
        )
        leaders = [r for r in replicas if r.metric("plumb_serve_leader") == 1]
        assert len(leaders) == 1
        assert all(r.process.poll() is None for r in replicas)  # nobody was restarted
    finally:
        for replica in replicas:
            replica.stop()
    assert set(done[1]) == {WaveStatus.passed}
    writes = lab_writes(repos)
    assert len(writes) == 32 and set(writes.values()) == {1}  # no target written twice
    with open_pg_state_db(url) as db:
        rollout = db.journal.all()[0].id
        targets = db.journal.targets(rollout)
        assert len(targets) == 32
        assert all(t.before is not None and t.writes == 1 for t in targets)
        assert db.audit.verify().ok
        assert db.lease.current() is None
    for replica in replicas:
        text = replica.log.read_text()
        assert "Traceback" not in text
        assert text.count("state database unreachable, not leading") == 1
