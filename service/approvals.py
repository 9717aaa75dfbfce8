"""The approvals queued for the controller (``plumb rollout approve``): what
``plumb serve`` acts on, and what ``plumb rollout list`` shows waiting."""

from __future__ import annotations

from reconciler.state.journal_approvals import ApprovalKind, ApprovalRow, ApprovalState
from service.context import FleetContext


def pending_approvals(context: FleetContext) -> list[ApprovalRow]:
    """Start and drive approvals waiting for the controller, oldest first."""
    return [
        a
        for a in context.db.approvals.rows(state=ApprovalState.pending)
        if a.kind is not ApprovalKind.promote
    ]


def queued_starts(context: FleetContext) -> list[ApprovalRow]:
    """Start approvals the controller has not acted on yet, in the order they start."""
    return [a for a in pending_approvals(context) if a.kind is ApprovalKind.start]
