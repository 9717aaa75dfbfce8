"""Run a journaled rollout: every wave walks a resumable state machine whose position
is in the journal, so a process killed anywhere resumes where the journal says.

Per wave::

    pending -> draining -> applying -> accepting -> baking -> assessing -> passed
                (drain only)            (drain only)                   \\-> held / aborted

* **draining**: nodes go in_service -> draining -> maintenance (their gangs stop; the
  stall is counted from here until they return to service);
* **applying**: targets without a before-state are observed and their before-states
  recorded durably, all in one transaction, *before* the first write; targets a crash
  left ``in_flight`` or ``unknown`` are re-observed first (at the intended state:
  applied, no second write; otherwise written once more from what they hold). The
  writes go through the reconciler's proven-safe order under the lease, audited, and
  are verified by re-observing;
* **accepting**: firmware changes reboot the node; every drained node then passes
  acceptance to return to service, or goes to repair;
* **baking**: the bake's end is journaled, so a restart waits only for what is left;
* **assessing**: the declared abort conditions over the bake window, wave targets
  against controls (targets not yet changed; when too few remain, targets of waves
  that passed), with an A/A noise floor measured on the controls themselves.

A held wave bakes once more on resume and is judged again; an aborted wave stops the
rollout and, with ``rollback.automatic``, rolls back the declared scope. A wave the
spec lists in ``approval.before_waves`` starts only once a person promoted it.

:func:`drive` runs until the rollout completes, holds, aborts or waits for a
promotion, waiting through bakes (the CLI); :func:`advance` does every step that is
due and returns at a bake still in progress with the minute it ends (the controller
of ``plumb serve``, which never sleeps through a bake).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.drivers.base import Outcome
from reconciler.errors import DeviceError
from reconciler.loop import Observation
from reconciler.plan import build_plan
from reconciler.settings import Owned
from reconciler.state.errors import StateUnreachable
from reconciler.state.journal import (
    Lifecycle,
    RolloutStatus,
    TargetRow,
    TargetStatus,
    WaveRow,
    WaveStatus,
)
from rollouts import lifecycle
from rollouts.assessing import assess_step, at
from rollouts.draining import (
    begin_wave_drain,
    drain_nodes,
    drain_record,
    measured_stall,
    return_nodes,
)
from rollouts.nodes import Context, RolloutAborted, move, owner, stop_if_aborted
from rollouts.nodes import load_context as load_context  # the commands load a rollout here
from rollouts.rollback import rollback
from rollouts.runtime import Runtime, real_time
from rollouts.targetops import (
    RolloutStopped,
    acceptance_tests,
    apply_through,
    drained_gang_gpus,
    needs_reboot,
    observe,
    pass_drain_time,
)

_OUTCOME_STATUS = {
    Outcome.applied: TargetStatus.applied,
    Outcome.unchanged: TargetStatus.applied,
    Outcome.failed: TargetStatus.failed,
    Outcome.unknown: TargetStatus.unknown,
}


def _drain(rt: Runtime, ctx: Context, wave: WaveRow) -> WaveStatus:
    rows = rt.db.journal.targets(ctx.id, wave.number)
    if wave.drain_start is None:
        rt.db.journal.update_wave(ctx.id, wave.number, drain_start=rt.clock.now())
    rt.reporter.message(f"wave {wave.number}: draining {len(rows)} node(s)")
    begin_wave_drain(rt, ctx, wave, [r.device for r in rows])
    record = drain_record(rt.db.journal.waves(ctx.id)[wave.number - 1])
    assert record is not None and isinstance(record["started"], float)
    drain_nodes(rt, ctx, rows, f"wave {wave.number}", record["started"])
    return WaveStatus.applying


def _record_befores(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], seen: Mapping[str, Observation]
) -> None:
    """Durable before-states for every target that has none, before any write."""
    journal = rt.db.journal
    fresh = [r for r in rows if r.status is TargetStatus.pending]
    befores = {
        r.device: {p: state.get(p) for p in r.intended}
        for r in fresh
        if (state := seen[r.device].state) is not None
    }
    if befores:
        journal.record_before(ctx.id, befores)
    blind = {r.device: seen[r.device].error for r in fresh if r.device not in befores}
    if blind:
        errors = {n: f"before-state not observable: {e}" for n, e in blind.items()}
        journal.set_targets(ctx.id, blind, TargetStatus.failed, errors=errors)


def _settle(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], seen: Mapping[str, Observation]
) -> None:
    """Targets a crash or timeout left in flight: decide from what they hold now.

    ``in_flight`` means the write was sent (or about to be) and its outcome never
    journaled: found at the intended state, that write landed and is counted here, as
    the process that sent it could not; not observable, it stays in flight so the
    next look can still count it. ``unknown`` targets were counted when written."""
    journal = rt.db.journal
    for row in rows:
        if row.status not in (TargetStatus.in_flight, TargetStatus.unknown):
            continue
        obs = seen[row.device]
        uncounted = row.status is TargetStatus.in_flight
        if obs.state is None:
            journal.set_targets(
                ctx.id,
                [row.device],
                row.status,
                errors={row.device: f"re-observe after an interrupted write failed: {obs.error}"},
            )
        elif at(obs.state, row.intended):
            _confirm(rt, row.device)
            journal.set_targets(ctx.id, [row.device], TargetStatus.applied, wrote=uncounted)
        else:
            journal.set_targets(ctx.id, [row.device], TargetStatus.recorded)


def _confirm(rt: Runtime, device: str) -> None:
    """Confirm a commit a crash may have left inside its confirm window, so the device
    does not revert it on its own; nothing pending (already confirmed) is fine, and a
    commit that did revert shows as drift when the wave is judged."""
    if rt.confirm_within is None:
        return
    with contextlib.suppress(DeviceError):
        rt.targets.driver(device).confirm(rt.targets.ref(device), None)


def _write(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], seen: Mapping[str, Observation]
) -> None:
    """Apply the recorded targets' intended values in the proven-safe order."""
    journal = rt.db.journal
    ready = [
        r for r in rows if r.status is TargetStatus.recorded and lifecycle.writable(r.lifecycle)
    ]
    if not ready:
        return
    mine = owner(ctx.id, "intent")
    desired = {r.device: {p: Owned(v, mine) for p, v in r.intended.items()} for r in ready}
    observed = {n: o.state for n, o in seen.items()}
    errors = {n: o.error for n, o in seen.items() if o.error}
    plan = build_plan(rt.fleet, desired, observed, errors=errors, holds=journal.holds())
    if plan.refused is not None:
        refused = {r.device: f"plan refused: {plan.refused}" for r in ready}
        journal.set_targets(ctx.id, refused, TargetStatus.failed, errors=refused)
        return
    changed = plan.changes()
    settled = [r.device for r in ready if r.device not in changed]
    if settled:
        journal.set_targets(ctx.id, settled, TargetStatus.applied)
    if not changed:
        return
    journal.set_targets(ctx.id, changed, TargetStatus.in_flight)
    report, results = apply_through(rt, plan, "writing", failpoint_site="write")
    by_status: dict[TargetStatus, list[str]] = {}
    for name, result in results.items():
        by_status.setdefault(_OUTCOME_STATUS.get(result.outcome, TargetStatus.unknown), []).append(
            name
        )
    for status, names in by_status.items():
        journal.set_targets(
            ctx.id, names, status, errors={n: results[n].error for n in names}, wrote=True
        )
    if report.not_started:
        journal.set_targets(ctx.id, report.not_started, TargetStatus.recorded)
    if report.stopped and ("Frozen" in report.stopped or "FencedOut" in report.stopped):
        raise RolloutStopped(report.stopped)


