"""Notifications (pure): what the controller tells people, and the payload shapes.

A :class:`Notice` is made from a committed decision: drift found by a pass, an old
lease, or a hold, abort or rollback read from the audit log. It is rendered per target
as generic JSON or as a Slack incoming-webhook message (``text`` plus ``blocks``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.state.audit import AuditRecord


@dataclass(frozen=True)
class Notice:
    event: str  # one of intent.serve.SERVE_EVENTS
    fleet: str
    summary: str
    detail: Mapping[str, Any]


def json_payload(notice: Notice, *, at: str) -> dict[str, Any]:
    return {
        "schema": "plumb.notice/v1",
        "event": notice.event,
        "fleet": notice.fleet,
        "at": at,
        "summary": notice.summary,
        "detail": dict(notice.detail),
    }


def slack_payload(notice: Notice, *, at: str) -> dict[str, Any]:
    title = f"plumb {notice.fleet}: {notice.event.replace('_', ' ')}"
    facts = json.dumps(dict(notice.detail), sort_keys=True, default=str)[:2500]
    return {
        "text": f"{title}: {notice.summary}",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": title[:150]}},
            {"type": "section", "text": {"type": "mrkdwn", "text": notice.summary[:3000]}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"{at} `{facts}`"}]},
        ],
    }


def render_payload(notice: Notice, format: str, *, at: str) -> dict[str, Any]:
    return slack_payload(notice, at=at) if format == "slack" else json_payload(notice, at=at)


ROLLOUT_EVENTS = {
    "approved": "approve",
    "approval_taken": "approve",
    "approval_refused": "approve",
    "awaiting_promotion": "promotion",
    "promoted": "promotion",
}
"""Rollout records (``event``) that people are told of, and the notice event of each."""


def _rollout_notice(record: AuditRecord, detail: dict[str, Any], fleet: str) -> Notice | None:
    """Approvals, promotions and an operator's abort, from a ``rollout`` record."""
    event = str(detail.get("event"))
    rollout = detail.get("rollout") or detail.get("spec")
    wave = f" wave {detail['wave']}" if detail.get("wave") is not None else ""
    if event == "aborted" and detail.get("by") == "operator":
        reason = detail.get("reason") or "no reason given"
        summary = f"rollout {rollout}: aborted by {record.actor} ({reason})"
        return Notice("abort", fleet, summary, detail)
    kind = ROLLOUT_EVENTS.get(event)
    if kind is None:
        return None
    words = {
        "approved": f"approved by {record.actor}",
        "approval_taken": f"taken by the controller (approved by {detail.get('approved_by')})",
        "approval_refused": f"approval refused: {detail.get('reason')}",
        "awaiting_promotion": "waits for promotion (plumb rollout promote)",
        "promoted": f"promoted by {record.actor}",
    }[event]
    return Notice(kind, fleet, f"rollout {rollout}{wave}: {words}", detail)


def notice_from_audit(record: AuditRecord, fleet: str) -> Notice | None:
    """The notice a committed audit record calls for: a rollout's hold, abort or
    rollback decision, a rollback, an approval or promotion, an operator's abort;
    None for every other record."""
    detail = dict(record.detail)
    rollout = detail.get("rollout")
    if record.kind == "rollout":
        return _rollout_notice(record, detail, fleet)
    if record.kind == "rollback":
        return Notice("rollback", fleet, f"rollout {rollout}: rollback by {record.actor}", detail)
    decision = detail.get("decision")
    if record.kind == "decision" and decision in ("hold", "abort", "rollback"):
        reasons = "; ".join(str(r) for r in detail.get("reasons", [])[:3])
        wave = detail.get("wave")
        summary = f"rollout {rollout} wave {wave}: {decision}" + (
            f" ({reasons})" if reasons else ""
        )
        return Notice(str(decision), fleet, summary, detail)
    return None
