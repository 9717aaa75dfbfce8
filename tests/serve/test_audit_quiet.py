"""The audit log keeps decisions, writes and breaks, not the controller's heartbeat: a
served rollout that bakes takes the lease every turn (state, in the lease table) and
leaves no audit record while nothing is decided or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.state.db import open_state_db
from reconciler.state.journal import WaveStatus
from tests.serve.servefleet import Receiver, wait_until
from tests.serve.test_rollouts_serve import (
    approve,
    baking_wave,
    fleet_with_spec,
    rollout_id,
    serve,
    waves,
)

pytestmark = pytest.mark.slow

SLOW_PACE = "0.5"  # virtual minutes per real second: a 30-minute bake takes a minute


def _counts(root: Path, rollout: str) -> tuple[int, int]:
    """(audit records, serve leases taken for the rollout) so far."""
    with open_state_db(root / ".plumb" / "plumb.db") as db, db.reading() as conn:
        (records,) = conn.execute("SELECT count(*) FROM audit").fetchone()
        (turns,) = conn.execute(
            "SELECT count(*) FROM lease WHERE purpose = ?", (f"serve: rollout {rollout}",)
        ).fetchone()
    return int(records), int(turns)


def test_a_baking_rollout_adds_no_audit_record_per_turn(tmp_path: Path) -> None:
    repos = fleet_with_spec(tmp_path)
    receiver = Receiver()
    receiver.start()
    served = serve(repos, receiver, tmp_path / "serve.log", pace=SLOW_PACE)
    try:
        approve(repos)
        rollout = wait_until(lambda: rollout_id(repos), 30, "the approved rollout to start")
        wait_until(lambda: baking_wave(repos, rollout), 60, "the bake of wave 1")
        records, turns = _counts(repos.controller, rollout)
        wait_until(
            lambda: _counts(repos.controller, rollout)[1] >= turns + 5, 60, "five baking turns"
        )
        after, later_turns = _counts(repos.controller, rollout)
        still = waves(repos, rollout)[0].status
    finally:
        served.stop()
        receiver.stop()
    assert still is WaveStatus.baking  # every counted turn was a turn of the bake
    assert later_turns >= turns + 5
    assert after == records, f"{after - records} audit record(s) in {later_turns - turns} turns"
