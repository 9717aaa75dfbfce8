"""``plumb serve`` end to end on real parts: a bare git remote the test pushes to, the
controller's clone with a lab, a signed push webhook, a loopback notification
receiver, and a real Prometheus scraping ``/metrics``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.audit import AuditKind
from reconciler.state.db import open_state_db
from serve.webhook import github_signature
from tests.prometheus.server import start_prometheus
from tests.serve.servefleet import (
    Receiver,
    inject_drift,
    lab_values,
    make_repos,
    start_serve,
    wait_until,
)

pytestmark = pytest.mark.slow

SECRET = "push-secret"
DENY_ALWAYS = """
    - kind: deny
      schedule: "* * * * *"
      duration_minutes: 1
"""
SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: correct
      owners: [intent/qos.yaml]
    - mode: warn
  windows:{windows}
  notify:
    - url_env: TEST_NOTIFY_URL
    - url_env: TEST_SLACK_URL
      format: slack
      events: [drift]
"""
QOS, MTU = "qos/ecn/3/kmin_kb", "interfaces/Ethernet1/mtu"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(fail_first=1)
    found.start()
    yield found
    found.stop()


def test_drift_is_reported_outside_a_window_and_corrected_once_git_opens_it(
    tmp_path: Path, receiver: Receiver
) -> None:
    """Under an always-open deny window both drifted fields are only reported (and
    notified, after one failed delivery); a pushed commit dropping the window, announced
    by a signed webhook, lets the controller correct the qos field (mode correct) and
    leave the MTU field (mode warn); Prometheus scrapes the figures."""
    repos = make_repos(tmp_path, SERVE.format(windows=DENY_ALWAYS))
    inject_drift(repos.controller, "leaf-r0", {QOS: 150, MTU: 9000})
    url = f"http://127.0.0.1:{receiver.server.server_address[1]}"
    env = {
        "TEST_NOTIFY_URL": f"{url}/json",
        "TEST_SLACK_URL": f"{url}/slack",
        "PLUMB_WEBHOOK_SECRET": SECRET,
    }
    served = start_serve(repos.controller, env, tmp_path / "serve.log")
    prometheus = start_prometheus(tmp_path, {"plumb": served.port})
    try:
        wait_until(lambda: served.get("/readyz")[0] == 200, 30, "the first pass")
        assert served.metric("plumb_drift_fields", mode="correct") == 1
        assert served.metric("plumb_drift_fields", mode="warn") == 1
        assert served.metric("plumb_sync_window_open") == 0
        drift = wait_until(lambda: receiver.events("/json"), 15, "the drift notice")[0]
        assert drift["event"] == "drift" and drift["fleet"] == "orion"
        assert {(n["device"], n["path"]) for n in drift["detail"]["new"]} == {
            ("leaf-r0", QOS),
            ("leaf-r0", MTU),
        }
        values = {n["path"]: (n["observed"], n["intended"]) for n in drift["detail"]["new"]}
        assert values[QOS] == (150, 200)  # JSON values as the device and intent have them
        assert values[MTU][0] == 9000 and isinstance(values[MTU][1], int)
        assert receiver.refused == 1  # the first try failed, the retry was delivered
        slack = wait_until(lambda: receiver.events("/slack"), 15, "the slack notice")[0]
        assert slack["text"].startswith("plumb orion: drift:") and slack["blocks"]
        assert lab_values(repos.controller, "leaf-r0")[QOS] == 150  # denied: not corrected

        head = repos.push("plumb.yaml", _without_window(repos.author), "open the window")
        body = json.dumps({"ref": "refs/heads/main", "after": head}).encode()
        forged = {"X-Hub-Signature-256": "sha256=" + "0" * 64, "X-GitHub-Event": "push"}
        assert served.post("/webhook", body, forged) == 401
        signed = {"X-Hub-Signature-256": github_signature(SECRET.encode(), body)}
        assert served.post("/webhook", body, {**signed, "X-GitHub-Event": "push"}) == 202

        wait_until(lambda: lab_values(repos.controller, "leaf-r0")[QOS] == 200, 20, "the fix")
        assert lab_values(repos.controller, "leaf-r0")[MTU] == 9000  # warn: left alone
        wait_until(lambda: served.metric("plumb_drift_fields", mode="correct") == 0, 10, "0")
        assert served.metric("plumb_sync_window_open") == 1
        assert served.metric("plumb_intent_commit_info", commit=head) == 1
        wait_until(lambda: prometheus.value('plumb_drift_fields{mode="warn"}') == 1, 15, "a scrape")
        assert prometheus.value("plumb_audit_head_seq") is not None
    finally:
        prometheus.stop()
        served.stop()
    with open_state_db(repos.controller / ".plumb" / "plumb.db") as db:
        writes = db.audit.records(100, kind=AuditKind.write)
        assert {(w.device, w.field) for w in writes} == {("leaf-r0", QOS)}
        assert db.lease.current() is None
        assert db.audit.verify().ok
    logged = (tmp_path / "serve.log").read_text()
    assert "applied: 1 applied" in logged  # counts as words ...
    assert "{'" not in logged and "{\"" not in logged  # ... never a Python dict


def _without_window(author: Path) -> str:
    text = (author / "plumb.yaml").read_text()
    assert DENY_ALWAYS in text
    return text.replace(f"  windows:{DENY_ALWAYS}", "")
