"""No tracked file carries an unresolved merge: conflict markers would ship broken
configuration (a systemd unit, a manifest) that no parser of that file runs on here."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_tracked_file_has_conflict_markers() -> None:
    found = subprocess.run(
        ["git", "grep", "-n", "-I", "-E", "^(<<<<<<<|>>>>>>>) "],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 1, found.stdout  # 1: nothing found
