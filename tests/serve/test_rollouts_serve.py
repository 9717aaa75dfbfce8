"""Rollouts driven by ``plumb serve`` on real parts: a bare git remote the spec is
pushed to, the controller's clone with a lab whose virtual clock the controller moves
with real time (``--lab-pace``), ``plumb serve`` as a process killed with SIGKILL,
the CLI approving, promoting and aborting from another process, and a loopback
receiver for the notices."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from intent.fleet import load_fleet
from lab.clock import clock_now
from lab.fleet import lab_db_path
from lab.store import LabStore
from reconciler.state.db import open_state_db
from reconciler.state.journal import RolloutStatus, WaveRow, WaveStatus
from tests.prometheus.server import free_port
from tests.serve.servefleet import PLUMB, Receiver, Repos, Served, make_repos, wait_until

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 1
  interval_seconds: 3600
  notify:
    - url_env: TEST_NOTIFY_URL
"""
SPEC = """rollout:
  name: hx8-serve
  targets:
    select: role=gpu-node
    paths: ["firmware/*"]
  strata:
    extra_attributes: [label.nic_revision]
  waves:
    growth: 10.0
  caps:
    per_wave: 16
  bake:
    mode: fixed
    fixed_minutes: 30.0
  drain: true
  price:
    drain_minutes: 5.0
  abort:
    hard_faults: [unreachable, unknown]  # the lab runs acceptance hourly: not in a 30 min bake
  rollback:
    scope: wave
    automatic: true
  approval:
    before_waves: [2]
"""
PACE = "10"  # virtual minutes per real second: a 30-minute bake takes 3 s


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.start()
    yield found
    found.stop()


def fleet_with_spec(tmp: Path) -> Repos:
    """ORION with a lab at intent, then a pushed commit moving the HX8 nodes to another
    bundle and the spec that rolls it out."""
    repos = make_repos(tmp, SERVE)
    groups = (repos.author / "intent" / "groups.yaml").read_text()
    repos.push(
        "intent/groups.yaml",
        groups.replace("bundle: hx8-2026.09", "bundle: hx8-2026.06"),
        "HX8 nodes to hx8-2026.06",
    )
    repos.push("rollouts/hx8-serve.yaml", SPEC, "rollout spec hx8-serve")
    return repos


def serve(repos: Repos, receiver: Receiver, log: Path, pace: str = PACE) -> Served:
    port = free_port()
    url = f"http://127.0.0.1:{receiver.server.server_address[1]}/json"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(str(PLUMB), "serve", str(repos.controller)),
                *("--listen", f"127.0.0.1:{port}", "--lab-pace", pace),
            ],
            env={**os.environ, "PLUMB_ACTOR": "controller@test", "TEST_NOTIFY_URL": url},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, port, log)
    wait_until(lambda: served.get("/healthz")[0] == 200 or process.poll() is not None, 20, "up")
    assert process.poll() is None, log.read_text()[-2000:]
    return served


def plumb(repos: Repos, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PLUMB), *args],
        cwd=repos.controller,
        env={**os.environ, "PLUMB_ACTOR": "alice@test"},
        capture_output=True,
        text=True,
        check=False,
    )


def rollout_id(repos: Repos) -> str | None:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        rows = db.journal.all()
    return rows[0].id if rows else None


def waves(repos: Repos, rollout: str) -> list[WaveRow]:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        return db.journal.waves(rollout)


def status(repos: Repos, rollout: str) -> RolloutStatus:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        row = db.journal.get(rollout)
    assert row is not None
    return row.status


def lab_writes(repos: Repos) -> dict[str, int]:
    store = LabStore(lab_db_path(load_fleet(repos.controller)))
    try:
        return store.device_writes()
    finally:
        store.close()


def lab_clock(repos: Repos) -> float:
    return clock_now(lab_db_path(load_fleet(repos.controller)))


def baking_wave(repos: Repos, rollout: str) -> WaveRow | None:
    first = waves(repos, rollout)[0]
    return first if first.status is WaveStatus.baking else None


def notice_events(receiver: Receiver, *wanted: str) -> set[str] | None:
    """The events notified so far, once every one of ``wanted`` is among them."""
    events = {str(body["event"]) for body in receiver.events("/json")}
    return events if set(wanted) <= events else None


def approve(repos: Repos) -> None:
    wait_until(lambda: (repos.controller / "rollouts" / "hx8-serve.yaml").exists(), 20, "the fetch")
    done = plumb(repos, "rollout", "approve", "hx8-serve", ".")
    assert done.returncode == 0, done.stderr
    assert "approved rollouts/hx8-serve.yaml" in done.stdout


