"""One reconcile pass of the controller: observe the whole fleet, plan, decide per
drifted field (:mod:`reconciler.controller.drift`), record the decision with its
notice in one transaction, and correct what may be corrected under the fleet lease,
each device write fenced by the lease token and by leadership."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from intent.fleet import Fleet
from plumb.context import AuditToDb, DbGuard, FleetContext
from reconciler.controller.drift import DriftDecision, decide_drift, restrict_desired
from reconciler.controller.notices import Notice, render_payload
from reconciler.controller.windows import correction_allowed
from reconciler.errors import FencedOut
from reconciler.loop import ApplyReport, apply_plan, observe_all
from reconciler.plan import Plan, build_plan
from reconciler.render import render_desired
from reconciler.settings import State
from reconciler.state.conn import Conn
from reconciler.state.db import StateDB
from reconciler.state.lease import LeaseToken
from reconciler.targets import Targets

CONFIRM_WITHIN = 120.0


@dataclass
class PassResult:
    plan: Plan
    decision: DriftDecision
    applied: ApplyReport | None = None
    refused: str | None = None
    seconds: float = 0.0


@dataclass
class NoticeMemory:
    """Drift already told, so an unchanged drift is not told again every pass."""

    told: frozenset[tuple[str, str, str]] = field(default_factory=frozenset)


class LeaderGuard(DbGuard):
    """Before every device write: the kill switch and the lease token, then leadership."""

    def __init__(self, db: StateDB, token: LeaseToken, leading: Callable[[], bool]) -> None:
        super().__init__(db, token)
        self.leading = leading

    def before_write(self, device: str) -> None:
        super().before_write(device)
        if not self.leading():
            raise FencedOut("this controller is no longer the fleet's leader")


def queue_notice(db: StateDB, conn: Conn, fleet: Fleet, notice: Notice) -> None:
    """Queue ``notice`` for every target that wants its event (inside a transaction)."""
    at = db.now().isoformat()
    for target in fleet.config.serve.notify:
        if notice.event in target.events:
            db.outbox.add(
                conn,
                event=notice.event,
                target=target.url_env,
                format=target.format,
                payload=render_payload(notice, target.format, at=at),
            )


def _record(context: FleetContext, result: PassResult, memory: NoticeMemory) -> None:
    """The pass's decision in the audit log and, if drift is new, its notice: together."""
    decision, db, fleet = result.decision, context.db, context.fleet
    found = frozenset((f.device, f.path, repr(f.intended)) for f in decision.fields)
    new = found - memory.told
    with db.transaction() as conn:
        context.audit(
            "decision",
            detail={
                "serve": "drift",
                "fields": decision.count(),
                "warn": decision.count("warn"),
                "correct": decision.count("correct"),
                "correcting": decision.corrected_fields(),
                "window": decision.window.reason,
                "unknown": sorted(result.plan.unknown()),
            },
        )
        if new:
            sample = sorted(new)[:10]
            queue_notice(
                db,
                conn,
                fleet,
                Notice(
                    "drift",
                    fleet.config.fleet,
                    f"{len(found)} drifted field(s) on"
                    f" {len({f.device for f in decision.fields})} device(s),"
                    f" {decision.corrected_fields()} to correct now ({decision.window.reason})",
                    {
                        "commit": context.commit,
                        "new": [{"device": d, "path": p, "intended": i} for d, p, i in sample],
                        "correcting": {d: sorted(p) for d, p in decision.correct.items()},
                    },
                ),
            )
    memory.told = found


def reconcile_pass(
    context: FleetContext,
    *,
    now: datetime,
    leading: Callable[[], bool],
    memory: NoticeMemory,
) -> PassResult:
    started = time.monotonic()
    fleet, db = context.fleet, context.db
    names = list(fleet.devices)
    targets = Targets.for_fleet(fleet)
    try:
        observations = observe_all(targets, names)
        observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
        errors = {n: o.error for n, o in observations.items() if o.error}
        desired = render_desired(fleet, names)
        plan = build_plan(fleet, desired, observed, errors=errors, holds=db.journal.holds())
        window = correction_allowed(fleet.config.serve.windows, now)
        result = PassResult(plan, decide_drift(plan, fleet.config.serve, window))
        _record(context, result, memory)
        if result.decision.correct:
            narrowed = restrict_desired(desired, observed, result.decision.correct)
            fix = build_plan(fleet, narrowed, observed, errors=errors)
            if fix.refused is not None:
                result.refused = fix.refused
            else:
                db.freeze.check()
                with db.lease.held(context.holder, "serve: correct drift") as token:
                    context.audit(
                        "decision",
                        detail={"serve": "correct", "changes": fix.change_count()},
                    )
                    result.applied = apply_plan(
                        fix,
                        targets,
                        dry_run=False,
                        guard=LeaderGuard(db, token, leading),
                        audit=AuditToDb(context),
                        confirm_within=CONFIRM_WITHIN,
                    )
    finally:
        targets.close()
    result.seconds = time.monotonic() - started
    return result
