"""The rollouts that own fields at this pass (the edge of
:mod:`service.owned`): the journal's active rollouts with their targets'
recorded paths, and the pending start approvals with what their spec at the
controller's HEAD selects and carries.
"""

from __future__ import annotations

from inventory.problems import InputError
from reconciler.select import SelectError, select_devices
from reconciler.state.db import StateDB
from reconciler.state.journal import RolloutRow, RolloutStatus, WaveStatus
from reconciler.state.journal_approvals import ApprovalKind, ApprovalState
from rollouts.load import load_rollout
from service.context import FleetContext
from service.owned import Claim, Ownership

IN_PROGRESS = (
    WaveStatus.draining,
    WaveStatus.applying,
    WaveStatus.accepting,
    WaveStatus.baking,
    WaveStatus.assessing,
)


def awaits_rollback(db: StateDB, row: RolloutRow) -> bool:
    """An aborted rollout stopped mid-wave whose spec rolls back on abort: the
    controller still has that wave to roll back."""
    if row.status is not RolloutStatus.aborted:
        return False
    if not row.plan["spec"].get("rollback", {}).get("automatic", True):
        return False
    return any(w.status in IN_PROGRESS for w in db.journal.waves(row.id))


def writes_fields(db: StateDB, row: RolloutRow) -> bool:
    """The rollout still writes (or may write again) the fields it carries."""
    return row.status.active or awaits_rollback(db, row)


def queued_name(spec_name: str, approval: int) -> str:
    return f"{spec_name} (approval {approval})"


def rollout_ownership(context: FleetContext) -> Ownership:
    """Claims of the active rollouts (oldest first), then of the queued approvals in
    approval order."""
    db, fleet = context.db, context.fleet
    claims: list[Claim] = []
    for row in db.journal.all():
        if writes_fields(db, row):
            rows = db.journal.targets(row.id)
            targets = {t.device: frozenset(t.intended) for t in rows}
            claims.append(Claim(row.id, targets, waves={t.device: t.wave for t in rows}))
    for approval in db.approvals.rows(state=ApprovalState.pending):
        if approval.kind is not ApprovalKind.start:
            continue
        try:
            spec = load_rollout(fleet.root, approval.spec_path).spec
            selected = select_devices(fleet.devices.values(), spec.targets.select)
        except (InputError, SelectError):
            continue  # refused when the controller acts on it: nothing to own
        claims.append(
            Claim(
                queued_name(spec.name, approval.id),
                selected=frozenset(selected),
                globs=tuple(spec.targets.paths),
            )
        )
    return Ownership(tuple(claims))
