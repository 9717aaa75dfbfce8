"""A real git repository holding a copy of ORION at ``fleets/orion``: a ``main`` branch
with the example as is, and one branch per change under review. ``plumb`` runs
in-process through typer's CliRunner."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from plumb.cli import app
from tests.fleetcopy import FleetCopy, copy_orion

FLEET_DIR = "fleets/orion"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fleet Operator",
    "GIT_AUTHOR_EMAIL": "ops@example.com",
    "GIT_COMMITTER_NAME": "Fleet Operator",
    "GIT_COMMITTER_EMAIL": "ops@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def plumb(cwd: Path, *args: str) -> Run:
    """Run the typer app in-process from ``cwd``; an exception other than an exit (a
    traceback for the user) fails the test."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


@dataclass(frozen=True)
class Reviewed:
    """One `plumb review` run: its exit code, the Markdown it printed, and the same review
    in every other format (written with --report)."""

    exit_code: int
    markdown: str
    stderr: str
    reports: dict[str, str]

    @property
    def json(self) -> Any:
        return json.loads(self.reports["json"])


FORMATS = ("json", "sarif", "junit", "github")
_REVIEWED: dict[tuple[Path, str, str], Reviewed] = {}


@dataclass(frozen=True)
class GitFleet:
    top: Path

    @property
    def fleet(self) -> FleetCopy:
        return FleetCopy(self.top / FLEET_DIR)

    def git(self, *args: str) -> str:
        env = {**os.environ, **GIT_ENV}
        done = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", *args],
            cwd=self.top,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def branch(self, name: str, edit: Callable[[FleetCopy], None], *, start: str = "main") -> str:
        """Commit ``edit`` on a new branch ``name`` from ``start``; back on main after."""
        self.git("checkout", "-q", "-b", name, start)
        edit(self.fleet)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"change: {name}")
        self.git("checkout", "-q", "main")
        return name

    def line_at(self, rev: str, relative: str, text: str) -> int:
        """1-based number of the first line containing ``text`` in a fleet file at ``rev``."""
        content = self.git("show", f"{rev}:{FLEET_DIR}/{relative}")
        for number, line in enumerate(content.splitlines(), start=1):
            if text in line:
                return number
        raise AssertionError(f"{text!r} not in {relative} at {rev}")

    def review(self, *args: str) -> Run:
        """``plumb review`` of the fleet directory, from the repository top."""
        return plumb(self.top, "review", FLEET_DIR, *args)

    def reviewed(self, base: str, head: str) -> Reviewed:
        """The review of ``base..head`` in every format, run once per repository."""
        key = (self.top, base, head)
        if key not in _REVIEWED:
            out = self.top.parent / "reports" / f"{base}..{head}"
            out.mkdir(parents=True, exist_ok=True)
            reports = [f"--report={f}={out / f}" for f in FORMATS]
            done = self.review("--base", base, "--head", head, *reports)
            texts = {f: (out / f).read_text() for f in FORMATS if (out / f).exists()}
            _REVIEWED[key] = Reviewed(done.exit_code, done.stdout, done.stderr, texts)
        return _REVIEWED[key]


def make_git_fleet(root: Path) -> GitFleet:
    top = root / "repo"
    (top / "fleets").mkdir(parents=True)
    copy_orion(top / "fleets")
    repo = GitFleet(top)
    repo.git("init", "-q", "-b", "main")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "ORION as in examples/")
    return repo


def line_of(file: Path, text: str) -> int:
    """1-based number of the first line of ``file`` containing ``text``."""
    for number, line in enumerate(file.read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {file}")