def _apply(rt: Runtime, ctx: Context, wave: WaveRow) -> WaveStatus:
    rows = rt.db.journal.targets(ctx.id, wave.number)
    open_rows = [
        r
        for r in rows
        if r.status
        in (
            TargetStatus.pending,
            TargetStatus.recorded,
            TargetStatus.in_flight,
            TargetStatus.unknown,
        )
    ]
    if open_rows:
        rt.reporter.message(f"wave {wave.number}: observing {len(open_rows)} target(s)")
        seen = observe(rt, [r.device for r in open_rows])
        _record_befores(rt, ctx, open_rows, seen)
        _settle(rt, ctx, open_rows, seen)
        _write(rt, ctx, rt.db.journal.targets(ctx.id, wave.number), seen)
    return WaveStatus.accepting if ctx.spec.drain else WaveStatus.baking


def _accept(rt: Runtime, ctx: Context, wave: WaveRow) -> WaveStatus:
    """Reboot where firmware changed, verify, run acceptance; back to service or repair."""
    journal = rt.db.journal
    rows = journal.targets(ctx.id, wave.number)
    pending = [r for r in rows if r.lifecycle in (Lifecycle.maintenance, Lifecycle.acceptance)]
    if pending:
        pass_drain_time(rt, _remaining_drain(rt, ctx, wave))
        changed = [
            r.device
            for r in pending
            if r.status is TargetStatus.applied
            and needs_reboot(list(r.intended))
            and r.lifecycle is Lifecycle.maintenance
        ]
        failures = {n: e for n, e in rt.maintenance.reboot(changed).items() if e}
        move(
            rt,
            ctx,
            [r for r in pending if r.lifecycle is Lifecycle.maintenance],
            Lifecycle.acceptance,
        )
        seen = observe(rt, [r.device for r in pending])
        for row in pending:
            if row.status is TargetStatus.applied and not at(seen[row.device].state, row.intended):
                failures.setdefault(row.device, "after reboot the intended state is not in place")
        checks = rt.maintenance.acceptance([r.device for r in pending])
        failures.update({n: f for n, f in checks.items() if f})
        failures.update(acceptance_tests(rt, ctx, wave.number, [r.device for r in pending]))
        passed = [r for r in pending if r.device not in failures]
        failed = [r for r in pending if r.device in failures]
        for status in {r.status for r in failed}:  # keep the status, say why
            names = [r.device for r in failed if r.status is status]
            journal.set_targets(ctx.id, names, status, errors={n: failures[n] for n in names})
        move(rt, ctx, passed, Lifecycle.in_service)
        move(rt, ctx, failed, Lifecycle.repair)
        if failed:
            rt.record(
                "decision",
                detail={"rollout": ctx.id, "wave": wave.number, "acceptance_failed": failures},
            )
        return_nodes(rt, ctx, journal.targets(ctx.id, wave.number), failures)
        now = rt.clock.now()
        measured = measured_stall(drain_record(journal.waves(ctx.id)[wave.number - 1]), time.time())
        rt.db.journal.update_wave(
            ctx.id,
            wave.number,
            returned_at=now,
            stall_gpu_hours=measured if measured is not None else _stall(rt, ctx, wave, rows, now),
        )
    else:  # a crash after the journal moved the nodes, before the drainer heard of it
        return_nodes(rt, ctx, rows, {r.device: r.error or "" for r in rows if r.error})
    return WaveStatus.baking


