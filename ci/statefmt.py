"""Stable JSON documents of the state commands: ``lease show``, ``freeze``/``unfreeze``,
``audit show``/``audit verify``, ``pins list``/``pins release``, ``rollout list`` and
``rollback`` (schemas documented in docs/output-formats.md); and the text of
``audit show``, one table row per record.

Pure: each function turns what the state database returned into a JSON-ready dict (or
the text).
Every document carries its ``schema`` key (``plumb.<name>/v1``); keys may be added in
v1, none removed or changed in meaning. Times are ISO 8601 with their UTC offset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ci.texttable import Column, table_text
from reconciler.state.audit import AuditRecord, AuditVerdict
from reconciler.state.freeze import FreezeStatus
from reconciler.state.journal import Pin, RolloutRow, WaveRow, WaveStatus
from reconciler.state.lease import LeaseInfo

if TYPE_CHECKING:  # rollback pulls in the rollout engine; the other documents need none of it
    from rollouts.rollback import RollbackReport

LEASE_SCHEMA = "plumb.lease/v1"
FREEZE_SCHEMA = "plumb.freeze/v1"
AUDIT_SCHEMA = "plumb.audit/v1"
AUDIT_VERIFY_SCHEMA = "plumb.audit-verify/v1"
PINS_SCHEMA = "plumb.pins/v1"
PINS_RELEASE_SCHEMA = "plumb.pins-release/v1"
ROLLOUT_LIST_SCHEMA = "plumb.rollout-list/v1"
ROLLBACK_SCHEMA = "plumb.rollback/v1"


def _age(now: datetime, then: datetime) -> float:
    return round(max((now - then).total_seconds(), 0.0), 3)


def lease_json(current: LeaseInfo | None, now: datetime) -> dict[str, Any]:
    """``lease show``: the lease held now, or ``null``."""
    lease = None
    if current is not None:
        lease = {
            "token": current.token,
            "holder": current.holder,
            "purpose": current.purpose,
            "since": current.since.isoformat(),
            "heartbeat_at": current.heartbeat_at.isoformat(),
            "age_seconds": _age(now, current.since),
            "heartbeat_age_seconds": _age(now, current.heartbeat_at),
        }
    return {"schema": LEASE_SCHEMA, "held": current is not None, "lease": lease}


def _freeze(status: FreezeStatus | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {"actor": status.actor, "reason": status.reason, "since": status.since.isoformat()}


def freeze_json(
    action: str, now_frozen: FreezeStatus | None, lifted: FreezeStatus | None = None
) -> dict[str, Any]:
    """``freeze`` (the freeze now in force) or ``unfreeze`` (the freeze it lifted, if any)."""
    return {
        "schema": FREEZE_SCHEMA,
        "action": action,
        "frozen": now_frozen is not None,
        "freeze": _freeze(now_frozen),
        "lifted": _freeze(lifted),
    }


def audit_record_json(record: AuditRecord) -> dict[str, Any]:
    return {
        "seq": record.seq,
        "at": record.at.isoformat(),
        "kind": record.kind.value,
        "actor": record.actor,
        "intent_commit": record.intent_commit,
        "device": record.device,
        "field": record.field,
        "before": record.before,
        "after": record.after,
        "detail": dict(record.detail),
        "hash": record.hash,
    }


def audit_json(records: Sequence[AuditRecord]) -> dict[str, Any]:
    """``audit show``: the records chosen, oldest first."""
    return {"schema": AUDIT_SCHEMA, "records": [audit_record_json(r) for r in records]}


def audit_text(records: Sequence[AuditRecord]) -> str:
    """``audit show``: per record its number, time, kind, actor, then what it touched
    (device, field, before -> after) and its detail; no header."""
    rows = []
    for r in records:
        what = f"{r.device or ''} {r.field or ''}".strip()
        change = f" {r.before!r} -> {r.after!r}" if r.field else ""
        detail = f" {json.dumps(dict(r.detail), sort_keys=True)}" if r.detail else ""
        at = r.at.isoformat(timespec="seconds")
        rows.append((r.seq, at, r.kind.value, r.actor, f"{what}{change}{detail}".strip()))
    columns = (Column(justify="right"), Column(), Column(), Column(), Column())
    return table_text(columns, rows, header=False)


def audit_verify_json(verdict: AuditVerdict) -> dict[str, Any]:
    """``audit verify``: whether the chain is whole, and every row that is not."""
    return {
        "schema": AUDIT_VERIFY_SCHEMA,
        "ok": verdict.ok,
        "rows": verdict.rows,
        "head_seq": verdict.head_seq,
        "head_hash": verdict.head_hash,
        "problems": [
            {"seq": p.seq, "fault": p.fault.value, "message": p.message} for p in verdict.problems
        ],
        "missing_guards": list(verdict.missing_guards),
    }


def pins_json(pins: Sequence[Pin]) -> dict[str, Any]:
    """``pins list``: the active pins."""
    return {
        "schema": PINS_SCHEMA,
        "pins": [
            {
                "id": p.id,
                "device": p.device,
                "path": p.path,
                "value": p.value,
                "reason": p.reason,
                "rollout": p.rollout,
                "pinned_at": p.pinned_at,
            }
            for p in pins
        ],
    }


def pins_release_json(released: int, rollout: str | None, device: str | None) -> dict[str, Any]:
    """``pins release``: how many pins were released, and by which selector."""
    return {
        "schema": PINS_RELEASE_SCHEMA,
        "released": released,
        "rollout": rollout,
        "device": device,
    }


def rollout_list_json(
    rows: Sequence[RolloutRow], waves: Mapping[str, Sequence[WaveRow]]
) -> dict[str, Any]:
    """``rollout list``: every recorded rollout, oldest first."""
    return {
        "schema": ROLLOUT_LIST_SCHEMA,
        "rollouts": [
            {
                "id": row.id,
                "spec": row.spec_name,
                "status": row.status.value,
                "reason": row.reason,
                "actor": row.actor,
                "intent_commit": row.intent_commit,
                "created_at": row.created_at,
                "updated_at": row.updated_at,
                "waves": len(waves.get(row.id, ())),
                "waves_passed": sum(
                    1 for w in waves.get(row.id, ()) if w.status is WaveStatus.passed
                ),
            }
            for row in rows
        ],
    }


def rollback_json(
    rollout: str,
    report: RollbackReport,
    revert: Mapping[str, str] | None,
    status: dict[str, Any],
) -> dict[str, Any]:
    """``rollback``: what each chosen target ended as, and the rollout's status after."""
    return {
        "schema": ROLLBACK_SCHEMA,
        "rollout": rollout,
        "scope": str(report.scope),
        "ok": report.ok,
        "restored": sorted(report.restored),
        "already": sorted(report.already),
        "failed": dict(sorted(report.failed.items())),
        "kept": dict(sorted(report.kept.items())),
        "skipped": sorted(report.skipped),
        "pinned": report.pinned,
        "refused": report.refused,
        "revert": dict(revert) if revert is not None else None,
        "status": status,
    }
