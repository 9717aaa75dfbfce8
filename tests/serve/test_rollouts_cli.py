"""Approval and promotion from the command line, and the non-blocking step the
controller drives rollouts with, on a git-committed ORION copy with a lab fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.clock import clock_now
from reconciler.state.journal import RolloutStatus, WaveStatus
from reconciler.state.journal_approvals import ApprovalKind, ApprovalState
from rollouts.execute import advance
from service.context import FleetContext
from service.runtime import rollout_runtime
from tests.rollouts.gitfleet import GitFleet
from tests.serve.test_rollouts_serve import SPEC

NAME = "hx8-serve"


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    made = GitFleet.create(tmp_path)
    made.copy.write(f"rollouts/{NAME}.yaml", SPEC)
    made.commit("rollout spec")
    return made


def test_a_wave_number_below_one_is_refused_at_its_line(fleet: GitFleet) -> None:
    """approval.before_waves: [0] is an input error pointing at the spec's line."""
    fleet.copy.replace(f"rollouts/{NAME}.yaml", "before_waves: [2]", "before_waves: [2, 0]")
    run = fleet.plumb("rollout", "plan", NAME, ".")
    assert run.exit_code == 2
    assert f"rollouts/{NAME}.yaml:24:23: " in run.stderr
    assert "greater than or equal to 1" in run.stderr


def test_approve_is_journaled_bound_to_the_spec_and_audited_once(fleet: GitFleet) -> None:
    """The approval keeps who, the spec's sha256 and commit; approving again adds none."""
    run = fleet.plumb("rollout", "approve", NAME, ".")
    assert run.exit_code == 0, run.stderr
    again = fleet.plumb("rollout", "approve", NAME, ".")
    assert again.exit_code == 0 and "approved already" in again.stdout
    with fleet.db() as db:
        (approval,) = db.approvals.rows()
        records = [r for r in db.audit.records(50, kind="rollout") if "approved" in str(r.detail)]
    assert approval.kind is ApprovalKind.start and approval.state is ApprovalState.pending
    assert approval.spec_path == f"rollouts/{NAME}.yaml"
    assert approval.spec_commit is not None and len(approval.spec_sha256) == 64
    assert len(records) == 1 and records[0].detail["spec_commit"] == approval.spec_commit


def test_approve_refuses_an_uncommitted_spec(fleet: GitFleet) -> None:
    """A spec edited after its commit is not what would be approved: refused, nothing kept."""
    fleet.copy.replace(f"rollouts/{NAME}.yaml", "fixed_minutes: 30.0", "fixed_minutes: 20.0")
    run = fleet.plumb("rollout", "approve", NAME, ".")
    assert run.exit_code == 2 and "commit" in run.stderr
    with fleet.db() as db:
        assert db.approvals.rows() == []


def test_start_pauses_before_a_held_wave_and_advance_never_waits(fleet: GitFleet) -> None:
    """`rollout start` stops before wave 2 (exit 3, awaiting_promotion); promote refuses
    a wave the spec does not hold; once wave 2 is promoted, advance() applies it and
    returns at its bake with the journaled end, without moving the clock."""
    run = fleet.plumb("rollout", "start", NAME, ".")
    assert run.exit_code == 3, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    with fleet.db() as db:
        row = db.journal.get(rollout)
        assert row is not None and row.status is RolloutStatus.awaiting_promotion
        assert row.reason is not None and f"promote {rollout} --wave 2" in row.reason
    refused = fleet.plumb("rollout", "promote", rollout, ".", "--wave", "3")
    assert refused.exit_code == 1 and "does not wait for promotion" in refused.stderr
    promoted = fleet.plumb("rollout", "promote", rollout, ".", "--wave", "2")
    assert promoted.exit_code == 0, promoted.stderr

    before = clock_now(fleet.lab_path)
    fleet_model = fleet.copy.load()
    with fleet.db() as db:
        context = FleetContext(fleet_model, "tester", None, db)
        names = [t.device for t in db.journal.targets(rollout)]
        with (
            db.lease.held("tester", "test") as token,
            rollout_runtime(context, token, names) as rt,
        ):
            due = advance(rt, rollout)
            wave = db.journal.waves(rollout)[1]
            assert (due.status, due.wave) == (RolloutStatus.running, 2)
            assert wave.status is WaveStatus.baking and due.until == wave.bake_end
            assert wave.bake_end is not None
            assert clock_now(fleet.lab_path) < wave.bake_end  # nothing waited for the bake
            writes = fleet.device_writes()
            assert advance(rt, rollout) == due and fleet.device_writes() == writes
            rt.clock.advance(wave.bake_end - rt.clock.now())
            later = advance(rt, rollout)
        assert db.journal.waves(rollout)[1].status is WaveStatus.passed
        assert later.wave == 3 and later.until is not None
        assert [a.state for a in db.approvals.rows(rollout=rollout)] == [ApprovalState.taken]
    assert clock_now(fleet.lab_path) > before