def test_approved_rollout_survives_sigkill_mid_bake_pauses_and_completes_on_promotion(
    tmp_path: Path, receiver: Receiver
) -> None:
    """The controller starts the approved spec and bakes wave 1 on durable timers; a
    SIGKILL mid-bake and a restart resume the same bake (journaled end kept, no target
    written twice); the rollout then waits before wave 2 (journal, /metrics, notice)
    until promoted, and completes with every target written once."""
    repos = fleet_with_spec(tmp_path)
    log = tmp_path / "serve.log"
    served = serve(repos, receiver, log)
    try:
        approve(repos)
        rollout = wait_until(lambda: rollout_id(repos), 30, "the approved rollout to start")
        baking = wait_until(lambda: baking_wave(repos, rollout), 30, "the bake of wave 1")
        served.kill()
        assert baking.bake_end is not None
        assert lab_clock(repos) < baking.bake_end  # killed before the bake was over
        written = lab_writes(repos)
        with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
            canary = {t.device for t in db.journal.targets(rollout) if t.wave == 1}
        assert 2 <= len(canary) <= 4  # a canary per NIC stratum, and riders of their gangs
        assert set(written) == canary and set(written.values()) == {1}  # the canary, once

        served = serve(repos, receiver, log)
        wait_until(
            lambda: status(repos, rollout) is RolloutStatus.awaiting_promotion, 30, "the pause"
        )
        first = waves(repos, rollout)[0]
        assert (first.bake_start, first.bake_end) == (baking.bake_start, baking.bake_end)
        assert first.status is WaveStatus.passed and first.attempts == 1
        assert waves(repos, rollout)[1].status is WaveStatus.pending
        assert lab_writes(repos) == written  # nothing written while paused
        assert served.metric("plumb_rollout_phase", rollout=rollout) == 1
        assert served.metric("plumb_rollout_phase", phase="awaiting_promotion") == 1
        listed = plumb(repos, "rollout", "list", ".")
        assert "awaiting_promotion" in listed.stdout

        done = plumb(repos, "rollout", "promote", rollout, ".", "--wave", "2")
        assert done.returncode == 0, done.stderr
        wait_until(lambda: status(repos, rollout) is RolloutStatus.completed, 40, "completion")
        events = wait_until(lambda: notice_events(receiver, "approve", "promotion"), 15, "notices")
        assert "abort" not in events
    finally:
        served.stop()
    writes = lab_writes(repos)
    assert len(writes) == 32 and set(writes.values()) == {1}
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        targets = db.journal.targets(rollout)
        assert all(t.before is not None and t.writes == 1 for t in targets)
        assert all(w.status is WaveStatus.passed for w in db.journal.waves(rollout))
        assert db.audit.verify().ok
        assert db.lease.current() is None
    assert "Traceback" not in log.read_text()


def test_abort_during_a_bake_stops_the_rollout_at_the_next_turn_and_rolls_back(
    tmp_path: Path, receiver: Receiver
) -> None:
    """An operator abort while wave 1 bakes is seen at the controller's next turn:
    no target of a later wave is written, and the automatic rollback restores the
    canary (its before-state) under the controller."""
    repos = fleet_with_spec(tmp_path)
    served = serve(repos, receiver, tmp_path / "serve.log", pace="1")  # a 30 s bake
    try:
        approve(repos)
        rollout = wait_until(lambda: rollout_id(repos), 30, "the approved rollout to start")
        baking = wait_until(lambda: baking_wave(repos, rollout), 30, "the bake of wave 1")
        done = plumb(repos, "rollout", "abort", rollout, ".", "--reason", "bad smell")
        assert done.returncode == 0, done.stderr
        assert baking.bake_end is not None and lab_clock(repos) < baking.bake_end  # mid-bake
        wait_until(lambda: status(repos, rollout) is RolloutStatus.rolled_back, 30, "the rollback")
        wait_until(lambda: notice_events(receiver, "abort", "rollback"), 15, "the notices")
    finally:
        served.stop()
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        targets = db.journal.targets(rollout)
        canary = [t for t in targets if t.wave == 1]
        later = [t for t in targets if t.wave > 1]
        assert 2 <= len(canary) <= 4  # a canary per stratum, riders at most doubling it
        assert all(t.status.value == "rolled_back" for t in canary)
        assert all(t.writes == 0 and t.before is None for t in later)
        first = db.journal.waves(rollout)[0]
        assert first.status is WaveStatus.rolled_back
        assert db.audit.verify().ok
    writes = lab_writes(repos)
    assert set(writes) == {t.device for t in canary}  # written and restored, nothing else
    assert all(count == 2 for count in writes.values())
