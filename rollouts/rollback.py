"""Roll a journaled rollout back to its recorded before-states, exactly.

Scope ``target`` restores named targets (by default the targets that failed the
aborting wave), ``wave`` every written target of one wave, ``rollout`` every written
target of the rollout, wave by wave in reverse order. ``emergency`` restores every
written target of the rollout at once, in parallel, without waiting between waves.

Each restore is a reconcile plan whose desired state is the before-state (so it runs
in the proven-safe order, under the lease, audited), verified by re-observing;
drained nodes go through maintenance and acceptance like any change. The restored
fields are then **pinned**: a pin holds a field at its before-state in every later
plan (shown as HELD with the reason), so the level-triggered reconciler does not
re-apply the intent that was just rolled back. Pins are released explicitly once
the intent is fixed (``plumb pins release``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reconciler.drivers.base import Outcome
from reconciler.plan import build_plan
from reconciler.settings import Owned, Scalar
from reconciler.state.journal import (
    Lifecycle,
    RolloutStatus,
    TargetRow,
    TargetStatus,
    WaveStatus,
)
from rollouts.execute import (
    Context,
    RolloutStopped,
    apply_through,
    at,
    drained_gang_gpus,
    load_context,
    move,
    needs_reboot,
    observe,
    owner,
)
from rollouts.runtime import Runtime
from rollouts.spec import RollbackScope

EMERGENCY_CONCURRENCY = 64


class RollbackError(Exception):
    """A rollback that cannot be done as asked (unknown target, nothing recorded)."""


@dataclass
class RollbackReport:
    scope: str
    restored: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    already: list[str] = field(default_factory=list)
    pinned: int = 0
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return not self.failed and self.refused is None


def chosen_targets(
    rows: Sequence[TargetRow],
    scope: RollbackScope,
    *,
    wave: int | None,
    names: Sequence[str] = (),
) -> list[TargetRow]:
    """The written targets a rollback of ``scope`` covers."""
    written = [r for r in rows if r.status.written and r.before is not None]
    if names:
        known = {r.device for r in rows}
        missing = [n for n in names if n not in known]
        if missing:
            raise RollbackError(f"not a target of this rollout: {', '.join(missing)}")
        return [r for r in written if r.device in set(names)]
    if scope is RollbackScope.rollout:
        return written
    if wave is None:
        wave = max((r.wave for r in written), default=0)
    in_wave = [r for r in written if r.wave == wave]
    if scope is RollbackScope.wave:
        return in_wave
    bad = {TargetStatus.failed, TargetStatus.unknown, TargetStatus.rollback_failed}
    flagged = [r for r in in_wave if r.status in bad or r.lifecycle is Lifecycle.repair]
    return flagged or in_wave


def _restore(rt: Runtime, ctx: Context, rows: Sequence[TargetRow], report: RollbackReport) -> None:
    """One batch: observe, plan to the before-states, apply in safe order, verify."""
    journal = rt.db.journal
    if ctx.spec.drain:
        move(rt, ctx, rows, Lifecycle.maintenance)
    journal.set_targets(ctx.id, [r.device for r in rows], TargetStatus.rolling_back)
    seen = observe(rt, [r.device for r in rows])
    befores = {r.device: dict(r.before or {}) for r in rows}
    mine = owner(ctx.id, "before-state")
    desired = {n: {p: Owned(v, mine) for p, v in b.items()} for n, b in befores.items()}
    errors = {n: o.error for n, o in seen.items() if o.error}
    plan = build_plan(rt.fleet, desired, {n: o.state for n, o in seen.items()}, errors=errors)
    if plan.refused is not None:
        report.refused = plan.refused
        journal.set_targets(
            ctx.id,
            befores,
            TargetStatus.rollback_failed,
            errors=dict.fromkeys(befores, f"rollback plan refused: {plan.refused}"),
        )
        return
    changed = plan.changes()
    already = [n for n in befores if n not in changed and at(seen[n].state, befores[n])]
    journal.set_targets(ctx.id, already, TargetStatus.rolled_back)
    report.already += already
    blind = {n: seen[n].error or "not observed" for n in befores if seen[n].state is None}
    if blind:
        journal.set_targets(ctx.id, blind, TargetStatus.rollback_failed, errors=blind)
        report.failed.update(blind)
    if changed:
        outcome, results = apply_through(rt, plan, "restoring")
        ok = [n for n, r in results.items() if r.outcome is Outcome.applied]
        bad = {n: r.error or r.outcome.value for n, r in results.items() if n not in ok}
        bad.update({n: "not started: " + (outcome.stopped or "") for n in outcome.not_started})
        journal.set_targets(ctx.id, ok, TargetStatus.rolled_back, wrote=True)
        if bad:
            journal.set_targets(ctx.id, bad, TargetStatus.rollback_failed, errors=bad, wrote=True)
        report.restored += ok
        report.failed.update(bad)
        if outcome.stopped and ("Frozen" in outcome.stopped or "FencedOut" in outcome.stopped):
            raise RolloutStopped(outcome.stopped)
    if ctx.spec.drain:
        _return_to_service(rt, ctx, rows, befores)


def _return_to_service(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], befores: dict[str, dict[str, Scalar]]
) -> None:
    journal = rt.db.journal
    restored = {
        r.device
        for r in journal.targets(ctx.id)
        if r.device in befores and r.status is TargetStatus.rolled_back
    }
    started = rt.clock.now()
    rt.clock.advance(ctx.spec.price.drain_minutes)  # drain, flash back, reboot
    reboot = [n for n in restored if needs_reboot(list(befores[n]))]
    failures = {n: e for n, e in rt.maintenance.reboot(reboot).items() if e}
    fresh = [r for r in journal.targets(ctx.id) if r.device in befores]
    move(rt, ctx, fresh, Lifecycle.acceptance)
    failures.update({n: f for n, f in rt.maintenance.acceptance(list(befores)).items() if f})
    move(rt, ctx, [r for r in fresh if r.device not in failures], Lifecycle.in_service)
    move(rt, ctx, [r for r in fresh if r.device in failures], Lifecycle.repair)
    gpus = drained_gang_gpus(rt, befores)
    first = min(r.wave for r in rows)
    wave = journal.waves(ctx.id)[first - 1]
    hours = gpus * (rt.clock.now() - started) / 60.0
    journal.update_wave(ctx.id, first, stall_gpu_hours=wave.stall_gpu_hours + hours)


def rollback(
    rt: Runtime,
    rollout: str,
    *,
    scope: RollbackScope,
    wave: int | None = None,
    names: Sequence[str] = (),
    emergency: bool = False,
    reason: str,
) -> RollbackReport:
    """Restore, verify and pin; see the module docstring for the scopes."""
    ctx = load_context(rt, rollout)
    journal = rt.db.journal
    rows = journal.targets(rollout)
    if emergency:
        scope = RollbackScope.rollout
    chosen = chosen_targets(rows, scope, wave=wave, names=names)
    report = RollbackReport("emergency" if emergency else scope.value)
    journal.set_status(rollout, RolloutStatus.rolling_back, reason)
    rt.record(
        "rollback",
        detail={
            "rollout": rollout,
            "scope": report.scope,
            "targets": [r.device for r in chosen],
            "reason": reason,
        },
    )
    rt.reporter.message(f"rollback ({report.scope}): {len(chosen)} target(s) to restore")
    settled = (Lifecycle.in_service, Lifecycle.not_drained)
    done = [r for r in chosen if r.status is TargetStatus.rolled_back and r.lifecycle in settled]
    report.already += [r.device for r in done]  # an earlier (interrupted) run restored these
    todo = [r for r in chosen if r not in done]
    if emergency:
        rt.concurrency = max(rt.concurrency, EMERGENCY_CONCURRENCY)
        batches = [todo] if todo else []
    else:
        by_wave: dict[int, list[TargetRow]] = {}
        for row in todo:
            by_wave.setdefault(row.wave, []).append(row)
        batches = [by_wave[n] for n in sorted(by_wave, reverse=True)]
    for batch in batches:
        _restore(rt, ctx, batch, report)
        if report.refused:
            break
    restored = set(report.restored) | set(report.already)
    pins = {
        r.device: {p: v for p, v in (r.before or {}).items() if r.intended.get(p) != v}
        for r in chosen
        if r.device in restored
    }
    pins = {d: v for d, v in pins.items() if v}
    if pins:
        report.pinned = journal.pin(rollout, pins, f"rolled back by {rollout}: {reason}")
    if report.ok:
        for number in sorted({r.wave for r in chosen}):
            journal.update_wave(rollout, number, status=WaveStatus.rolled_back)
    unfinished = [
        t.device
        for t in journal.targets(rollout)
        if t.status in (TargetStatus.rolling_back, TargetStatus.rollback_failed)
    ]
    if unfinished and report.ok:  # restored what was asked, but others were left half-way
        report.failed.update(dict.fromkeys(unfinished, "an earlier rollback left it unfinished"))
    final = RolloutStatus.rolled_back if report.ok else RolloutStatus.aborted
    journal.set_status(
        rollout,
        final,
        f"{reason}; rollback ({report.scope}) "
        + (
            f"restored {len(restored)} target(s)"
            if report.ok
            else f"failed on {len(report.failed)} target(s)"
            + (f": {report.refused}" if report.refused else "")
        ),
    )
    rt.record(
        "rollback",
        detail={
            "rollout": rollout,
            "scope": report.scope,
            "restored": sorted(restored),
            "failed": report.failed,
            "pinned": report.pinned,
        },
    )
    return report
