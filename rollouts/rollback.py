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

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from reconciler.drivers.base import Outcome
from reconciler.loop import Observation
from reconciler.plan import Plan, build_plan
from reconciler.settings import Owned, Scalar
from reconciler.state.journal import (
    Lifecycle,
    RolloutStatus,
    TargetRow,
    TargetStatus,
    WaveStatus,
)
from rollouts.assessing import at
from rollouts.draining import drain_nodes, return_nodes
from rollouts.nodes import Context, load_context, move, owner
from rollouts.runtime import Runtime
from rollouts.spec import RollbackScope
from rollouts.targetops import (
    RolloutStopped,
    acceptance_tests,
    apply_through,
    drained_gang_gpus,
    needs_reboot,
    observe,
    pass_drain_time,
)

EMERGENCY_CONCURRENCY = 64


class RollbackError(Exception):
    """A rollback that cannot be done as asked (unknown target, nothing recorded)."""


@dataclass
class RollbackReport:
    """What one rollback did. Every chosen target is in exactly one of ``restored``,
    ``already``, ``failed`` (with why; a refused plan fails its whole batch),
    ``kept`` (``only_safe``: left as it is, restoring it is unsafe) and ``skipped``
    (not attempted: an earlier batch was refused)."""

    scope: str
    restored: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    already: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    pinned: int = 0
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.failed or self.kept or self.skipped) and self.refused is None

    def summary(self) -> str:
        """One line whose counts are the report's (and so the journal's)."""
        parts = [
            f"restored {len(self.restored)} target(s)",
            f"{len(self.already)} already at their before-state",
            f"{len(self.failed)} failed",
        ]
        if self.kept:
            parts.append(f"{len(self.kept)} kept as they are (unsafe to restore)")
        if self.skipped:
            parts.append(f"{len(self.skipped)} not attempted")
        return f"rollback ({self.scope}): " + ", ".join(parts)


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


def _restore_plan(
    rt: Runtime, ctx: Context, befores: dict[str, dict[str, Scalar]], seen: dict[str, Observation]
) -> Plan:
    mine = owner(ctx.id, "before-state")
    desired = {n: {p: Owned(v, mine) for p, v in b.items()} for n, b in befores.items()}
    errors = {n: o.error for n, o in seen.items() if o.error}
    return build_plan(rt.fleet, desired, {n: o.state for n, o in seen.items()}, errors=errors)


def safe_subset(
    rt: Runtime, ctx: Context, befores: dict[str, dict[str, Scalar]], seen: dict[str, Observation]
) -> tuple[list[str], dict[str, str]]:
    """The targets whose restore the safety proof accepts together (greedy, in name
    order), and why each other one is left out."""
    safe: list[str] = []
    left: dict[str, str] = {}
    for name in sorted(befores):
        trial = {n: befores[n] for n in [*safe, name]}
        refused = _restore_plan(rt, ctx, trial, seen).refused
        if refused is None:
            safe.append(name)
        else:
            left[name] = f"restoring it is unsafe: {refused}"
    return safe, left


def _restore(
    rt: Runtime,
    ctx: Context,
    rows: Sequence[TargetRow],
    report: RollbackReport,
    *,
    only_safe: bool = False,
) -> None:
    """One batch: observe, plan to the before-states, apply in safe order, verify.
    ``only_safe``: when the whole batch is refused, restore its safe subset and keep
    the others as they are."""
    journal = rt.db.journal
    if ctx.spec.drain:
        stuck = drain_nodes(
            rt, ctx, rows, "rollback", time.time(), failed_status=TargetStatus.rollback_failed
        )
        report.failed.update(stuck)
        rows = [r for r in rows if r.device not in stuck]
        if not rows:
            return
    journal.set_targets(ctx.id, [r.device for r in rows], TargetStatus.rolling_back)
    seen = observe(rt, [r.device for r in rows])
    befores = {r.device: dict(r.before or {}) for r in rows}
    plan = _restore_plan(rt, ctx, befores, seen)
    if plan.refused is not None and only_safe:
        safe, left = safe_subset(rt, ctx, befores, seen)
        _keep(rt, ctx, [r for r in rows if r.device in left], seen, left, report)
        befores = {n: befores[n] for n in safe}
        rows = [r for r in rows if r.device in set(safe)]
        plan = _restore_plan(rt, ctx, befores, seen)
    if plan.refused is not None:
        report.refused = plan.refused
        why = dict.fromkeys(befores, f"rollback plan refused: {plan.refused}")
        journal.set_targets(ctx.id, befores, TargetStatus.rollback_failed, errors=why)
        report.failed.update(why)
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
    if ctx.spec.drain and rows:
        lost = _return_to_service(rt, ctx, rows, befores)
        report.restored = [n for n in report.restored if n not in lost]
        report.already = [n for n in report.already if n not in lost]
        report.failed.update(lost)


