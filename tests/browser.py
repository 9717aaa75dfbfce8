"""Debian's chromium driven by Playwright for Python, for tests that need a real
browser (never `playwright install`: the system browser is used), and Mermaid (from the
npm registry, into a cache folder once) for the diagrams plumb writes for GitHub and
GitLab. Unavailable pieces skip the test, except under CI=true, where they fail it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/lib/chromium/chromium")
MERMAID_VERSION = "11"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "plumb-tests"


def unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (CI=true: ./dev test installs it)")
    pytest.skip(why)


def chromium_path() -> Path:
    if not CHROMIUM.is_file():
        unavailable(f"no {CHROMIUM} (Debian package chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("no playwright (pip install playwright)")
    return CHROMIUM


def mermaid_js() -> Path:
    """mermaid.min.js of Mermaid 11, installed from the npm registry on first use."""
    folder = CACHE / f"mermaid-{MERMAID_VERSION}"
    script = folder / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
    if script.is_file():
        return script
    npm = shutil.which("npm")
    if npm is None:
        unavailable("no npm to install Mermaid with")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", f"mermaid@{MERMAID_VERSION}"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0 or not script.is_file():
        unavailable(f"npm could not install mermaid: {done.stderr.strip()[:300]}")
    return script
