"""The command line's own surface, as a user's shell sees it: --version, shell
completion, and help that shows no value for a boolean flag."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from plumb import __version__

PLUMB = Path(sys.executable).with_name("plumb")


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PLUMB), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        check=False,
    )


def test_version_prints_the_package_version() -> None:
    """`plumb --version` prints `plumb <version>` and exits 0."""
    done = _run("--version")
    assert (done.returncode, done.stdout) == (0, f"plumb {__version__}\n")


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [("plumb pl", 1, "plan"), ("plumb lab fa", 2, "fault"), ("plumb apply --exp", 2, "--expand")],
)
def test_bash_completion_completes_commands_and_options(
    words: str, cword: int, expected: str
) -> None:
    """The completion protocol bash's script drives offers commands and options."""
    env = {"_PLUMB_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = _run(env=env)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout.split()


def test_show_completion_prints_a_bash_script_that_bash_accepts(tmp_path: Path) -> None:
    """`--show-completion bash` prints a script bash can source, registering `plumb`."""
    done = _run("--show-completion", "bash")
    assert done.returncode == 0, done.stderr
    script = tmp_path / "plumb.bash"
    script.write_text(done.stdout)
    check = subprocess.run(
        ["bash", "-c", f"source {script} && complete -p plumb"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    assert "plumb" in check.stdout


@pytest.mark.parametrize(
    "command", [("apply",), ("plan",), ("rollback",), ("validate",), ("lab", "init"), ()]
)
def test_help_shows_no_value_for_boolean_flags(command: tuple[str, ...]) -> None:
    """A boolean flag takes no value, so help shows none (`--dry-run`, not `<bool>`)."""
    done = _run(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert "--help" in done.stdout and "<bool>" not in done.stdout


def test_summary_json_counts_what_the_fleet_declares() -> None:
    """`summary -f json` counts ORION's devices by role, GPUs and cables as loaded."""
    from tests.fleetcopy import ORION, FleetCopy

    fleet = FleetCopy(ORION).load()
    done = _run("summary", str(ORION), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["fleet"] == "orion" and doc["gpus"] == sum(d.gpus for d in fleet.devices.values())
    assert doc["devices"]["gpu-node"] == 32 and sum(doc["devices"].values()) == len(fleet.devices)
    assert sum(doc["links"].values()) == len(fleet.links)


def test_a_suggested_command_names_the_fleet_repo(tmp_path: Path) -> None:
    """`fleet_arg`: `.` inside the repo, a relative path below, an absolute one outside,
    quoted for the shell."""
    from plumb.app import fleet_arg

    repo = tmp_path / "my fleet"
    (repo / "sub").mkdir(parents=True)
    here = Path.cwd()
    try:
        os.chdir(repo)
        assert fleet_arg(repo) == "."
        os.chdir(tmp_path)
        assert fleet_arg(repo) == "'my fleet'"
        os.chdir(repo / "sub")
        assert fleet_arg(repo) == shlex.quote(str(repo.resolve()))
    finally:
        os.chdir(here)
