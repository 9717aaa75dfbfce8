"""Which fleet repo a command works on: its own path argument, else ``-C/--repo`` (or
``$PLUMB_REPO``), else the nearest plumb.yaml upward from the working directory."""

from __future__ import annotations

import contextlib
from pathlib import Path

from typer.testing import CliRunner, Result

from plumb.cli import app
from tests.fleetcopy import FleetCopy


def _plumb(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args), env={"PLUMB_REPO": "", **(env or {})})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_repo_option_names_the_fleet_for_any_command(orion: FleetCopy, tmp_path: Path) -> None:
    """`plumb -C PATH` works from a directory that is no fleet repo."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shown = _plumb(elsewhere, "-C", str(orion.path), "lease", "show")
    assert (shown.exit_code, shown.stdout.strip()) == (0, "no lease held"), shown.stderr
    listed = _plumb(elsewhere, "--repo", str(orion.path), "rollout", "status")
    assert listed.exit_code == 1
    assert "no rollouts recorded yet" in listed.stderr
    assert (orion.path / ".plumb" / "plumb.db").exists()
    assert not (elsewhere / ".plumb").exists()


def test_plumb_repo_in_the_environment_names_the_fleet(orion: FleetCopy, tmp_path: Path) -> None:
    """$PLUMB_REPO does what -C does."""
    done = _plumb(tmp_path, "validate", env={"PLUMB_REPO": str(orion.path)})
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("ok: orion: ")


def test_the_fleet_is_found_upward_from_a_subdirectory(orion: FleetCopy) -> None:
    """Inside a fleet repo's subdirectory, commands find its plumb.yaml upward."""
    done = _plumb(orion.path / "intent", "validate")
    assert done.exit_code == 0, done.stderr
    shown = _plumb(orion.path / "inventory" / "devices", "lease", "show")
    assert (shown.exit_code, shown.stdout.strip()) == (0, "no lease held"), shown.stderr
    assert (orion.path / ".plumb" / "plumb.db").exists()


def test_a_path_given_to_the_command_wins(orion: FleetCopy, tmp_path: Path) -> None:
    """The positional fleet path still works, and wins over -C."""
    done = _plumb(tmp_path, "-C", str(tmp_path / "nowhere"), "validate", str(orion.path))
    assert done.exit_code == 0, done.stderr


def test_a_rollout_id_is_not_taken_for_the_fleet_without_a_hint(
    orion: FleetCopy, tmp_path: Path
) -> None:
    """`plumb rollout status orion` outside the repo says how to name the fleet."""
    done = _plumb(orion.path.parent, "rollout", "status", "orion")
    assert done.exit_code == 2
    assert "is not a fleet repo" in done.stderr
    assert "`plumb -C PATH ...` or PLUMB_REPO=PATH" in done.stderr
