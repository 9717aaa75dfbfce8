"""Approvals queue behind the active rollout, on real parts: one rollout is active per
fleet, and the start approvals that arrive meanwhile wait (journal, `rollout list`,
`/metrics`) and start in approval order once it is no longer active."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.db import open_state_db
from reconciler.state.journal import RolloutStatus
from reconciler.state.journal_approvals import ApprovalState
from tests.serve.servefleet import Receiver, Repos, make_repos, wait_until
from tests.serve.test_rollouts_serve import SERVE, SPEC, plumb, serve, status

pytestmark = pytest.mark.slow

NAMES = ("hx8-a", "hx8-b", "hx8-c")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.start()
    yield found
    found.stop()


def rollouts(repos: Repos) -> dict[str, RolloutStatus]:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        return {r.spec_name: r.status for r in db.journal.all()}


def approvals(repos: Repos) -> dict[str, ApprovalState]:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        return {a.spec_path: a.state for a in db.approvals.rows()}


def approve(repos: Repos, name: str) -> None:
    done = plumb(repos, "rollout", "approve", name, ".")
    assert done.returncode == 0, done.stderr


def test_approvals_wait_for_the_active_rollout_and_start_in_order(
    tmp_path: Path, receiver: Receiver
) -> None:
    """While `hx8-a` waits for promotion, the approvals of `hx8-b` and `hx8-c` stay
    pending and are listed in that order; when `hx8-a` is aborted, `hx8-b` starts
    and `hx8-c` waits for it in turn."""
    repos = make_repos(tmp_path, SERVE)
    groups = (repos.author / "intent" / "groups.yaml").read_text()
    repos.push(
        "intent/groups.yaml",
        groups.replace("bundle: hx8-2026.09", "bundle: hx8-2026.06"),
        "HX8 nodes to hx8-2026.06",
    )
    for name in NAMES:
        repos.push(f"rollouts/{name}.yaml", SPEC.replace("hx8-serve", name), f"spec {name}")
    log = tmp_path / "serve.log"
    served = serve(repos, receiver, log)
    try:
        last = repos.controller / "rollouts" / "hx8-c.yaml"
        wait_until(last.exists, 20, "the fetch")
        approve(repos, "hx8-a")
        wait_until(lambda: rollouts(repos).get("hx8-a"), 30, "hx8-a to start")
        approve(repos, "hx8-b")
        approve(repos, "hx8-c")
        wait_until(
            lambda: rollouts(repos).get("hx8-a") is RolloutStatus.awaiting_promotion,
            60,
            "hx8-a's pause",
        )
        told = "approval 3 of rollouts/hx8-c.yaml: waits"
        wait_until(lambda: told in log.read_text(), 20, "a turn")
        assert rollouts(repos).keys() == {"hx8-a"}
        assert approvals(repos) == {
            "rollouts/hx8-a.yaml": ApprovalState.taken,
            "rollouts/hx8-b.yaml": ApprovalState.pending,
            "rollouts/hx8-c.yaml": ApprovalState.pending,
        }
        assert served.metric("plumb_rollout_approvals_pending") == 2
        listed = plumb(repos, "rollout", "list", ".", "--format", "json")
        queue = json.loads(listed.stdout)["queued"]
        assert [(q["place"], q["spec"]) for q in queue] == [
            (1, "rollouts/hx8-b.yaml"),
            (2, "rollouts/hx8-c.yaml"),
        ]
        assert (
            "1. rollouts/hx8-b.yaml approved by alice@test"
            in plumb(repos, "rollout", "list", ".").stdout
        )

        rollout_a = next(r for r in _ids(repos) if r.startswith("hx8-a"))
        done = plumb(repos, "rollout", "abort", rollout_a, ".", "--reason", "next one")
        assert done.returncode == 0, done.stderr
        wait_until(lambda: rollouts(repos).get("hx8-b"), 30, "hx8-b to start")
        wait_until(lambda: served.metric("plumb_rollout_approvals_pending") == 1, 10, "metrics")
        assert status(repos, rollout_a) is RolloutStatus.aborted
        assert rollouts(repos).keys() == {"hx8-a", "hx8-b"}
        assert approvals(repos)["rollouts/hx8-c.yaml"] is ApprovalState.pending
    finally:
        served.stop()
    assert "Traceback" not in log.read_text()


def _ids(repos: Repos) -> list[str]:
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        return [r.id for r in db.journal.all()]
