"""The status page of ``plumb serve`` (``/`` and ``/status.json``) on real parts: a lab
fleet served by a real ``plumb serve`` with a rollout it drives, read over HTTP and in a
real browser (Debian chromium driven by Playwright)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.state.journal import RolloutStatus
from tests.prometheus.server import free_port
from tests.serve.servefleet import PLUMB, Repos, Served, make_repos, wait_until
from tests.serve.statusbrowser import CHROMIUM, ROOT_ARGS, need_browser
from tests.serve.test_rollouts_serve import (
    PACE,
    approve,
    fleet_with_spec,
    plumb,
    rollout_id,
    status,
)

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 1
  interval_seconds: 3600
"""


def start(repos: Repos, log: Path, pace: str = PACE) -> Served:
    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(str(PLUMB), "serve", str(repos.controller)),
                *("--listen", f"127.0.0.1:{port}", "--lab-pace", pace),
            ],
            env={**os.environ, "PLUMB_ACTOR": "controller@test"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, port, log)
    wait_until(lambda: served.get("/healthz")[0] == 200 or process.poll() is not None, 20, "up")
    assert process.poll() is None, log.read_text()[-2000:]
    return served


def fetch(served: Served, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{served.url}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def status_json(served: Served) -> dict[str, Any] | None:
    code, text = fetch(served, "/status.json")
    return json.loads(text) if code == 200 else None


@pytest.fixture
def paused(tmp_path: Path) -> Iterator[tuple[Repos, Served, str]]:
    """A served rollout whose canary passed, waiting for promotion before wave 2."""
    repos = fleet_with_spec(tmp_path)
    served = start(repos, tmp_path / "serve.log")
    try:
        approve(repos)
        rollout = wait_until(lambda: rollout_id(repos), 30, "the approved rollout to start")
        wait_until(
            lambda: status(repos, rollout) is RolloutStatus.awaiting_promotion, 40, "the pause"
        )
        yield repos, served, rollout
    finally:
        served.stop()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_status_json_shows_the_paused_rollout_the_fleet_turns_and_audit(
    paused: tuple[Repos, Served, str],
) -> None:
    """status.json gives the rollout's waves with the canary's decision and numbers, the
    promotion waiting, the last pass's drift counts, the last turns and a verified audit
    chain; no route of the page writes (POST is 405)."""
    _repos, served, rollout = paused

    def paused_data() -> dict[str, Any] | None:
        data = status_json(served)
        waiting = data and data["promotions_waiting"]
        return data if waiting else None

    data = wait_until(paused_data, 20, "the page data of the pause")
    assert data["schema"] == "plumb.status-page/v1" and data["state"]["up"] is True
    assert data["controller"]["leader"] is True
    assert data["promotions_waiting"] == [
        {"rollout": rollout, "wave": 2, "reason": data["rollouts"][0]["reason"]}
    ]
    shown = data["rollouts"][0]
    assert shown["id"] == rollout and shown["status"] == "awaiting_promotion"
    first, second = shown["waves"][:2]
    assert first["status"] == "passed" and first["decision"] == "proceed"
    assert first["evidence"]["measurements"], "the canary's measurements"
    assert second["status"] == "pending" and shown["awaiting_wave"] == 2
    assert "decision PROCEED" in shown["text"]  # plumb rollout status, verbatim
    drift = data["drift"]
    assert set(drift["by_mode"]) == {"warn", "correct"} and drift["window"]["open"] in (True, False)
    assert drift["commit"] == data["controller"]["commit"]
    assert data["turns"] and any("pass at" in line for t in data["turns"] for line in t["did"])
    assert data["audit"]["ok"] is True and data["audit"]["head_seq"] > 0
    assert data["approvals"]["queued"] == []
    assert served.post("/status.json", b"", {}) == 405 and served.post("/", b"", {}) == 405


def test_page_in_a_browser_updates_without_reload_and_fits_desktop_and_phone(
    paused: tuple[Repos, Served, str],
) -> None:
    """In chromium the page shows the waves and the wave waiting for promotion, with no
    console error; after `plumb rollout promote` the controller's turns complete the
    rollout and the page shows it without a reload; it fits 1280x800 and 390x844."""
    need_browser()
    from playwright.sync_api import expect, sync_playwright

    repos, served, rollout = paused
    wait_until(lambda: (status_json(served) or {}).get("promotions_waiting"), 20, "the data")
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ROOT_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("console", lambda m: m.type == "error" and problems.append(m.text))
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.goto(served.url + "/")
            waves = page.locator(f'article[data-rollout="{rollout}"] .wave-status')
            expect(waves.first).to_have_text("passed")
            expect(page.locator('.wave-status[data-wave="2"]')).to_have_text("pending")
            waiting = page.locator("table.waves .badge", has_text="waiting for promotion")
            expect(waiting).to_contain_text(f"plumb rollout promote {rollout} --wave 2")
            for heading in ("Rollouts", "Approvals", "Fleet", "Last turns", "Audit log"):
                expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
            page.evaluate("window.sameDocument = true")

            done = plumb(repos, "rollout", "promote", rollout, ".", "--wave", "2")
            assert done.returncode == 0, done.stderr
            expect(page.locator(".rollout-status").first).to_have_text("completed", timeout=60_000)
            expect(page.locator('.wave-status[data-wave="2"]')).to_have_text("passed")
            assert page.evaluate("window.sameDocument === true"), "the page was reloaded"
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

            iphone = {**p.devices["iPhone 13"], "viewport": {"width": 390, "height": 844}}
            phone = browser.new_context(**iphone)
            small = phone.new_page()
            small.on("console", lambda m: m.type == "error" and problems.append(m.text))
            small.on("pageerror", lambda exc: problems.append(str(exc)))
            small.goto(served.url + "/")
            assert small.viewport_size == {"width": 390, "height": 844}
            for heading in ("Rollouts", "Fleet", "Last turns"):
                expect(small.get_by_role("heading", name=heading, exact=True)).to_be_visible()
            assert small.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            small.wait_for_timeout(6000)  # one refresh from status.json at this width too
            assert small.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            phone.close()
        finally:
            browser.close()
    assert problems == []


def test_token_file_guards_the_page_but_not_the_probes(tmp_path: Path) -> None:
    """With serve.status_token_file, / and /status.json answer 401 without the bearer
    token and 200 with it; /healthz and /metrics stay open."""
    token = tmp_path / "status.token"
    token.write_text("s3cret-token\n")
    token.chmod(0o600)
    repos = make_repos(tmp_path, SERVE + f"  status_token_file: {token}\n")
    served = start(repos, tmp_path / "serve.log")
    try:
        wait_until(lambda: served.get("/readyz")[0] == 200, 30, "the first pass")
        assert fetch(served, "/")[0] == 401 and fetch(served, "/status.json")[0] == 401
        assert fetch(served, "/status.json", "wrong")[0] == 401
        code, page = fetch(served, "/", "s3cret-token")
        assert code == 200 and "Authorization: Bearer TOKEN" in page
        assert fetch(served, "/status.json", "s3cret-token")[0] == 200
        assert served.get("/healthz")[0] == 200 and served.get("/metrics")[0] == 200
    finally:
        served.stop()


def test_a_token_file_others_may_read_is_refused_at_load(tmp_path: Path) -> None:
    """A status token file with mode 0644 stops `plumb serve` before it serves, naming
    plumb.yaml's line and the chmod that fixes it."""
    token = tmp_path / "status.token"
    token.write_text("s3cret-token\n")
    token.chmod(0o644)
    repos = make_repos(tmp_path, SERVE + f"  status_token_file: {token}\n")
    done = subprocess.run(
        [str(PLUMB), "serve", str(repos.controller), "--once", "--listen", "127.0.0.1:0"],
        env={**os.environ, "PLUMB_ACTOR": "controller@test"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "plumb.yaml:" in done.stderr and "has mode 0644" in done.stderr, done.stderr
    assert f"chmod 600 {token}" in done.stderr and "Traceback" not in done.stderr