WAIT_SLICE_MINUTES = 0.25
"""A real-time wait checks this often whether an operator aborted the rollout."""


STATE_WAIT_MINUTES = 30.0
"""How long a real-time wait goes on past its end for an unreachable state database."""


def wait(rt: Runtime, ctx: Context, minutes: float) -> None:
    """Let ``minutes`` pass on the rollout's clock: a virtual clock moves at once; on a
    real one the wait goes in slices and stops at an operator abort.

    A state database that cannot be reached during the wait (restarted, failed over)
    does not end the rollout: the abort check is tried again at the next slice, and
    when the wait is over it goes on, slice by slice, until the database answers (at
    most :data:`STATE_WAIT_MINUTES` more; then the error stands, as fenced out). The
    lease's fencing token decides, once it answers, whether this run may still write."""
    if not real_time(rt.clock):
        rt.clock.advance(minutes)
        return
    end = rt.clock.now() + minutes
    lost: float | None = None  # when the state database was found unreachable
    while (left := end - rt.clock.now()) > 0 or lost is not None:
        rt.clock.advance(min(WAIT_SLICE_MINUTES, left) if left > 0 else WAIT_SLICE_MINUTES)
        try:
            stop_if_aborted(rt, ctx)
        except StateUnreachable as exc:
            if lost is None:
                lost = rt.clock.now()
                rt.reporter.message(f"state database unreachable; waiting for it: {exc}")
            elif rt.clock.now() - lost >= STATE_WAIT_MINUTES:
                raise
            continue
        if lost is not None:
            rt.reporter.message(
                f"state database reachable again after {rt.clock.now() - lost:.1f} min"
            )
            lost = None


def _remaining_drain(rt: Runtime, ctx: Context, wave: WaveRow) -> float:
    """The drain/flash/reboot time the spec declares, less what has already passed."""
    start = wave.drain_start if wave.drain_start is not None else rt.clock.now()
    return max(0.0, start + ctx.spec.price.drain_minutes - rt.clock.now())


def _stall(
    rt: Runtime, ctx: Context, wave: WaveRow, rows: Sequence[TargetRow], returned: float
) -> float:
    """GPU-hours of every gang the wave drained, from drain start to return."""
    fresh = rt.db.journal.waves(ctx.id)[wave.number - 1]
    start = fresh.drain_start if fresh.drain_start is not None else returned
    hours = max(0.0, returned - start) / 60.0
    return drained_gang_gpus(rt, [r.device for r in rows]) * hours