def _keep(
    rt: Runtime,
    ctx: Context,
    rows: Sequence[TargetRow],
    seen: dict[str, Observation],
    why: dict[str, str],
    report: RollbackReport,
) -> None:
    """Targets left out of an ``only_safe`` restore: still changed (``applied``) when
    they hold the intended state, otherwise ``rollback_failed``; back to service."""
    journal = rt.db.journal
    holding = [r.device for r in rows if at(seen[r.device].state, r.intended)]
    journal.set_targets(ctx.id, holding, TargetStatus.applied)
    other = {r.device: why[r.device] for r in rows if r.device not in holding}
    if other:
        journal.set_targets(ctx.id, other, TargetStatus.rollback_failed, errors=other)
    report.kept.update({n: why[n] for n in holding})
    report.failed.update(other)
    if ctx.spec.drain:
        move(rt, ctx, rows, Lifecycle.in_service)


def _return_to_service(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], befores: dict[str, dict[str, Scalar]]
) -> dict[str, str]:
    """Reboot what the restore flashed back, re-observe (a restore the reboot lost is
    ``rollback_failed``), run acceptance, and return the nodes to service or repair;
    returns the targets whose restore the reboot lost."""
    journal = rt.db.journal
    restored = {
        r.device
        for r in journal.targets(ctx.id)
        if r.device in befores and r.status is TargetStatus.rolled_back
    }
    started = rt.clock.now()
    pass_drain_time(rt, ctx.spec.price.drain_minutes)  # drain, flash back, reboot
    reboot = [n for n in restored if needs_reboot(list(befores[n]))]
    failures = {n: e for n, e in rt.maintenance.reboot(reboot).items() if e}
    seen = observe(rt, sorted(restored))
    lost = {
        n: "after the reboot the before-state is not in place"
        + (f": {seen[n].error}" if seen[n].error else "")
        for n in sorted(restored)
        if not at(seen[n].state, befores[n])
    }
    if lost:  # a restore the reboot did not keep is not a rollback
        journal.set_targets(ctx.id, lost, TargetStatus.rollback_failed, errors=lost)
        failures.update(lost)
    fresh = [r for r in journal.targets(ctx.id) if r.device in befores]
    move(rt, ctx, fresh, Lifecycle.acceptance)
    failures.update({n: f for n, f in rt.maintenance.acceptance(list(befores)).items() if f})
    failures.update(acceptance_tests(rt, ctx, min(r.wave for r in rows), sorted(befores)))
    move(rt, ctx, [r for r in fresh if r.device not in failures], Lifecycle.in_service)
    move(rt, ctx, [r for r in fresh if r.device in failures], Lifecycle.repair)
    return_nodes(rt, ctx, [r for r in journal.targets(ctx.id) if r.device in befores], failures)
    gpus = drained_gang_gpus(rt, befores)
    first = min(r.wave for r in rows)
    wave = journal.waves(ctx.id)[first - 1]
    hours = gpus * (rt.clock.now() - started) / 60.0
    journal.update_wave(ctx.id, first, stall_gpu_hours=wave.stall_gpu_hours + hours)
    return lost


def rollback(
    rt: Runtime,
    rollout: str,
    *,
    scope: RollbackScope,
    wave: int | None = None,
    names: Sequence[str] = (),
    emergency: bool = False,
    only_safe: bool = False,
    reason: str,
    emergency_concurrency: int = EMERGENCY_CONCURRENCY,
) -> RollbackReport:
    """Restore, verify and pin; see the module docstring for the scopes. A rollback
    with nothing left to restore changes nothing: not the status, not the reason,
    not the pins. ``emergency`` raises the runtime's concurrency to at least
    ``emergency_concurrency``."""
    ctx = load_context(rt, rollout)
    journal = rt.db.journal
    rows = journal.targets(rollout)
    if emergency:
        scope = RollbackScope.rollout
    chosen = chosen_targets(rows, scope, wave=wave, names=names)
    report = RollbackReport(
        ("emergency" if emergency else scope.value) + (", only safe" if only_safe else "")
    )
    settled = (Lifecycle.in_service, Lifecycle.not_drained)
    done = [r for r in chosen if r.status is TargetStatus.rolled_back and r.lifecycle in settled]
    report.already += [r.device for r in done]  # an earlier (interrupted) run restored these
    todo = [r for r in chosen if r not in done]
    current = journal.get(rollout)
    if not todo and current is not None and current.status is not RolloutStatus.rolling_back:
        rt.reporter.message(f"rollback ({report.scope}): nothing left to restore")
        return report
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
    if emergency:
        rt.concurrency = max(rt.concurrency, emergency_concurrency)
        batches = [todo] if todo else []
    else:
        by_wave: dict[int, list[TargetRow]] = {}
        for row in todo:
            by_wave.setdefault(row.wave, []).append(row)
        batches = [by_wave[n] for n in sorted(by_wave, reverse=True)]
    for index, batch in enumerate(batches):
        # an emergency restores what it safely can at once and keeps the rest at intent
        _restore(rt, ctx, batch, report, only_safe=only_safe or emergency)
        if report.refused:
            report.skipped += [r.device for later in batches[index + 1 :] for r in later]
            break
        _retry(rt, ctx, batch, report, only_safe=only_safe or emergency)
    report.pinned = _pin(rt, rollout, chosen, set(report.restored) | set(report.already), reason)
    _finish(rt, rollout, report, reason)
    return report


