"""A real browser for the status page's tests and docs/screenshots.py: Debian's chromium
driven by Playwright for Python. Never ``playwright install``: the Debian binary is used."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/lib/chromium/chromium")  # the real binary; /usr/bin/chromium wraps it
ROOT_ARGS = ["--no-sandbox"] if os.geteuid() == 0 else []  # root: the sandbox will not start


def browser_missing() -> str | None:
    """Why no browser test can run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright (Python) is not installed"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def need_browser() -> None:
    """Skip without a browser, except under CI=true where it must be there."""
    why = browser_missing()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {why}")
    pytest.skip(why)
