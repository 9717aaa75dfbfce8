"""Finish a rollback a crash or an operator abort left ``rolling_back``: the one path
of ``plumb rollout resume`` and of the controller (``plumb serve``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.state.journal import RolloutStatus, TargetStatus, WaveStatus
from service.context import FleetContext
from service.ownership import IN_PROGRESS

if TYPE_CHECKING:
    from rollouts.runtime import Runtime


def finish_rollback(context: FleetContext, runtime: Runtime, rollout: str) -> RolloutStatus:
    """Finish the rollback of a ``rolling_back`` rollout: the targets an interrupted
    rollback set out to restore, then the spec's scope (the aborted wave, else the
    wave that was in progress)."""
    from rollouts.execute import load_context
    from rollouts.rollback import rollback
    from rollouts.spec import RollbackScope

    journal = context.db.journal
    waves = journal.waves(rollout)
    aborted = [w.number for w in waves if w.status is WaveStatus.aborted]
    started = [w.number for w in waves if w.status in IN_PROGRESS]
    spec = load_context(runtime, rollout).spec
    row = journal.get(rollout)
    reason = (row.reason if row else None) or "resumed rollback"
    asked = interrupted_rollback(context, rollout)
    unfinished = [
        t.device
        for t in journal.targets(rollout)
        if t.status in (TargetStatus.rolling_back, TargetStatus.rollback_failed)
        or t.device in asked
    ]
    if unfinished:  # whatever scope was interrupted: finish exactly its targets
        rollback(runtime, rollout, scope=RollbackScope.target, names=unfinished, reason=reason)
    chosen = aborted[-1:] or started[:1]
    rollback(
        runtime,
        rollout,
        scope=spec.rollback.scope,
        wave=chosen[0] if chosen else None,
        reason=reason,
    )
    final = journal.get(rollout)
    return final.status if final else RolloutStatus.aborted


def interrupted_rollback(context: FleetContext, rollout: str) -> set[str]:
    """The targets the last rollback of ``rollout`` set out to restore: its first audit
    record names them before any write, so a crash cannot lose the request."""
    for record in reversed(context.db.audit.records(200, kind="rollback")):
        detail = record.detail
        if detail.get("rollout") == rollout and "targets" in detail:
            return {str(t) for t in detail["targets"]}
    return set()
