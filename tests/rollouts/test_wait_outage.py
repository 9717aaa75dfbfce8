"""A rollout waiting out a bake in real time outlives its state database's restart: the
outage is reported once, the wait goes on past its end until the database answers, and
the rollout then carries on with a new connection."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any, cast

import pytest

from reconciler.state.errors import StateUnreachable
from reconciler.state.pgdb import open_pg_state_db
from rollouts import execute
from rollouts.nodes import Context
from rollouts.runtime import Runtime, WallClock
from tests.pgserver import PgServer


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)

    def begin(self, label: str, total: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None

    def end(self) -> None:
        return None


def test_a_bake_wait_goes_on_until_the_database_is_back(
    halting_pg: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_pg_state_db(halting_pg.new_database())
    monkeypatch.setattr(execute, "WAIT_SLICE_MINUTES", 0.005)  # 0.3 s slices
    said = Said()
    unused = cast(Any, None)  # a wait touches only the clock, the state and the reporter
    rt = Runtime(
        fleet=unused,
        targets=unused,
        db=db,
        guard=unused,
        audit=unused,
        clock=WallClock(),
        maintenance=unused,
        sources={},
        reporter=said,
    )
    ctx = Context(row=cast(Any, SimpleNamespace(id="fw-1")), spec=unused)
    resumed = threading.Event()

    def resume() -> None:
        halting_pg.resume()
        resumed.set()

    halting_pg.halt()  # down before the wait starts, back well after its 1.2 s end
    timer = threading.Timer(2.0, resume)
    timer.start()
    try:
        execute.wait(rt, ctx, 0.02)
        assert resumed.is_set()  # the wait did not end while the database was down
    finally:
        timer.join()
    assert said.lines[0].startswith("state database unreachable; waiting for it")
    assert said.lines[-1].startswith("state database reachable again after")
    assert len(said.lines) == 2
    assert db.lease.current() is None  # the state answers on the new connection
    db.close()


def test_a_wait_gives_up_after_its_bound(
    halting_pg: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past STATE_WAIT_MINUTES without the database the error stands (fenced out)."""
    db = open_pg_state_db(halting_pg.new_database())
    monkeypatch.setattr(execute, "WAIT_SLICE_MINUTES", 0.005)
    monkeypatch.setattr(execute, "STATE_WAIT_MINUTES", 0.02)
    unused = cast(Any, None)
    rt = Runtime(
        fleet=unused,
        targets=unused,
        db=db,
        guard=unused,
        audit=unused,
        clock=WallClock(),
        maintenance=unused,
        sources={},
        reporter=Said(),
    )
    ctx = Context(row=cast(Any, SimpleNamespace(id="fw-1")), spec=unused)
    halting_pg.halt()
    with pytest.raises(StateUnreachable):
        execute.wait(rt, ctx, 0.005)
    db.close()
