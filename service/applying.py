"""Apply the fleet's plan under the rules every writer obeys, once for every front
door: the kill switch (freeze), the lease and its fencing token on every device
write, writes an interrupted run left open settled before planning, a plan made (or
a saved plan re-checked) only after the lease is held, one writer per field (a change
an active or approved rollout owns is the rollout's: reported, never written, unless
the operator takes it over with a reason, audited), and every plan and write audited.
A dry run stages and compares without the lease and writes nothing.

The front door takes part through :class:`ApplyHooks`: it shows the plan, is asked
before anything is written, and watches progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ci.planfile import SavedPlan, plan_hash
from reconciler.errors import FencedOut, Frozen
from reconciler.loop import ApplyReport, apply_plan
from reconciler.plan import Plan
from reconciler.state.db import StateBusy
from reconciler.state.lease import LeaseHeld, LeaseToken
from reconciler.targets import Targets
from service.context import AuditToDb, DbGuard, FleetContext
from service.errors import ServiceError
from service.interrupted import Settled, settle_interrupted
from service.owned import Ownership
from service.ownership import rollout_ownership
from service.planning import NoProgress, Progress, make_plan
from service.savedplan import recheck


@dataclass(frozen=True)
class ApplyRequest:
    """What to apply: the current plan of ``select``, or exactly a ``saved`` one."""

    select: str | None = None
    saved: SavedPlan | None = None
    dry_run: bool = False
    concurrency: int = 16
    confirm_within: float | None = 120.0  # commit-confirm window; None commits at once
    take_over: str | None = None  # write the changes this rollout owns (audited) ...
    take_over_reason: str | None = None  # ... for this reason


class ApplyHooks(Protocol):
    """How the front door takes part in an apply."""

    def settled(self, settled: Settled) -> None:
        """An interrupted write was settled before planning."""

    def planned(self, plan: Plan) -> None:
        """The plan about to be applied (before anything is written)."""

    def confirm(self, plan: Plan) -> bool:
        """May the plan's changes be written? (Not asked for a dry run.)"""
        ...

    def progress(self) -> Progress:
        """Where device work reports its progress."""
        ...


class Unattended:
    """Hooks of a caller that already decided: nothing shown, every plan confirmed."""

    def settled(self, settled: Settled) -> None:
        pass

    def planned(self, plan: Plan) -> None:
        pass

    def confirm(self, plan: Plan) -> bool:
        return True

    def progress(self) -> Progress:
        return NoProgress()


def audit_plan(context: FleetContext, the_plan: Plan) -> None:
    """Every plan, read-only or about to be applied, is an audit record."""
    context.audit(
        "plan",
        detail={
            "changes": the_plan.change_count(),
            "devices": len(the_plan.changes()),
            "unknown": len(the_plan.unknown()),
            "refused": the_plan.refused,
            "hash": plan_hash(the_plan, fleet=context.fleet.config.fleet),
        },
    )


def apply_fleet(
    context: FleetContext, targets: Targets, request: ApplyRequest, hooks: ApplyHooks
) -> tuple[Plan, ApplyReport]:
    """Plan (or re-check the saved plan) and apply it; the plan and what was written.
    Refused (:class:`ServiceError`, code 1) when frozen, the lease is held or lost,
    the plan is refused or has unknown devices, or the front door says no."""
    if request.dry_run:
        return _plan_and_apply(context, targets, request, hooks, None)
    db = context.db
    try:
        db.freeze.check()
        with db.lease.held(context.holder, "apply") as token:
            for settled in settle_interrupted(db, targets, AuditToDb(context).record):
                hooks.settled(settled)
            return _plan_and_apply(context, targets, request, hooks, token)
    except (Frozen, FencedOut, LeaseHeld, StateBusy) as exc:
        raise ServiceError(str(exc), 1) from None


def _plan_and_apply(
    context: FleetContext,
    targets: Targets,
    request: ApplyRequest,
    hooks: ApplyHooks,
    token: LeaseToken | None,
) -> tuple[Plan, ApplyReport]:
    ownership = _ownership(context, request)
    if request.saved is not None:
        the_plan = recheck(context, targets, request.saved, ownership)
    else:
        the_plan = make_plan(
            context,
            targets,
            request.select,
            progress=hooks.progress(),
            concurrency=request.concurrency,
            ownership=ownership,
        )
    audit_plan(context, the_plan)
    hooks.planned(the_plan)
    if the_plan.refused or the_plan.unknown():
        raise ServiceError("not applying: the plan is refused or has unknown devices", 1)
    if the_plan.change_count() == 0:
        return the_plan, ApplyReport(())
    if not request.dry_run and not hooks.confirm(the_plan):
        raise ServiceError("aborted", 1)
    return the_plan, _run(context, targets, the_plan, token, request, hooks.progress())


def _ownership(context: FleetContext, request: ApplyRequest) -> Ownership:
    """Who owns which changes now; with ``take_over``, that rollout's claim is set
    aside, which needs a reason and is audited before anything is planned."""
    owned = rollout_ownership(context)
    if request.take_over is None:
        return owned
    if request.take_over not in owned.rollouts():
        active = ", ".join(owned.rollouts()) or "none"
        raise ServiceError(
            f"--take-over {request.take_over}: that rollout owns no field now (owners: {active})"
        )
    if not (request.take_over_reason or "").strip():
        raise ServiceError("--take-over needs --reason: taking fields from a rollout is audited")
    if not request.dry_run:
        context.audit(
            "decision",
            detail={
                "apply": "take-over",
                "rollout": request.take_over,
                "reason": request.take_over_reason,
            },
        )
    return owned.without(request.take_over)


def _run(
    context: FleetContext,
    targets: Targets,
    the_plan: Plan,
    token: LeaseToken | None,
    request: ApplyRequest,
    progress: Progress,
) -> ApplyReport:
    """Apply under ``token`` (the lease the caller holds), or stage only when None."""
    progress.begin("applying", sum(len(s.changes) for s in the_plan.steps))

    def tick(_: object) -> None:
        progress.advance()

    try:
        if token is None:
            return apply_plan(
                the_plan, targets, dry_run=True, concurrency=request.concurrency, on_device=tick
            )
        context.audit("decision", detail={"apply": "start", "changes": the_plan.change_count()})
        return apply_plan(
            the_plan,
            targets,
            dry_run=False,
            guard=DbGuard(context.db, token),
            audit=AuditToDb(context),
            confirm_within=request.confirm_within,
            concurrency=request.concurrency,
            on_device=tick,
        )
    finally:
        progress.end()
