"""Drift is told once, durably: the told set lives in the state database, so a
controller killed and started again does not tell the same drift twice; a drift whose
value changed is told again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.serve.servefleet import (
    Receiver,
    Served,
    inject_drift,
    make_repos,
    start_serve,
    wait_until,
)

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: warn
  notify:
    - url_env: TEST_NOTIFY_URL
"""
QOS = "qos/ecn/3/kmin_kb"


def _passes(served: Served) -> float:
    return served.metric("plumb_reconcile_passes_total", result="ok") or 0


def _notices(receiver: Receiver) -> list[dict[str, Any]]:
    """Notices received, a repeated delivery (same outbox id) counted once, by id."""
    return list({n["id"]: n for n in receiver.events("/json")}.values())


def test_a_restart_does_not_tell_the_same_drift_again(tmp_path: Path) -> None:
    """Notice, SIGKILL, restart, passes: no second notice; the value moves: a new one."""
    repos = make_repos(tmp_path, SERVE)
    inject_drift(repos.controller, "leaf-r0", {QOS: 150})
    receiver = Receiver()
    env = {"TEST_NOTIFY_URL": f"{receiver.start()}/json"}
    served = start_serve(repos.controller, env, tmp_path / "a.log")
    try:
        wait_until(lambda: receiver.events("/json"), 20, "the drift notice")
        served.kill()
        served = start_serve(repos.controller, env, tmp_path / "b.log")
        wait_until(lambda: _passes(served) >= 3, 30, "three passes after the restart")
        # delivery is at least once (a kill between the 2xx and marking it delivered
        # sends it again, same id): one notice however many deliveries
        assert len(_notices(receiver)) == 1

        inject_drift(repos.controller, "leaf-r0", {QOS: 160})
        wait_until(lambda: len(_notices(receiver)) == 2, 20, "the changed drift's notice")
        new = _notices(receiver)[-1]["detail"]["new"]
        assert [(n["device"], n["path"]) for n in new] == [("leaf-r0", QOS)]
    finally:
        served.stop()
        receiver.stop()
