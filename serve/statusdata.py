"""What the status page (``GET /`` and ``GET /status.json``) shows, as plain data.

Where it sits: the controller (:mod:`serve.controller`) keeps a summary of its last
reconcile pass (:func:`pass_summary`, pure) and its last turns (:mod:`serve.turnlog`);
after each turn, in its own thread, it calls :func:`gather_status` with what it knows
and its state database, and keeps the result for the HTTP thread to serve
(:mod:`serve.statuspage` renders it, :mod:`serve.statushttp` answers). Reading the state
database happens here only: the journal (rollouts, waves with their evidence,
targets), the approvals queue, the lease and the audit head. A state database that
cannot be reached is not touched; the data then says why (``state.up`` false).

Nothing here writes: the page is read-only, approvals stay in git and the CLI.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ci.journalfmt import cost_so_far, queued_json, status_text
from reconciler.state.db import StateDB
from reconciler.state.journal import RolloutRow, WaveRow, WaveStatus
from reconciler.state.journal_approvals import ApprovalKind, ApprovalState
from serve.reconcile import PassResult

STATUS_SCHEMA = "plumb.status-page/v1"
FIELDS_SHOWN = 50
AUDIT_RECHECK_SECONDS = 30.0
"""The whole audit chain is verified again at most this often (and only when its head
moved): verifying reads every row."""


def iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def pass_summary(result: PassResult, commit: str | None, at: float) -> dict[str, Any]:
    """The fleet as the last reconcile pass saw it (pure)."""
    decision = result.decision
    ok = result.refused is None and (result.applied is None or result.applied.ok())
    by_owner: Counter[str] = Counter()
    for f in decision.fields:
        if f.rollout is not None:
            by_owner[f"rollout {f.rollout}"] += 1
        else:
            by_owner[f.owner.split(":", 1)[0] or "(no owner)"] += 1
    return {
        "at": iso(at),
        "commit": commit,
        "ok": ok,
        "refused": result.refused,
        "seconds": round(result.seconds, 3),
        "drifted": decision.count(),
        "by_mode": {mode: decision.count(mode) for mode in ("warn", "correct")},
        "by_owner": dict(sorted(by_owner.items())),
        "owned": {r: sum(len(p) for p in d.values()) for r, d in sorted(decision.owned().items())},
        "correcting": decision.corrected_fields(),
        "pending": result.plan.change_count() - (decision.corrected_fields() if ok else 0),
        "unknown": dict(sorted(result.plan.unknown().items())),
        "blocked": {d: {"kind": b.kind, "reason": b.reason} for d, b in decision.blocked.items()},
        "window": {"open": decision.window.allowed, "reason": decision.window.reason},
        "fields": [
            {
                "device": f.device,
                "path": f.path,
                "observed": f.observed,
                "intended": f.intended,
                "mode": f.mode,
                "owner": f.owner,
                "rollout": f.rollout,
                "waiting": f.waiting,
            }
            for f in decision.fields[:FIELDS_SHOWN]
        ],
        "fields_more": max(len(decision.fields) - FIELDS_SHOWN, 0),
    }


@dataclass(frozen=True)
class ControllerFacts:
    """What the controller knows without its state database."""

    fleet: str
    leader: bool
    state_up: bool
    unreachable_since: float | None
    last_error: str | None
    last_ok: float | None
    commit: str | None
    last_pass: Mapping[str, Any] | None
    turns: list[dict[str, object]]


@dataclass
class AuditCheck:
    """The audit chain's verdict, verified again only when its head moved (and at
    most every :data:`AUDIT_RECHECK_SECONDS`)."""

    seq: int = -1
    checked: float = 0.0
    found: dict[str, Any] = field(default_factory=dict)

    def verdict(self, db: StateDB, now: float) -> dict[str, Any]:
        head = db.audit.records(1)
        seq = head[-1].seq if head else 0
        if seq != self.seq and (self.seq < 0 or now - self.checked >= AUDIT_RECHECK_SECONDS):
            verdict = db.audit.verify()
            self.seq, self.checked = verdict.head_seq, now
            self.found = {
                "verified_seq": verdict.head_seq,
                "verified_at": iso(now),
                "ok": verdict.ok,
                "problems": [str(p) for p in verdict.problems[:10]],
                "missing_guards": list(verdict.missing_guards),
            }
        return {
            "head_seq": seq,
            "head_hash": head[-1].hash if head else None,
            "head_at": head[-1].at.isoformat(timespec="seconds") if head else None,
            **self.found,
        }


def current_wave(waves: list[WaveRow]) -> WaveRow | None:
    """The first wave not passed: the one in progress, held, or next."""
    return next((w for w in waves if w.status is not WaveStatus.passed), None)


def rollout_data(db: StateDB, row: RolloutRow) -> dict[str, Any]:
    """One rollout as ``plumb rollout status`` gives it: its waves with their decisions
    and evidence, the text of the command, and the wave it is at."""
    waves = db.journal.waves(row.id)
    targets = db.journal.targets(row.id)
    pins = db.journal.pins(row.id)
    by_wave: dict[int, Counter[str]] = {}
    for t in targets:
        by_wave.setdefault(t.wave, Counter())[t.status.value] += 1
    now = current_wave(waves)
    return {
        "id": row.id,
        "spec": row.spec_path,
        "status": row.status.value,
        "active": row.status.active,
        "reason": row.reason,
        "actor": row.actor,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "current_wave": None if now is None else now.number,
        "awaiting_wave": now.number
        if now is not None and row.status.value == "awaiting_promotion"
        else None,
        "cost": cost_so_far(row, waves),
        "waves": [
            {
                "number": w.number,
                "canary": w.canary,
                "status": w.status.value,
                "attempts": w.attempts,
                "targets": sum(by_wave.get(w.number, Counter()).values()),
                "target_states": dict(sorted(by_wave.get(w.number, Counter()).items())),
                "bake_minutes": w.bake_minutes,
                "bake_window_minutes": [w.bake_start, w.bake_end],
                "decision": w.decision,
                "evidence": w.evidence,
            }
            for w in waves
        ],
        "pins": len(pins),
        "text": status_text(row, waves, targets, pins),
    }


def approvals_data(db: StateDB) -> dict[str, Any]:
    pending = db.approvals.rows(state=ApprovalState.pending)
    return {
        "queued": queued_json([a for a in pending if a.kind is ApprovalKind.start]),
        "drive": [
            {"approval": a.id, "rollout": a.rollout, "approved_by": a.actor, "at": a.approved_at}
            for a in pending
            if a.kind is ApprovalKind.drive
        ],
        "promotions_given": [
            {"approval": a.id, "rollout": a.rollout, "wave": a.wave, "approved_by": a.actor}
            for a in pending
            if a.kind is ApprovalKind.promote
        ],
    }


def gather_status(facts: ControllerFacts, db: StateDB | None, audit: AuditCheck) -> dict[str, Any]:
    """The status page's data; ``db`` None when the state database is unreachable (then
    nothing is read and ``state.reason`` says why)."""
    now = time.time()
    data: dict[str, Any] = {
        "schema": STATUS_SCHEMA,
        "fleet": facts.fleet,
        "generated_at": iso(now),
        "state": {
            "up": facts.state_up,
            "reason": None if facts.state_up else facts.last_error,
            "unreachable_since": iso(facts.unreachable_since),
        },
        "controller": {
            "leader": facts.leader,
            "commit": facts.commit,
            "last_pass_at": iso(facts.last_ok),
            "last_error": facts.last_error,
        },
        "drift": facts.last_pass,
        "turns": facts.turns,
        "rollouts": [],
        "approvals": None,
        "promotions_waiting": [],
        "audit": None,
        "lease": None,
    }
    if db is None or not facts.state_up:
        return data
    rows = db.journal.all()
    active = [r for r in rows if r.status.active]
    rest = sorted((r for r in rows if not r.status.active), key=lambda r: r.updated_at)
    shown = active + rest[-1:]  # the latest finished one too: how the last rollout ended
    data["rollouts"] = [rollout_data(db, r) for r in shown]
    data["promotions_waiting"] = [
        {"rollout": r["id"], "wave": r["awaiting_wave"], "reason": r["reason"]}
        for r in data["rollouts"]
        if r["awaiting_wave"] is not None
    ]
    data["approvals"] = approvals_data(db)
    held = db.lease.current()
    if held is not None:
        data["lease"] = {"holder": held.holder, "purpose": held.purpose, "token": held.token}
    data["audit"] = audit.verdict(db, now)
    return data


def unreadable(data: dict[str, Any], reason: str) -> dict[str, Any]:
    """``data`` when reading the state database failed midway: it says so."""
    return {**data, "state": {**data["state"], "up": False, "reason": reason}}