def bake_end(rt: Runtime, ctx: Context, wave: WaveRow) -> float:
    """When the wave's bake ends on the rollout's clock: journaled when the bake
    begins, so a restart waits only for what is left."""
    if wave.bake_start is None or wave.bake_end is None:
        start = rt.clock.now()
        end = start + wave.bake_minutes
        rt.db.journal.update_wave(ctx.id, wave.number, bake_start=start, bake_end=end)
        return end
    return wave.bake_end


def _bake(rt: Runtime, ctx: Context, wave: WaveRow) -> WaveStatus:
    left = bake_end(rt, ctx, wave) - rt.clock.now()
    if left > 0:
        rt.reporter.message(f"wave {wave.number}: baking {_hm(left)}")
        wait(rt, ctx, left)
    return WaveStatus.assessing


def _hm(minutes: float) -> str:
    return f"{int(minutes // 60)}h{int(minutes % 60):02d}m"


STEPS = {
    WaveStatus.draining: _drain,
    WaveStatus.applying: _apply,
    WaveStatus.accepting: _accept,
    WaveStatus.baking: _bake,
    WaveStatus.assessing: assess_step,
}


def run_wave(rt: Runtime, ctx: Context, number: int, *, wait_bakes: bool = True) -> WaveStatus:
    """Drive one wave from its journaled status to passed, held or aborted; without
    ``wait_bakes`` it returns ``baking`` while the journaled bake end is still ahead."""
    journal = rt.db.journal
    wave = journal.waves(ctx.id)[number - 1]
    if wave.status is WaveStatus.pending:
        first = WaveStatus.draining if ctx.spec.drain else WaveStatus.applying
        journal.update_wave(
            ctx.id,
            number,
            status=first,
            started_at=rt.db.now().isoformat(),
            attempts=wave.attempts + 1,
        )
        rt.record("rollout", detail={"rollout": ctx.id, "wave": number, "event": "started"})
    elif wave.status is WaveStatus.held:
        assert wave.bake_end is not None
        journal.update_wave(
            ctx.id,
            number,
            status=WaveStatus.baking,
            bake_end=wave.bake_end + wave.bake_minutes,
            attempts=wave.attempts + 1,
        )
        rt.reporter.message(f"wave {number}: held before; baking once more")
    while True:
        wave = journal.waves(ctx.id)[number - 1]
        step = STEPS.get(wave.status)
        if step is None:
            return wave.status
        stop_if_aborted(rt, ctx)
        baking = wave.status is WaveStatus.baking and not wait_bakes
        if baking and bake_end(rt, ctx, wave) > rt.clock.now():
            return WaveStatus.baking
        following = step(rt, ctx, wave)
        journal.update_wave(ctx.id, number, status=following)


@dataclass(frozen=True)
class Due:
    """Where a rollout stopped: its status and, while a wave bakes, the minute on the
    rollout's clock when the bake ends and the wave is due to be judged."""

    status: RolloutStatus
    wave: int | None = None
    until: float | None = None


def drive(rt: Runtime, rollout: str) -> RolloutStatus:
    """Run (or resume) a rollout until it completes, holds, aborts or reaches a wave
    that waits for promotion; bakes are waited for. With ``rollback.automatic`` an
    abort rolls back the declared scope."""
    return _walk(rt, rollout, wait_bakes=True).status


def advance(rt: Runtime, rollout: str) -> Due:
    """Advance a rollout by every step that is due and return without waiting: at a
    bake whose journaled end is ahead (``Due.until``), a wave that waits for
    promotion, or where :func:`drive` would stop. Call it again once ``until`` has
    passed; the journal says where it was."""
    return _walk(rt, rollout, wait_bakes=False)


def waits_for_promotion(rt: Runtime, ctx: Context, number: int) -> bool:
    """Does the spec hold wave ``number`` for a person, who has not promoted it yet?"""
    if number not in ctx.spec.approval.before_waves:
        return False
    return number not in rt.db.approvals.promoted(ctx.id)


def _pause_for_promotion(rt: Runtime, ctx: Context, number: int) -> Due:
    current = rt.db.journal.get(ctx.id)
    if current is not None and current.status is not RolloutStatus.awaiting_promotion:
        reason = (
            f"wave {number} waits for promotion: plumb rollout promote {ctx.id} --wave {number}"
        )
        rt.db.journal.set_status(ctx.id, RolloutStatus.awaiting_promotion, reason)
        rt.record(
            "rollout",
            detail={"rollout": ctx.id, "wave": number, "event": "awaiting_promotion"},
        )
        rt.reporter.message(reason)
    return Due(RolloutStatus.awaiting_promotion, number)