RETRY_PAUSES = (2.0, 5.0, 10.0)
"""Seconds before each retry of a target whose restore timed out or lost its
connection: a loaded machine or a slow login gets three more chances, 17 s in all."""
FINAL = (
    "terminal:",  # the apply said a human must act (a refused login, a host key)
    "DeviceAuthError",
    "HostKeyMismatch",
    "ConfigRejected",  # the device refuses the values: trying again changes nothing
    "CompareMismatch",
    "rollback plan refused",
    "not drained",
)


def retryable(why: str) -> bool:
    """Is a failed restore worth another try? A timeout, a lost connection, an
    unreachable device or a write whose outcome was unknown is (the retry observes
    again before writing anything); a refused login or host key, a refusal by the
    device or by the safety proof, and a node its scheduler kept are not."""
    return not any(final in why for final in FINAL)


def _retry(
    rt: Runtime,
    ctx: Context,
    batch: Sequence[TargetRow],
    report: RollbackReport,
    *,
    only_safe: bool,
) -> None:
    """Try the batch's targets that failed for a retryable reason again, each time
    observing them first (a timed-out write may have landed), after the pauses of
    :data:`RETRY_PAUSES`; what still fails stays in the report with its last reason."""
    for pause in RETRY_PAUSES:
        again = {n for n, why in report.failed.items() if retryable(why)}
        rows = [r for r in rt.db.journal.targets(ctx.id) if r.device in again]
        if not rows:
            return
        rt.reporter.message(
            f"rollback: {len(rows)} target(s) timed out or lost their connection; trying"
            f" again in {pause:g} s (observing first)"
        )
        time.sleep(pause)
        for row in rows:
            report.failed.pop(row.device, None)
        _restore(rt, ctx, rows, report, only_safe=only_safe)
        if report.refused:
            return


def _pin(
    rt: Runtime, rollout: str, chosen: Sequence[TargetRow], restored: set[str], reason: str
) -> int:
    """Pin the restored fields that differ from the intent; a field this rollout pins
    at that value already keeps its pin and its reason."""
    journal = rt.db.journal
    held = {(p.device, p.path): p.value for p in journal.pins(rollout)}
    pins = {
        r.device: {
            p: v
            for p, v in (r.before or {}).items()
            if r.intended.get(p) != v and held.get((r.device, p), _NONE) != v
        }
        for r in chosen
        if r.device in restored
    }
    pins = {d: v for d, v in pins.items() if v}
    if not pins:
        return 0
    return journal.pin(rollout, pins, f"rolled back by {rollout}: {reason}")


_NONE = object()


def _finish(rt: Runtime, rollout: str, report: RollbackReport, reason: str) -> None:
    """Waves and the rollout are ``rolled_back`` only when every target they changed
    is back at its before-state; otherwise the rollout is ``aborted`` and its reason
    says how many still hold the change."""
    journal = rt.db.journal
    rows = journal.targets(rollout)
    half_way = (TargetStatus.rolling_back, TargetStatus.rollback_failed)
    unfinished = [t.device for t in rows if t.status in half_way and t.device not in report.failed]
    report.failed.update(dict.fromkeys(unfinished, "an earlier rollback left it unfinished"))
    changed = [t for t in rows if t.status.written]
    left = [t for t in changed if t.status is not TargetStatus.rolled_back]
    for number in sorted({t.wave for t in changed}):
        if not [t for t in left if t.wave == number]:
            journal.update_wave(rollout, number, status=WaveStatus.rolled_back)
    summary = report.summary()
    if report.refused:
        summary += f": {report.refused}"
    if left:
        summary += f"; {len(left)} of {len(changed)} changed target(s) still hold the change"
    final = RolloutStatus.aborted if left else RolloutStatus.rolled_back
    journal.set_status(rollout, final, f"{reason}; {summary}")
    rt.record(
        "rollback",
        detail={
            "rollout": rollout,
            "scope": report.scope,
            "restored": sorted(set(report.restored) | set(report.already)),
            "failed": report.failed,
            "kept": report.kept,
            "skipped": report.skipped,
            "pinned": report.pinned,
        },
    )
