"""A correction that cannot be proved safe blocks its own devices, not the fleet: on
the lab fleet, with the real state database and outbox, the controller corrects what
is safe on its own, and reports what is blocked per device (log, /metrics, audit, one
notice). An intent that fails validation blocks every correction."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.fleet import Fault, FaultKind
from reconciler.state.audit import AuditKind
from serve.controller import Controller
from tests.serve.servefleet import Repos, add_lab_fault, inject_drift, lab_values, make_repos

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: correct
  notify:
    - url_env: TEST_NOTIFY_URL
"""
QOS, MTU = "qos/ecn/3/kmin_kb", "interfaces/Ethernet1/mtu"


def _metric(controller: Controller, name: str, **labels: str) -> float | None:
    for line in controller.metrics.render().decode().splitlines():
        if line.startswith(f"{name}{{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def _drift_notices(controller: Controller) -> list[dict[str, object]]:
    return [p.payload for p in controller.db.outbox.due(100) if p.event == "drift"]


@pytest.fixture
def repos(tmp_path: Path) -> Repos:
    found = make_repos(tmp_path, SERVE)
    inject_drift(found.controller, "leaf-r0", {QOS: 150})  # safe alone
    inject_drift(found.controller, "leaf-r1", {MTU: 9000})  # faces gpu-n01's eth1
    add_lab_fault(found.controller, Fault("gpu-n01", FaultKind.unreachable))
    return found


def test_a_correction_facing_an_unobserved_peer_blocks_only_its_device(
    repos: Repos, capsys: pytest.CaptureFixture[str]
) -> None:
    """gpu-n01 cannot be observed, so the whole plan is refused; leaf-r0's qos field is
    still corrected, leaf-r1's MTU toward gpu-n01 is blocked and said so everywhere;
    a second pass with nothing new tells nothing more."""
    controller = Controller(repos.controller, "controller@test")
    try:
        controller.turn()
        assert controller.status.last_error is None
        assert lab_values(repos.controller, "leaf-r0")[QOS] == 200
        assert lab_values(repos.controller, "leaf-r1")[MTU] == 9000
        assert _metric(controller, "plumb_drift_blocked", reason="unobserved_peer") == 1
        assert _metric(controller, "plumb_drift_blocked", reason="unsafe_order") == 0
        log = capsys.readouterr().err
        assert "correction blocked on leaf-r1 (unobserved_peer)" in log
        assert "gpu-n01 could not be observed" in log
        (notice,) = _drift_notices(controller)
        detail = notice["detail"]
        assert isinstance(detail, dict)
        assert detail["correcting"] == {"leaf-r0": [QOS]}
        assert detail["blocked"]["leaf-r1"]["kind"] == "unobserved_peer"
        decisions = controller.db.audit.records(50, kind=AuditKind.decision)
        assert any("leaf-r1" in r.detail.get("blocked", {}) for r in decisions)

        controller._next_pass = 0.0
        controller.turn()
        assert len(_drift_notices(controller)) == 1  # still blocked, nothing new to tell
        assert lab_values(repos.controller, "leaf-r1")[MTU] == 9000
    finally:
        controller.close()


def test_an_intent_that_fails_validation_blocks_every_correction(repos: Repos) -> None:
    """A pushed commit breaking an MTU policy (9200 + 22 > 9214): nothing is corrected,
    every drifted device is blocked as intent_invalid until a fixed commit."""
    mtu = (repos.author / "intent" / "mtu.yaml").read_text()
    repos.push("intent/mtu.yaml", mtu.replace("host: 9000 ", "host: 9200 ", 1), "too big")
    controller = Controller(repos.controller, "controller@test")
    try:
        controller.turn()
        assert lab_values(repos.controller, "leaf-r0")[QOS] == 150
        assert (_metric(controller, "plumb_drift_blocked", reason="intent_invalid") or 0) >= 2
        assert _metric(controller, "plumb_reconcile_passes_total", result="failed") == 1
        (notice,) = _drift_notices(controller)
        summary = notice["summary"]
        assert isinstance(summary, str) and "correction blocked" in summary
        detail = notice["detail"]
        assert isinstance(detail, dict)
        assert "the intent fails validation" in detail["blocked"]["leaf-r0"]["reason"]

        repos.push("intent/mtu.yaml", mtu, "fixed")
        controller._next_poll = controller._next_pass = 0.0
        controller.turn()
        assert lab_values(repos.controller, "leaf-r0")[QOS] == 200
        assert _metric(controller, "plumb_drift_blocked", reason="intent_invalid") == 0
    finally:
        controller.close()