def _walk(rt: Runtime, rollout: str, *, wait_bakes: bool) -> Due:
    ctx = load_context(rt, rollout)
    journal = rt.db.journal
    for wave in journal.waves(rollout):
        if wave.status is WaveStatus.passed:
            continue
        if wave.status is WaveStatus.rolled_back:
            return Due(journal.get(rollout).status, wave.number)  # type: ignore[union-attr]
        if wave.status is WaveStatus.aborted:  # journaled, but a crash cut the abort short
            return Due(_abort(rt, ctx, wave.number), wave.number)
        if wave.status is WaveStatus.pending and wave.number in ctx.spec.approval.before_waves:
            if waits_for_promotion(rt, ctx, wave.number):
                return _pause_for_promotion(rt, ctx, wave.number)
            rt.db.approvals.take_promotions(rollout, wave.number)
        if wave.status is WaveStatus.pending:
            rt.reporter.message(
                f"wave {wave.number}{' (canary)' if wave.canary else ''}: "
                f"{len(journal.targets(rollout, wave.number))} target(s)"
            )
        try:
            stop_if_aborted(rt, ctx)
            current = journal.get(rollout)
            if current is not None and current.status is not RolloutStatus.running:
                journal.set_status(rollout, RolloutStatus.running)
            status = run_wave(rt, ctx, wave.number, wait_bakes=wait_bakes)
        except RolloutAborted as exc:
            rt.reporter.message(f"wave {wave.number}: stopped, the rollout was aborted: {exc}")
            return Due(RolloutStatus.aborted, wave.number)
        if status is WaveStatus.baking:
            end = journal.waves(rollout)[wave.number - 1].bake_end
            return Due(RolloutStatus.running, wave.number, end)
        if status is WaveStatus.held:
            reason = f"wave {wave.number} held: " + _first_reason(rt, rollout, wave.number)
            reason += "; " + hold_next_step(rt, rollout, wave.number)
            journal.set_status(rollout, RolloutStatus.held, reason)
            return Due(RolloutStatus.held, wave.number)
        if status is WaveStatus.aborted:
            return Due(_abort(rt, ctx, wave.number), wave.number)
    journal.set_status(rollout, RolloutStatus.completed)
    rt.record("rollout", detail={"rollout": rollout, "event": "completed"})
    return Due(RolloutStatus.completed)


def _abort(rt: Runtime, ctx: Context, number: int) -> RolloutStatus:
    """Stop the rollout for an aborted wave. With ``rollback.automatic`` the status goes
    straight to ``rolling_back`` (a crash from here on resumes the rollback, never
    leaves an abort without its rollback)."""
    journal = rt.db.journal
    reason = f"wave {number} aborted: " + _first_reason(rt, ctx.id, number)
    automatic = ctx.spec.rollback.automatic
    journal.set_status(
        ctx.id, RolloutStatus.rolling_back if automatic else RolloutStatus.aborted, reason
    )
    rt.record("rollout", detail={"rollout": ctx.id, "event": "aborted", "reason": reason})
    if automatic:
        rollback(rt, ctx.id, scope=ctx.spec.rollback.scope, wave=number, reason=reason)
    return journal.get(ctx.id).status  # type: ignore[union-attr]


def hold_next_step(rt: Runtime, rollout: str, number: int) -> str:
    """What to do about a held wave: a wave short of samples holds again however long
    it bakes, so resuming alone cannot help."""
    evidence = rt.db.journal.waves(rollout)[number - 1].evidence or {}
    short = evidence.get("unjudgeable") or {}
    way_out = (
        f"accept the wave on your own evidence (plumb rollout resume {rollout} "
        f'--accept-held "why"), or roll it back (plumb rollback {rollout})'
    )
    if isinstance(short, dict) and short:
        names = ", ".join(sorted(short))
        return (
            f"resuming bakes and holds again ({names} cannot be judged with this wave's "
            f"targets and controls): {way_out}"
        )
    return f"resume once the cause is cleared (plumb rollout resume {rollout}), {way_out}"


def _first_reason(rt: Runtime, rollout: str, number: int) -> str:
    evidence = rt.db.journal.waves(rollout)[number - 1].evidence or {}
    reasons = evidence.get("reasons") or ["no reason recorded"]
    return str(reasons[0])
