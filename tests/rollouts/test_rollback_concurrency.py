"""How many devices at once: ``plumb rollout start --concurrency N`` observes the plan
N devices at a time (not a fixed number), and an emergency rollback raises the
runtime's concurrency to its floor, or to the one it is given, for the restore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lab.fleet import Fault, FaultKind
from reconciler.loop import apply_plan, observe_all
from reconciler.state.journal import RolloutStatus, TargetStatus
from rollouts.execute import drive
from rollouts.rollback import EMERGENCY_CONCURRENCY, rollback
from rollouts.spec import RollbackScope
from tests.rollouts.gitfleet import FIRMWARE, GitFleet
from tests.rollouts.test_waiting import journaled, runtime


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    return GitFleet.create(tmp_path)


def test_rollout_start_observes_at_the_given_concurrency(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    widths: list[int] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        widths.append(kwargs["concurrency"])
        return observe_all(*args, **kwargs)

    monkeypatch.setattr("service.planning.observe_all", recording)
    run = fleet.plumb("rollout", "start", FIRMWARE, ".", "--concurrency", "5")
    assert run.exit_code == 0, run.stdout + run.stderr
    # the selection, then the neighbours its changes face: each at the given width
    assert widths and set(widths) == {5}, widths


@pytest.mark.parametrize("given", [None, 3])
def test_an_emergency_rollback_restores_at_its_floor_or_the_given_one(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch, given: int | None
) -> None:
    rollout = journaled(fleet, monkeypatch)
    widths: list[int] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        widths.append(kwargs["concurrency"])
        return apply_plan(*args, **kwargs)

    with runtime(fleet) as (_, rt):
        rt.concurrency = 2
        assert drive(rt, rollout) is RolloutStatus.completed
        monkeypatch.setattr("rollouts.targetops.apply_plan", recording)
        scope = RollbackScope.rollout
        if given is None:
            report = rollback(rt, rollout, scope=scope, emergency=True, reason="test")
        else:
            report = rollback(
                rt, rollout, scope=scope, emergency=True, reason="test", emergency_concurrency=given
            )
    assert report.ok and report.restored
    assert widths == [EMERGENCY_CONCURRENCY if given is None else given]
    assert {t.status for t in fleet.targets(rollout)} == {TargetStatus.rolled_back}


@pytest.mark.parametrize(
    "kind",
    [FaultKind.timeout_before_write, FaultKind.timeout_after_write, FaultKind.drop_mid_commit],
)
def test_a_restore_that_times_out_is_observed_again_and_retried(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch, kind: FaultKind
) -> None:
    """A login or commit that times out (a loaded machine) is unknown: the rollback
    observes the target again and restores it on a later try; nothing is left behind
    and no target is written twice over its before-state."""
    rollout = journaled(fleet, monkeypatch)
    monkeypatch.setattr("rollouts.rollback.RETRY_PAUSES", (0.0, 0.0, 0.0))  # no real pauses
    with runtime(fleet) as (_, rt):
        assert drive(rt, rollout) is RolloutStatus.completed
        victims = [t.device for t in fleet.targets(rollout)][:3]
        store = fleet.lab()
        try:
            for device in victims:
                store.add_fault(Fault(device, kind, count=1))
        finally:
            store.close()
        report = rollback(
            rt, rollout, scope=RollbackScope.rollout, emergency=True, reason="loaded machine"
        )
    assert report.ok, report.failed
    assert set(victims) <= set(report.restored) | set(report.already)
    assert {t.status for t in fleet.targets(rollout)} == {TargetStatus.rolled_back}
    assert all(t.before and fleet.running()[t.device].items() >= t.before.items()
               for t in fleet.targets(rollout))  # fmt: skip


def test_a_terminal_error_is_not_retried(fleet: GitFleet, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused login needs a human: one try, reported with its reason."""
    rollout = journaled(fleet, monkeypatch)
    monkeypatch.setattr("rollouts.rollback.RETRY_PAUSES", (0.0, 0.0, 0.0))
    with runtime(fleet) as (_, rt):
        assert drive(rt, rollout) is RolloutStatus.completed
        victim = fleet.targets(rollout)[0].device
        store = fleet.lab()
        try:
            store.add_fault(Fault(victim, FaultKind.auth_fail))
        finally:
            store.close()
        report = rollback(rt, rollout, scope=RollbackScope.rollout, emergency=True, reason="x")
    assert set(report.failed) == {victim}
    assert "DeviceAuthError" in report.failed[victim]
