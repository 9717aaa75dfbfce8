"""How many devices at once: ``plumb rollout start --concurrency N`` observes the plan
N devices at a time (not a fixed number), and an emergency rollback raises the
runtime's concurrency to its floor, or to the one it is given, for the restore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
    assert widths == [5]


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
