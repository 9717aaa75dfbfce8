"""Rollouts driven by the controller (``plumb serve``), one turn at a time.

Each turn as leader: pending approvals are acted on (:mod:`serve.approvals`),
then every rollout handed to the controller is advanced by the steps that are due
(:func:`rollouts.execute.advance`) under the fleet lease, and the turn returns: a
bake in progress is a time the loop wakes at, never a sleep. Every device write of
the rollout is fenced by the lease token, the controller's leadership and the
rollout's own status, so an operator's ``plumb rollout abort`` stops the next write.
An aborted rollout whose spec says ``rollback.automatic`` has the wave that was in
progress rolled back (its declared scope); a crash during it resumes the rollback.

On a lab fleet the lab's virtual clock is moved with real time, ``lab_pace`` virtual
minutes per second (1/60 is real time), while a rollout the controller drives is
active: the lab then bakes as a real fleet does, faster if asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from reconciler.errors import FencedOut
from reconciler.state.db import StateDB
from reconciler.state.journal import RolloutStatus, WaveStatus
from reconciler.state.journal_approvals import ApprovalKind
from reconciler.state.lease import LeaseHeld, LeaseToken
from rollouts.runtime import Runtime, real_time
from serve.approvals import (
    NotYet,
    Queued,
    Settled,
    drive_approved,
    settle,
    start_approved,
)
from serve.reconcile import LeaderGuard
from serve.rolloutmetrics import RolloutMetrics
from service.approvals import pending_approvals
from service.context import FleetContext
from service.ownership import IN_PROGRESS, awaits_rollback
from service.rollback import finish_rollback
from service.runtime import rollout_runtime, rollout_support

POLL_SECONDS = 2.0
"""While rollouts are handed to it, the controller looks at them (and at pending
approvals) at least this often: an abort or a promotion is seen within it."""
DRIVEN = (RolloutStatus.running, RolloutStatus.awaiting_promotion, RolloutStatus.rolling_back)


class RolloutFence(LeaderGuard):
    """Before every device write: kill switch, lease token, leadership, and the
    rollout not aborted (an abort committed stops the very next write)."""

    def __init__(
        self, db: StateDB, token: LeaseToken, leading: Callable[[], bool], rollout: str
    ) -> None:
        super().__init__(db, token, leading)
        self.rollout = rollout

    def before_write(self, device: str) -> None:
        super().before_write(device)
        row = self.db.journal.get(self.rollout)
        if row is not None and row.status is RolloutStatus.aborted:
            raise FencedOut(f"rollout {self.rollout} was aborted: {row.reason or 'aborted'}")


class LogReporter:
    """A driven rollout's progress as log lines."""

    def __init__(self, rollout: str, log: Callable[[str], None]) -> None:
        self.rollout = rollout
        self.log = log

    def message(self, text: str) -> None:
        self.log(f"rollout {self.rollout}: {text}")

    def begin(self, label: str, total: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None

    def end(self) -> None:
        return None


class RolloutDriver:
    def __init__(
        self, metrics: RolloutMetrics, log: Callable[[str], None], *, lab_pace: float
    ) -> None:
        self.metrics = metrics
        self.log = log
        self.lab_pace = lab_pace
        self._paced_at: float | None = None
        self._waiting: dict[int, str] = {}  # approval -> why it waits, as last logged

    def turn(self, context: FleetContext, leading: Callable[[], bool]) -> float:
        """Act on approvals, advance every driven rollout; seconds until a step is due.
        Start approvals start in approval order: one that waits holds the later ones."""
        ahead: int | None = None  # the first start approval still waiting
        for approval in pending_approvals(context):
            start = approval.kind is ApprovalKind.start
            try:
                if start and ahead is not None:
                    raise Queued(f"queued behind approval {ahead}")
                if start:
                    outcome = start_approved(context, approval, self.log)
                else:
                    outcome = drive_approved(context, approval)
            except NotYet as exc:
                ahead = approval.id if start and ahead is None else ahead
                if self._waiting.get(approval.id) != str(exc):
                    self._waiting[approval.id] = str(exc)
                    self.log(f"approval {approval.id} of {approval.spec_path}: waits: {exc}")
                continue
            self._waiting.pop(approval.id, None)
            if outcome.refused:
                self.log(f"approval {approval.id} refused: {outcome.refused}")
            settle(context, approval, outcome)
            if approval.kind is ApprovalKind.drive and not outcome.refused:
                self._kick(context, outcome)
        waits = [POLL_SECONDS]
        driven = self.driven(context)
        self._pace(context, bool(driven))
        for rollout in driven:
            try:
                wait = self.step(context, rollout, leading)
            except LeaseHeld as exc:
                self.log(f"rollout {rollout}: waits for the lease: {exc}")
                continue
            if wait is not None:
                waits.append(wait)
        self.metrics.refresh(context.db)
        return max(0.05, min(waits))

    def _kick(self, context: FleetContext, outcome: Settled) -> None:
        """A held rollout handed over resumes (its held wave bakes once more)."""
        row = context.db.journal.get(outcome.rollout or "")
        if row is not None and row.status is RolloutStatus.held:
            context.db.journal.set_status(row.id, RolloutStatus.running, "resumed on approval")

    def driven(self, context: FleetContext) -> list[str]:
        """Rollouts handed to the controller that it still has to move."""
        out = []
        for rollout in sorted(context.db.approvals.controlled()):
            row = context.db.journal.get(rollout)
            if row is None:
                continue
            if row.status in DRIVEN or (
                row.status is RolloutStatus.aborted and self._abort_to_roll_back(context, rollout)
            ):
                out.append(rollout)
        return out

    @staticmethod
    def _abort_to_roll_back(context: FleetContext, rollout: str) -> bool:
        """An operator aborted the rollout mid-wave and its spec rolls back on abort."""
        row = context.db.journal.get(rollout)
        return row is not None and awaits_rollback(context.db, row)

    def step(
        self, context: FleetContext, rollout: str, leading: Callable[[], bool]
    ) -> float | None:
        """Advance ``rollout`` under the lease; seconds until its bake ends, if baking."""
        from rollouts.execute import advance
        from rollouts.targetops import RolloutStopped

        db = context.db
        row = db.journal.get(rollout)
        if row is None:
            return None
        names = [t.device for t in db.journal.targets(rollout)]
        with (
            db.lease.held(context.holder, f"serve: rollout {rollout}", audited=False) as token,
            rollout_runtime(context, token, names) as rt,
        ):
            rt.reporter = LogReporter(rollout, self.log)
            rt.guard = RolloutFence(db, token, leading, rollout)
            plain = LeaderGuard(db, token, leading)  # a rollback writes after the abort
            if row.status is RolloutStatus.aborted:
                why = row.reason or "aborted by operator"
                self._roll_back_abort(context, rt, plain, rollout, why)
                return None
            if row.status is RolloutStatus.rolling_back:
                self._finish(context, rt, plain, rollout)
                return None
            try:
                due = advance(rt, rollout)
            except RolloutStopped as exc:
                self.log(f"rollout {rollout}: stopped before a write: {exc}")
                return None
            if due.status is RolloutStatus.aborted and self._abort_to_roll_back(context, rollout):
                current = db.journal.get(rollout)
                reason = (current.reason if current else None) or "aborted by operator"
                self._roll_back_abort(context, rt, plain, rollout, reason)
                return None
            if due.status is not row.status:
                self.log(f"rollout {rollout}: {row.status.value} -> {due.status.value}")
            if due.until is None:
                return None
            return self._seconds_until(rt, due.until)

    def _roll_back_abort(
        self, context: FleetContext, rt: Runtime, guard: LeaderGuard, rollout: str, why: str
    ) -> None:
        """Roll back the wave an operator abort stopped: ``rolling_back`` is journaled
        first, so a crash from here on resumes the rollback."""
        journal = context.db.journal
        wave = next(w for w in journal.waves(rollout) if w.status in IN_PROGRESS)
        journal.set_status(rollout, RolloutStatus.rolling_back, why)
        journal.update_wave(
            rollout,
            wave.number,
            status=WaveStatus.aborted,
            decision="abort",
            evidence={**(wave.evidence or {}), "reasons": [f"aborted by operator: {why}"]},
        )
        self.log(f"rollout {rollout}: aborted in wave {wave.number}: rolling it back")
        self._finish(context, rt, guard, rollout)

    def _finish(self, context: FleetContext, rt: Runtime, guard: LeaderGuard, rollout: str) -> None:
        rt.guard = guard
        status = finish_rollback(context, rt, rollout)
        self.log(f"rollout {rollout}: rollback done: {status.value}")

    def _seconds_until(self, rt: Runtime, until: float) -> float:
        left = max(0.0, until - rt.clock.now())
        if real_time(rt.clock):
            return left * 60.0
        return left / self.lab_pace

    def _pace(self, context: FleetContext, active: bool) -> None:
        """Move a virtual rollout clock (the lab's) by the real time since the last turn."""
        now = time.monotonic()
        support = rollout_support(context, list(context.fleet.devices)) if active else None
        if support is None:
            self._paced_at = None
            return
        try:
            if self._paced_at is not None and not real_time(support.clock):
                support.clock.advance((now - self._paced_at) * self.lab_pace)
        finally:
            support.close()
        self._paced_at = now
