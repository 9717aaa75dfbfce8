"""The command-line validators the deployment files are checked with (``promtool``
from Debian's ``prometheus``, ``systemd-analyze`` from ``systemd``; ``./dev test``
installs both): a missing one skips its tests, except under ``CI=true``, where it fails
them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"


def require(tool: str, package: str) -> str:
    """The path of ``tool``; a skip (a failure under CI) when it is not installed."""
    found = shutil.which(tool)
    if found is None:
        reason = f"{tool} is not installed (Debian package {package})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}: required under CI", pytrace=False)
        pytest.skip(reason)
    return found
