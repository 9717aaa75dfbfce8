"""The controller's side of rollout approvals (``plumb rollout approve``): each turn,
a pending ``start`` approval of a committed spec begins its rollout (the begin path of
``plumb rollout start``, under the fleet lease) when the spec at the controller's
HEAD is the one approved, byte for byte and commit for commit; a spec changed since
needs a new approval. One rollout is active per fleet: start approvals queue, and
start in approval order (first in, first out) once no rollout is active; a queued
approval's fields are already the rollout's (:mod:`service.ownership`). A ``drive``
approval hands an existing rollout to the controller under the same rule. Every
outcome is journaled with the approval and audited (``rollout`` records
``approval_taken`` / ``approval_refused``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from inventory.problems import InputError
from reconciler.state.journal_approvals import ApprovalRow, ApprovalState
from reconciler.state.lease import LeaseHeld
from rollouts.caps import PlanError
from rollouts.gitpin import NotDeclared, declared, has_commit
from rollouts.load import load_rollout
from rollouts.selection import check_selection
from service.begin import NothingToStart, StartRefused, active_rollout, begin_rollout
from service.context import FleetContext

SERVE_START = "serve: start rollout"


class NotYet(Exception):
    """The approval cannot be acted on yet (the clone lacks the commit, the lease is
    held); it stays pending for a later turn."""


class Queued(NotYet):
    """Another rollout is active, or an earlier start approval waits: this one waits
    its turn (one active rollout per fleet, approvals started in order)."""


@dataclass(frozen=True)
class Settled:
    approval: ApprovalRow
    rollout: str | None
    refused: str | None


def settle(context: FleetContext, approval: ApprovalRow, outcome: Settled) -> None:
    """Journal the outcome with the approval and audit it, in one transaction."""
    db = context.db
    state = ApprovalState.refused if outcome.refused else ApprovalState.taken
    with db.transaction() as conn:
        db.approvals.settle(
            conn, approval.id, state, outcome=outcome.refused, rollout=outcome.rollout
        )
        context.audit(
            "rollout",
            detail={
                "rollout": outcome.rollout,
                "event": "approval_refused" if outcome.refused else "approval_taken",
                "approval": approval.id,
                "kind": approval.kind.value,
                "spec": approval.spec_path,
                "approved_by": approval.actor,
                **({"reason": outcome.refused} if outcome.refused else {}),
            },
        )


def spec_as_approved(context: FleetContext, approval: ApprovalRow) -> str | None:
    """Why the spec at HEAD is not the approved one (None: it is); NotYet while the
    clone has not fetched the approved commit."""
    root = context.fleet.root
    file = root / approval.spec_path
    text = file.read_bytes() if file.is_file() else b""
    try:
        now = declared(root, approval.spec_path).spec_commit
    except NotDeclared:
        now = None
    same = hashlib.sha256(text).hexdigest() == approval.spec_sha256
    if same and now == approval.spec_commit:
        return None
    if approval.spec_commit and not has_commit(root, approval.spec_commit):
        raise NotYet(f"waiting for commit {approval.spec_commit[:12]} of {approval.spec_path}")
    return (
        f"{approval.spec_path} changed since it was approved (approved @ "
        f"{(approval.spec_commit or '?')[:12]}, now @ {(now or 'uncommitted')[:12]}): "
        "approve it again"
    )


def _adopted(context: FleetContext, approval: ApprovalRow) -> str | None:
    """A rollout this approval already began (a crash came before the approval was
    marked taken): the same spec, hash and commit, created after the approval."""
    for row in context.db.journal.all():
        if (
            row.spec_path == approval.spec_path
            and row.spec_sha256 == approval.spec_sha256
            and row.spec_commit == approval.spec_commit
            and row.created_at >= approval.approved_at
        ):
            return row.id
    return None


def start_approved(
    context: FleetContext, approval: ApprovalRow, log: Callable[[str], None]
) -> Settled:
    """Begin the rollout a ``start`` approval allows, or say why it is refused."""
    adopted = _adopted(context, approval)
    if adopted is not None:
        return Settled(approval, adopted, None)
    changed = spec_as_approved(context, approval)
    if changed is not None:
        return Settled(approval, None, changed)
    busy = active_rollout(context)
    if busy is not None:
        raise Queued(f"queued: {busy} (one rollout at a time)")
    fleet = context.fleet
    try:
        loaded = load_rollout(fleet.root, approval.spec_path)
        declaration = declared(fleet.root, approval.spec_path)
        check_selection(fleet.devices.values(), loaded.spec.targets.select)
    except InputError as exc:
        return Settled(approval, None, "; ".join(str(p) for p in exc.problems[:3]))
    except (NotDeclared, PlanError) as exc:
        return Settled(approval, None, str(getattr(exc, "message", exc)))
    try:
        with context.db.lease.held(context.holder, f"{SERVE_START} {loaded.spec.name}") as token:
            begun = begin_rollout(
                context,
                loaded,
                token,
                declaration,
                select=loaded.spec.targets.select,
                warn=log,
            )
    except LeaseHeld as exc:
        raise NotYet(str(exc)) from None
    except (StartRefused, NothingToStart) as exc:
        return Settled(approval, None, str(exc))
    log(f"started rollout {begun.rollout} of {approval.spec_path} (approved by {approval.actor})")
    return Settled(approval, begun.rollout, None)


def drive_approved(context: FleetContext, approval: ApprovalRow) -> Settled:
    """Check a ``drive`` approval: the rollout exists, is active, and its spec is the
    one approved (and the one it started from)."""
    rollout = approval.rollout
    row = context.db.journal.get(rollout) if rollout else None
    if row is None:
        return Settled(approval, rollout, f"no rollout {rollout!r}")
    if not row.status.active:
        return Settled(approval, rollout, f"rollout {row.id} is {row.status.value}")
    changed = spec_as_approved(context, approval)
    if changed is None and (row.spec_sha256, row.spec_commit) != (
        approval.spec_sha256,
        approval.spec_commit,
    ):
        changed = f"{row.spec_path} is not the spec rollout {row.id} started from"
    return Settled(approval, rollout, changed)
