"""One reconcile pass of the controller: observe the whole fleet, plan, decide per
drifted field (:mod:`serve.drift`), prove what to correct
(:mod:`serve.corrections`: a correction that cannot be proved safe
blocks its own devices, not the fleet), record the decision with its notice in one
transaction, and correct what may be corrected under the fleet lease, each device
write fenced by the lease token and by leadership. An intent that fails validation
blocks every correction. Fields an active rollout (or a queued approval) owns are
reported as owned and never corrected here (:mod:`service.ownership`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime

from intent.fleet import Fleet
from reconciler.errors import FencedOut
from reconciler.loop import ApplyReport, apply_plan, observe_all
from reconciler.plan import Plan, build_plan
from reconciler.render import DesiredFleet, render_desired
from reconciler.settings import Owned, Scalar, State
from reconciler.state.conn import Conn
from reconciler.state.db import StateDB
from reconciler.state.drifttold import fingerprint
from reconciler.state.lease import LeaseToken
from reconciler.targets import Targets
from serve.corrections import (
    INTENT_INVALID,
    Blocked,
    Corrections,
    prove_corrections,
)
from serve.drift import DriftDecision, DriftField, decide_drift
from serve.intentcheck import intent_problems
from serve.notices import Notice, render_payload
from serve.windows import WindowVerdict, correction_allowed
from service.context import AuditToDb, DbGuard, FleetContext
from service.owned import NO_OWNERSHIP, Ownership
from service.ownership import rollout_ownership

CONFIRM_WITHIN = 120.0


@dataclass
class PassResult:
    plan: Plan
    decision: DriftDecision
    applied: ApplyReport | None = None
    refused: str | None = None  # why nothing at all was corrected (the intent is invalid)
    seconds: float = 0.0


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


def _notice(context: FleetContext, decision: DriftDecision, new: frozenset[str]) -> Notice:
    fleet = context.fleet
    drifted = {f.device for f in decision.fields}
    told = [f for f in decision.fields if fingerprint(*_drift_key(f)) in new]
    summary = (
        f"{decision.count()} drifted field(s) on {len(drifted)} device(s),"
        f" {decision.corrected_fields()} to correct now ({decision.window.reason})"
    )
    if decision.blocked:
        summary += f"; correction blocked on {len(decision.blocked)} device(s)"
    owned = decision.owned()
    if owned:
        fields = sum(_owned_count(devices) for devices in owned.values())
        summary += f"; {fields} owned by rollout {', '.join(sorted(owned))}"
    return Notice(
        "drift",
        fleet.config.fleet,
        summary,
        {
            "commit": context.commit,
            "new": [
                {
                    "device": f.device,
                    "path": f.path,
                    "observed": f.observed,
                    "intended": f.intended,
                    **({"rollout": f.rollout} if f.rollout else {}),
                }
                for f in told[:10]
            ],
            "correcting": {d: sorted(p) for d, p in decision.correct.items()},
            "blocked": {
                d: {"kind": b.kind, "reason": b.reason} for d, b in decision.blocked.items()
            },
            "owned": {r: _owned_count(devices) for r, devices in sorted(owned.items())},
        },
    )


def _owned_count(devices: Mapping[str, list[str]]) -> int:
    """Fields in ``device -> paths``."""
    return sum(len(paths) for paths in devices.values())


def _drift_key(f: DriftField) -> tuple[str, str, Scalar, Scalar]:
    return f.device, f.path, f.observed, f.intended


def told_now(decision: DriftDecision) -> dict[str, tuple[str, str]]:
    """The fingerprints of what this pass has to tell: every drifted field with its
    values, every blocked device with the kind of block."""
    found = {fingerprint(*_drift_key(f)): (f.device, f.path) for f in decision.fields}
    for device, blocked in decision.blocked.items():
        subject = f"blocked:{blocked.kind}"
        found[fingerprint(device, subject)] = (device, subject)
    return found


def _record(context: FleetContext, result: PassResult) -> None:
    """The pass's decision in the audit log, and, if it found drift or a block not told
    before (the told set lives in the state database), its notice: together."""
    decision, db = result.decision, context.db
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
                "blocked": {d: b.reason for d, b in sorted(decision.blocked.items())},
                "owned": {r: _owned_count(d) for r, d in sorted(decision.owned().items())},
            },
        )
        new = db.drift_told.replace(conn, told_now(decision))
        if new:
            queue_notice(db, conn, context.fleet, _notice(context, decision, new))


def choose_corrections(
    fleet: Fleet,
    plan: Plan,
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    errors: Mapping[str, str],
    window: WindowVerdict,
    blocked: Mapping[str, Blocked],
    owned: Ownership = NO_OWNERSHIP,
) -> tuple[DriftDecision, Corrections]:
    """Decide, prove, and decide again without the devices the proof blocked (they
    take no room in the caps) until what is chosen is proved whole; fields a rollout
    ``owned`` are never chosen."""
    known = dict(blocked)
    while True:
        decision = decide_drift(plan, fleet.config.serve, window, known, owned)
        proved = prove_corrections(fleet, desired, observed, errors, decision.correct)
        if not proved.blocked:
            return decision, proved
        known.update(proved.blocked)


def invalid_intent(problems: list[str]) -> str | None:
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"the intent fails validation: {problems[0]}{more}"


@dataclass
class IntentCache:
    """What a pass derives from the intent alone (validation, rendered desired state),
    kept while the commit, and the day waivers expire by, stay the same: a pass on an
    unchanged fleet repo then costs observation and the diff, not a validation and a
    render. ``key`` None (a working tree with uncommitted changes, or not a git
    checkout) is never reused."""

    key: tuple[str, date] | None = None
    problems: list[str] = field(default_factory=list)
    desired: dict[str, dict[str, Owned]] = field(default_factory=dict)
    reused: int = 0  # passes that reused it, for logs and tests

    def of(
        self, fleet: Fleet, commit: str | None, today: date
    ) -> tuple[list[str], dict[str, dict[str, Owned]]]:
        key = None if commit is None else (commit, today)
        if key is not None and key == self.key:
            self.reused += 1
            return self.problems, self.desired
        self.problems = intent_problems(fleet, today=today)
        self.desired = render_desired(fleet, list(fleet.devices))
        self.key = key
        return self.problems, self.desired


def reconcile_pass(
    context: FleetContext,
    *,
    now: datetime,
    leading: Callable[[], bool],
    intent: IntentCache | None = None,
    clean_commit: str | None = None,
) -> PassResult:
    """One pass: validate and render (or reuse ``intent``'s, for ``clean_commit``, a
    commit whose fleet files the working tree holds unchanged), observe, diff, decide,
    and correct what may be corrected."""
    started = time.monotonic()
    fleet, db = context.fleet, context.db
    names = list(fleet.devices)
    targets = Targets.for_fleet(fleet)
    try:
        problems, desired = (intent or IntentCache()).of(fleet, clean_commit, now.date())
        observations = observe_all(targets, names)
        observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
        errors = {n: o.error for n, o in observations.items() if o.error}
        plan = build_plan(fleet, desired, observed, errors=errors, holds=db.journal.holds())
        window = correction_allowed(fleet.config.serve.windows, now)
        refused = invalid_intent(problems)
        invalid = {d: Blocked(INTENT_INVALID, refused) for d in plan.devices} if refused else {}
        owned = rollout_ownership(context)
        decision, fix = choose_corrections(
            fleet, plan, desired, observed, errors, window, invalid, owned
        )
        result = PassResult(plan, decision, refused=refused)
        _record(context, result)
        if fix.plan is not None and fix.correct:
            db.freeze.check()
            with db.lease.held(context.holder, "serve: correct drift", audited=False) as token:
                context.audit(
                    "decision",
                    detail={"serve": "correct", "changes": fix.plan.change_count()},
                )
                result.applied = apply_plan(
                    fix.plan,
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


def owned_lines(decision: DriftDecision) -> list[str]:
    """One log line per rollout that owns drifted fields."""
    return [
        f"drift owned by rollout {rollout}: {_owned_count(devices)} field(s) on"
        f" {len(devices)} device(s), left to the rollout"
        for rollout, devices in sorted(decision.owned().items())
    ]


def blocked_lines(decision: DriftDecision) -> list[str]:
    """One log line per blocked device."""
    return [
        f"correction blocked on {device} ({b.kind}): {b.reason}"
        for device, b in sorted(decision.blocked.items())
    ]
