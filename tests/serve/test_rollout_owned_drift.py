"""One writer per field, on real parts: a `correct` drift rule on `firmware/*` while a
firmware rollout is approved and driven by `plumb serve`. Neither the approval waiting
to start nor the rollout paused before its second wave lets the drift pass write the
new firmware: not on the rollout's later-wave targets, not on the nodes outside its
selection whose intent changed in the same commit."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.db import open_state_db
from reconciler.state.journal import RolloutStatus
from tests.serve.servefleet import Receiver, git, make_repos, wait_until
from tests.serve.test_rollouts_serve import SPEC, lab_writes, plumb, rollout_id, serve, status

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 1
  interval_seconds: 1
  drift:
    - mode: correct
      paths: ["firmware/*"]
"""
# 8 of the 32 HX8 nodes; the other 24 get the same new bundle in the same commit. At
# most 4 a wave, so the canary (with the riders of its drained gangs) leaves a wave 2.
NARROW = SPEC.replace(
    "select: role=gpu-node", "select: role=gpu-node,rack=gpu-r01|gpu-r02"
).replace("per_wave: 16", "per_wave: 4")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    found.start()
    yield found
    found.stop()


def test_drift_pass_never_writes_what_a_rollout_owns(tmp_path: Path, receiver: Receiver) -> None:
    """The approval is queued before the controller runs, so its first pass already
    sees the new firmware everywhere as the approved rollout's; once the rollout pauses
    after its canary, the later waves' targets (`target`) and the 24 unselected nodes
    (`carried`) stay owned by it: only the canary is written, and the drift is in the
    log, `/metrics` and the decision record as the rollout's."""
    repos = make_repos(tmp_path, SERVE)
    groups = (repos.author / "intent" / "groups.yaml").read_text()
    repos.push(
        "intent/groups.yaml",
        groups.replace("bundle: hx8-2026.09", "bundle: hx8-2026.06"),
        "HX8 nodes to hx8-2026.06",
    )
    repos.push("rollouts/hx8-serve.yaml", NARROW, "rollout spec hx8-serve")
    git(repos.controller, "pull", "-q", "--ff-only")
    approved = plumb(repos, "rollout", "approve", "hx8-serve", ".")
    assert approved.returncode == 0, approved.stderr
    log = tmp_path / "serve.log"
    served = serve(repos, receiver, log)
    try:
        rollout = wait_until(lambda: rollout_id(repos), 30, "the approved rollout to start")
        wait_until(
            lambda: status(repos, rollout) is RolloutStatus.awaiting_promotion, 60, "the pause"
        )
        paused = time.time()
        wait_until(
            lambda: (served.metric("plumb_last_reconcile_timestamp_seconds") or 0) > paused + 1,
            30,
            "a drift pass after the pause",
        )
        owned = served.metric("plumb_drift_owned_fields", rollout=rollout)
        correcting = served.metric("plumb_drift_fields", mode="correct")
    finally:
        served.stop()
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        targets = db.journal.targets(rollout)
        decisions = [
            r.detail
            for r in db.audit.records(500)
            if r.kind.value == "decision" and r.detail.get("serve") == "drift"
        ]
        corrections = [r for r in db.audit.records(500) if r.detail.get("serve") == "correct"]
    canary = {t.device for t in targets if t.wave == 1}
    paths = {frozenset(t.intended) for t in targets}
    assert len(targets) == 8 and len(paths) == 1
    per_node = len(next(iter(paths)))
    assert lab_writes(repos).keys() == canary  # nothing but the rollout's own wave
    assert corrections == []
    expected = (32 - len(canary)) * per_node  # later-wave targets and the other 24 nodes
    assert owned == correcting == expected
    assert decisions[0]["owned"] == {"hx8-serve (approval 1)": 32 * per_node}
    assert decisions[-1]["owned"] == {rollout: expected}
    text = log.read_text()
    devices = 32 - len(canary)
    assert f"drift owned by rollout {rollout}: {expected} field(s) on {devices} device(s)" in text
    assert "Traceback" not in text
