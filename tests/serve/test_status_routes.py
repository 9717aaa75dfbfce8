"""The status page's routes and renderer without a controller: what an unreachable
state database makes of them, escaping, the token, and the ring of last turns."""

from __future__ import annotations

import json
from collections.abc import Sequence

from serve.httpapp import Request, Route, dispatch
from serve.statusdata import AuditCheck, ControllerFacts, gather_status, unreadable
from serve.statushttp import status_routes
from serve.turnlog import TurnLog

DOWN = "StateUnreachable: connection refused <script>alert(1)</script>"


def facts(state_up: bool = True, error: str | None = None) -> ControllerFacts:
    return ControllerFacts(
        fleet="orion",
        leader=state_up,
        state_up=state_up,
        unreachable_since=None if state_up else 1_700_000_000.0,
        last_error=error,
        last_ok=None,
        commit="abc123",
        last_pass=None,
        turns=[],
    )


def get(routes: Sequence[Route], path: str, token: str | None = None) -> tuple[int, bytes]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = dispatch(routes, Request("GET", path, headers))
    return response.status, response.body


def test_unreachable_state_is_503_json_with_its_reason_and_the_page_says_it() -> None:
    """With the state database unreachable, status.json is 503 with the reason and the
    page still renders (200) with the reason, escaped."""
    data = gather_status(facts(False, DOWN), None, AuditCheck())
    routes = status_routes(lambda: data, b"")
    code, body = get(routes, "/status.json")
    answer = json.loads(body)
    assert code == 503 and DOWN in answer["reason"] and answer["state"]["up"] is False
    code, page = get(routes, "/")
    assert code == 200 and b"cannot be read" in page
    assert b"<script>alert(1)" not in page and b"&lt;script&gt;alert(1)" in page


def test_a_read_failing_midway_is_said_like_an_unreachable_state() -> None:
    """A state database that fails while the data is gathered marks the data down."""
    data = unreadable(gather_status(facts(), None, AuditCheck()), "StateError: disk I/O error")
    code, body = get(status_routes(lambda: data, b""), "/status.json")
    assert code == 503 and "disk I/O error" in json.loads(body)["reason"]


def test_token_demanded_on_the_page_routes_only() -> None:
    """With a token, / and /status.json answer 401 without it and 200 with it."""
    data = gather_status(facts(), None, AuditCheck())
    routes = status_routes(lambda: data, b"t0ken")
    assert get(routes, "/")[0] == 401 and get(routes, "/status.json")[0] == 401
    assert get(routes, "/", "t0ken")[0] == 200 and get(routes, "/status.json", "t0ken")[0] == 200
    assert get(routes, "/", "other")[0] == 401


def test_idle_turns_fold_into_one_entry_and_the_ring_is_bounded() -> None:
    """Turns with nothing to say fold into the entry before; the ring keeps the newest."""
    turns = TurnLog(kept=3)
    turns.add(1.0, ["pass at abc: 0 drifted field(s)"], None)
    for at in (2.0, 3.0, 4.0):
        turns.add(at, [], None)
    turns.add(5.0, [], "PollError: fetch failed")
    newest = turns.newest_first()
    assert [(t.at, t.repeats, t.ok) for t in newest] == [
        (5.0, 1, False),
        (4.0, 3, True),
        (1.0, 1, True),
    ]
    turns.add(6.0, ["x"], None)
    assert len(turns.newest_first()) == 3 and turns.newest_first()[-1].at == 4.0
