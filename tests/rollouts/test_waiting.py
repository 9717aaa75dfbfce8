"""Waiting on a real clock: a bake is waited in slices and an operator abort stops
it within one; the declared drain time (a price figure) is never slept; a rollback's
return to service re-observes after the reboot, so a restore the reboot lost is not
called rolled back. A lab fleet stands behind a clock that reports itself as real."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest

import plumb.cmd_rollout as cmd_rollout
from intent.fleet import load_fleet
from reconciler.state.journal import Lifecycle, RolloutStatus, TargetStatus
from rollouts.execute import WAIT_SLICE_MINUTES, drive
from rollouts.rollback import rollback
from rollouts.runtime import BakeClock, Maintenance, Runtime, WallClock
from rollouts.spec import RollbackScope
from service.context import FleetContext
from service.runtime import rollout_runtime
from tests.rollouts.gitfleet import FIRMWARE, GitFleet


class RealLooking(WallClock):
    """A WallClock (so the rollout treats it as real time) whose minutes are the lab's
    virtual ones; it records every wait and can run a hook after each."""

    def __init__(self, inner: BakeClock, after: Callable[[int], None] | None = None) -> None:
        self.inner = inner
        self.waits: list[float] = []
        self.after = after

    def now(self) -> float:
        return self.inner.now()

    def advance(self, minutes: float) -> float:
        self.waits.append(minutes)
        moved = self.inner.advance(minutes)
        if self.after is not None:
            self.after(len(self.waits))
        return moved

    def time(self, minutes: float) -> datetime:
        return self.inner.time(minutes)


def journaled(fleet: GitFleet, monkeypatch: pytest.MonkeyPatch) -> str:
    """``plumb rollout start`` journals the firmware rollout; driving it is the test's."""
    monkeypatch.setattr(cmd_rollout, "_drive", lambda *a, **k: RolloutStatus.held)
    run = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert run.exit_code == 3, run.stdout + run.stderr
    monkeypatch.undo()
    return fleet.only_rollout()


@contextmanager
def runtime(fleet: GitFleet) -> Iterator[tuple[FleetContext, Runtime]]:
    context = FleetContext(load_fleet(fleet.root), "tests", None)
    try:
        names = [t.device for t in context.db.journal.targets(fleet.only_rollout())]
        with (
            context.db.lease.held(context.holder, "test") as token,
            rollout_runtime(context, token, names) as rt,
        ):
            yield context, rt
    finally:
        context.close()


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    return GitFleet.create(tmp_path)


def test_a_real_clock_bakes_in_slices_and_never_sleeps_the_drain(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The canary (B0 defect: it aborts and rolls back) waits only for its bake, in
    slices; neither the forward drain nor the rollback's sleeps drain_minutes."""
    rollout = journaled(fleet, monkeypatch)
    fleet.hide_b0_defect()
    with runtime(fleet) as (context, rt):
        clock = RealLooking(rt.clock)
        rt.clock = clock
        status = drive(rt, rollout)
        canary = context.db.journal.waves(rollout)[0]
    assert status is RolloutStatus.rolled_back
    assert clock.waits and max(clock.waits) <= WAIT_SLICE_MINUTES
    assert sum(clock.waits) == pytest.approx(canary.bake_minutes)


def test_an_abort_stops_a_real_time_bake_within_a_slice(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plumb rollout abort` from elsewhere during the bake: the wave stops after the
    slice it was in, long before the bake's end."""
    rollout = journaled(fleet, monkeypatch)
    with runtime(fleet) as (context, rt):

        def abort_at_third(waits: int) -> None:
            if waits == 3:
                context.db.journal.set_status(rollout, RolloutStatus.aborted, "operator")

        clock = RealLooking(rt.clock, abort_at_third)
        rt.clock = clock
        status = drive(rt, rollout)
        canary = context.db.journal.waves(rollout)[0]
    assert status is RolloutStatus.aborted
    assert len(clock.waits) == 3 and sum(clock.waits) < canary.bake_minutes


class RefLashes:
    """Maintenance whose reboot boots the new NIC firmware again on ``nodes`` (the
    flash back did not take)."""

    def __init__(self, inner: Maintenance, fleet: GitFleet, nodes: set[str]) -> None:
        self.inner, self.fleet, self.nodes = inner, fleet, nodes

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        result = self.inner.reboot(devices)
        store = self.fleet.lab()
        try:
            for name in self.nodes & set(devices):
                store.commit(name, {"firmware/nic_firmware": "28.43.1014"}, save=True)
        finally:
            store.close()
        return result

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        return self.inner.acceptance(devices)


def test_a_restore_the_reboot_lost_is_not_rolled_back(
    fleet: GitFleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the rollback's reboot one node runs the new firmware again: it is
    rollback_failed and in repair, the report counts it failed, the rollout is not
    rolled_back."""
    rollout = journaled(fleet, monkeypatch)
    fleet.hide_b0_defect()
    with runtime(fleet) as (context, rt):
        rt.clock = RealLooking(rt.clock)
        status = drive(rt, rollout)  # the canary aborts and is rolled back as usual
        assert status is RolloutStatus.rolled_back
    canary = [t.device for t in fleet.targets(rollout) if t.wave == 1]
    bad = canary[0]
    with runtime(fleet) as (context, rt):
        # the canary on the new firmware once more (as if re-applied), then roll back
        store = fleet.lab()
        try:
            for name in canary:
                store.commit(name, {"firmware/nic_firmware": "28.43.1014"}, save=True)
        finally:
            store.close()
        context.db.journal.set_targets(rollout, canary, TargetStatus.applied)
        context.db.journal.set_status(rollout, RolloutStatus.aborted, "again")
        rt.maintenance = RefLashes(rt.maintenance, fleet, {bad})
        report = rollback(rt, rollout, scope=RollbackScope.wave, wave=1, reason="again")
    assert bad in report.failed and bad not in report.restored
    assert "after the reboot the before-state is not in place" in report.failed[bad]
    rows = {t.device: t for t in fleet.targets(rollout)}
    assert rows[bad].status is TargetStatus.rollback_failed
    assert rows[bad].lifecycle is Lifecycle.repair
    with fleet.db() as db:
        row = db.journal.get(rollout)
    assert row is not None and row.status is not RolloutStatus.rolled_back
