"""Regenerate docs/img/status-page.png: the status page of ``plumb serve`` at 1280x800,
taken in Debian's chromium (Playwright) from a served lab rollout waiting for promotion.

    PYTHONPATH=$PWD .venv/bin/python docs/screenshots.py [OUT.png]

Builds the ORION example with a lab in a temporary directory (as the serve tests do),
starts ``plumb serve`` on it, approves the rollout, waits for the pause before wave 2,
and screenshots ``/``. Needs the ``serve`` extra, playwright and /usr/lib/chromium/chromium.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from reconciler.state.journal import RolloutStatus
from tests.serve.servefleet import wait_until
from tests.serve.statusbrowser import CHROMIUM, ROOT_ARGS, browser_missing
from tests.serve.test_rollouts_serve import approve, fleet_with_spec, rollout_id, status
from tests.serve.test_status_page import start, status_json

OUT = Path(__file__).resolve().parent / "img" / "status-page.png"


def main(out: Path) -> None:
    why = browser_missing()
    if why is not None:
        sys.exit(f"cannot take the screenshot: {why}")
    with tempfile.TemporaryDirectory(prefix="plumb-shot-") as tmp:
        repos = fleet_with_spec(Path(tmp))
        served = start(repos, Path(tmp) / "serve.log")
        try:
            approve(repos)
            rollout = wait_until(lambda: rollout_id(repos), 30, "the rollout to start")
            wait_until(
                lambda: status(repos, rollout) is RolloutStatus.awaiting_promotion, 40, "the pause"
            )
            wait_until(lambda: (status_json(served) or {}).get("promotions_waiting"), 20, "data")
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=str(CHROMIUM), args=ROOT_ARGS, headless=True
                )
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(served.url + "/")
                page.screenshot(path=str(out))
                browser.close()
        finally:
            served.stop()
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
