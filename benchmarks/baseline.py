"""Side-by-side measurements: the working tree against an earlier commit.

:func:`checkout` exports a commit's tracked files (``git archive``) into a temporary
folder, so a benchmark can run the same measurement on both trees in one run, each
in a fresh interpreter with that tree first on ``sys.path``. :func:`load_average`
is printed beside every figure: the machine is shared.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """The tracked files of ``rev`` in a temporary folder (removed afterwards)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True, capture_output=True
    ).stdout
    with tempfile.TemporaryDirectory(prefix="plumb-base-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def describe(rev: str) -> str:
    """``rev`` as a short hash and subject, for the printed table."""
    return subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s", rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()[:72]


def load_average() -> str:
    """The 1-minute load average now, as printed beside a figure."""
    return f"{os.getloadavg()[0]:.2f}"
