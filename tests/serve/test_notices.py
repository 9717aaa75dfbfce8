"""Notices: made only from committed decisions, queued in the outbox with them, once
each, and retried with backoff; JSON and Slack payload shapes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.state.db import StateDB, open_state_db
from reconciler.state.location import open_state
from reconciler.state.outbox import MAX_BACKOFF_SECONDS, backoff
from serve.controller import AUDIT_CURSOR, Controller
from serve.notices import Notice, json_payload, slack_payload
from serve.sender import deliver_due
from tests.fleetcopy import FleetCopy
from tests.serve.servefleet import Receiver

NOTIFY = """
serve:
  notify:
    - url_env: TEST_NOTIFY_URL
      events: [abort, rollback, old_lease]
"""


@pytest.fixture
def controller(orion: FleetCopy) -> Iterator[Controller]:
    orion.append("plumb.yaml", NOTIFY)
    found = Controller(orion.path, "controller@test")
    yield found
    found.close()


def _queued(db: StateDB) -> list[str]:
    return [p.event for p in db.outbox.due(100)]


def test_rollout_abort_and_rollback_are_queued_once_history_is_not(
    controller: Controller,
) -> None:
    """Records before the controller first ran are not replayed; an abort decision and
    a rollback after it are queued once each, with the cursor in the same transaction."""
    db = controller.db
    db.audit.append("decision", actor="x", intent_commit=None, detail={"decision": "abort"})
    controller.audit_notices()
    assert _queued(db) == []
    db.audit.append(
        "decision",
        actor="ops",
        intent_commit=None,
        detail={"rollout": "r1", "wave": 2, "decision": "abort", "reasons": ["fec > 0"]},
    )
    db.audit.append("decision", actor="ops", intent_commit=None, detail={"decision": "proceed"})
    db.audit.append("rollback", actor="ops", intent_commit=None, detail={"rollout": "r1"})
    controller.audit_notices()
    controller.audit_notices()
    assert _queued(db) == ["abort", "rollback"]
    first = db.outbox.due(1)[0].payload
    assert first["summary"] == "rollout r1 wave 2: abort (fec > 0)"
    assert db.outbox.cursor(AUDIT_CURSOR) == db.audit.records(1)[0].seq


def test_an_old_lease_is_told_once(controller: Controller) -> None:
    """A lease whose holder has not beaten for old_lease_minutes is told once per token."""
    db = controller.db
    token = db.lease.acquire("someone pid 9", "apply")
    controller.old_lease_notice()
    assert _queued(db) == []
    old = (db.now() - timedelta(hours=2)).isoformat()
    with db.transaction() as conn:
        conn.execute("UPDATE lease SET heartbeat_at = ? WHERE token = ?", (old, token.value))
    controller.old_lease_notice()
    controller.old_lease_notice()
    assert _queued(db) == ["old_lease"]


def test_failed_delivery_backs_off_and_keeps_the_notice(
    controller: Controller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target that is not reachable leaves the notice queued, due again later."""
    db = controller.db
    with db.transaction() as conn:
        db.outbox.add(conn, event="abort", target="TEST_NOTIFY_URL", format="json", payload={})
    environ = {"TEST_NOTIFY_URL": "http://127.0.0.1:9/nothing-listens"}
    assert deliver_due(db, environ) == (0, 1)
    assert db.outbox.undelivered() == 1
    assert db.outbox.due() == []  # backing off
    assert deliver_due(db, {}) == (0, 0)


def test_a_repeated_delivery_carries_the_same_id(
    controller: Controller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Delivered but not marked (the process died in between): sent again after the
    restart with the same id, so the receiver can tell it is the same notice; a Slack
    payload keeps Slack's shape."""
    db = controller.db
    with db.transaction() as conn:
        db.outbox.add(conn, event="abort", target="J", format="json", payload={"x": 1})
        db.outbox.add(conn, event="abort", target="S", format="slack", payload={"text": "t"})
    receiver = Receiver()
    url = receiver.start()
    environ = {"J": f"{url}/json", "S": f"{url}/slack"}
    try:
        with monkeypatch.context() as patched:
            patched.setattr(db.outbox, "delivered", lambda id: None)  # the mark is lost
            assert deliver_due(db, environ) == (2, 0)
        assert deliver_due(db, environ) == (2, 0)
        assert deliver_due(db, environ) == (0, 0)
    finally:
        receiver.stop()
    first, again = receiver.events("/json")
    assert first == again and first["x"] == 1 and isinstance(first["id"], int)
    assert receiver.events("/slack") == [{"text": "t"}, {"text": "t"}]


def test_backoff_doubles_up_to_a_limit() -> None:
    """1, 2, 4, ... seconds, never more than the limit."""
    assert [backoff(n) for n in (1, 2, 3, 4)] == [1, 2, 4, 8]
    assert backoff(40) == MAX_BACKOFF_SECONDS


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_outbox_and_cursors_on_both_backends(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Queue, deliver and move a cursor with the same statements on either backend."""
    if backend == "sqlite":
        db: StateDB = open_state_db(tmp_path / "plumb.db")
    else:
        db = open_state(request.getfixturevalue("pg_url"))
    try:
        assert db.outbox.cursor("c") is None
        with db.transaction() as conn:
            db.outbox.add(conn, event="drift", target="T", format="slack", payload={"a": 1})
            db.outbox.set_cursor(conn, "c", 7)
            db.outbox.set_cursor(conn, "c", 9)
        (pending,) = db.outbox.due()
        assert (pending.event, pending.format, pending.payload) == ("drift", "slack", {"a": 1})
        db.outbox.delivered(pending.id)
        assert db.outbox.due() == [] and db.outbox.undelivered() == 0
        assert db.outbox.cursor("c") == 9
    finally:
        db.close()


def test_payload_shapes() -> None:
    """Generic JSON names the schema and event; Slack's has text and blocks."""
    notice = Notice("hold", "orion", "rollout r1 wave 1: hold", {"wave": 1})
    body = json_payload(notice, at="2026-12-01T00:00:00+00:00")
    assert body["schema"] == "plumb.notice/v1" and body["detail"] == {"wave": 1}
    slack = slack_payload(notice, at="2026-12-01T00:00:00+00:00")
    assert slack["text"] == "plumb orion: hold: rollout r1 wave 1: hold"
    assert [b["type"] for b in slack["blocks"]] == ["header", "section", "context"]


def test_a_leader_taking_over_after_a_gap_tells_how_long_none_led(orion: FleetCopy) -> None:
    """The leader records that it leads (state, every 30 s); a replica that takes over
    when that record is older than 2 minutes queues one no_leader notice with the gap;
    after a short gap (a normal failover) nothing is told."""
    import time

    from serve.controller import LEADER_SEEN

    orion.append("plumb.yaml", NOTIFY.replace("old_lease]", "old_lease, no_leader]"))
    controller = Controller(orion.path, "replica-b@test")
    try:
        db = controller.db
        with db.transaction() as conn:
            db.outbox.set_cursor(conn, LEADER_SEEN, int(time.time()) - 600)
        controller.turn()
        assert controller.status.leader
        queued = [p for p in db.outbox.due(100) if p.event == "no_leader"]
        assert len(queued) == 1
        assert db.outbox.cursor(LEADER_SEEN) >= int(time.time()) - 5  # it records itself
    finally:
        controller.close()
    second = Controller(orion.path, "replica-c@test")  # took over at once: no gap to tell
    try:
        second.turn()
        assert [p for p in second.db.outbox.due(100) if p.event == "no_leader"] == queued
    finally:
        second.close()
