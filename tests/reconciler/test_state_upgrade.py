"""``plumb state upgrade`` as an operator runs it: it brings the fleet's state database,
SQLite or PostgreSQL as ``plumb.yaml`` says, to this plumb's schema version and says
from which; it is a no-op when current; and it fails in one line, exit 2, when the
database is newer than this plumb or cannot be reached."""

from __future__ import annotations

import sqlite3

import pytest

from reconciler.state.version import HEAD
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import run_plumb
from tests.statelegacy import build_legacy

SHARED_STATE = "\nstate:\n  backend: postgresql\n"


def test_an_older_file_is_upgraded_then_left_alone(orion: FleetCopy) -> None:
    """A version-3 plumb.db is upgraded to the head, saying so; the second run changes
    nothing, and the state is usable."""
    path = orion.path / ".plumb" / "plumb.db"
    path.parent.mkdir()
    build_legacy(str(path), 3)
    done = run_plumb(orion.path, "state", "upgrade")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"upgraded {path}: schema version 3 -> {HEAD}\n"
    again = run_plumb(orion.path, "state", "upgrade")
    assert again.returncode == 0, again.stderr
    assert again.stdout == (f"{path} is at schema version {HEAD}, the current one: nothing to do\n")
    assert run_plumb(orion.path, "freeze", "--reason", "INC-1").returncode == 0


def test_a_fleet_without_state_gets_a_fresh_schema(orion: FleetCopy) -> None:
    """With no plumb.db yet, the upgrade creates it at the head version."""
    done = run_plumb(orion.path, "state", "upgrade")
    assert done.returncode == 0, done.stderr
    assert f"schema version {HEAD}" in done.stdout and "created" in done.stdout
    assert (orion.path / ".plumb" / "plumb.db").is_file()


def test_a_newer_file_is_refused_in_one_line(orion: FleetCopy) -> None:
    """A plumb.db a newer plumb upgraded: exit 2 and one line saying to upgrade plumb."""
    assert run_plumb(orion.path, "state", "upgrade").returncode == 0
    conn = sqlite3.connect(orion.path / ".plumb" / "plumb.db")
    conn.execute("UPDATE plumb_revision SET version_num = '0007'")
    conn.commit()
    conn.close()
    done = run_plumb(orion.path, "state", "upgrade")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: state database schema version 7 is newer than this plumb knows ({HEAD});"
        " upgrade plumb\n"
    )


def test_a_shared_postgresql_database_is_upgraded(
    orion: FleetCopy, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``state: postgresql`` the database the URL names is upgraded, and the URL is
    shown as it was given (it holds no password here)."""
    orion.append("plumb.yaml", SHARED_STATE)
    monkeypatch.setenv("PLUMB_STATE_URL", pg_url)
    build_legacy(pg_url, 4)
    done = run_plumb(orion.path, "state", "upgrade")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"upgraded {pg_url}: schema version 4 -> {HEAD}\n"
    again = run_plumb(orion.path, "state", "upgrade")
    assert "nothing to do" in again.stdout


def test_an_unreachable_database_is_one_line_without_its_password(
    orion: FleetCopy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that does not answer: exit 2, one line naming the URL, password hidden."""
    orion.append("plumb.yaml", SHARED_STATE)
    monkeypatch.setenv("PLUMB_STATE_URL", "postgresql://plumb:s3cret@127.0.0.1:9/fleet")
    done = run_plumb(orion.path, "state", "upgrade")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(
        "error: state database postgresql://plumb:***@127.0.0.1:9/fleet cannot be reached"
    )
    assert done.stderr.rstrip().endswith(
        ": nothing was upgraded; check the database and its network, then run the command again"
    )
    assert "s3cret" not in done.stderr + done.stdout


def test_a_directory_that_is_no_fleet_repo_is_refused(orion: FleetCopy) -> None:
    """Without plumb.yaml there is no state to name: exit 2, and nothing is created."""
    (orion.path / "plumb.yaml").unlink()
    done = run_plumb(orion.path, "state", "upgrade", str(orion.path))
    assert done.returncode == 2
    assert done.stderr == f"error: {orion.path} is not a fleet repo: no plumb.yaml\n"
    assert not (orion.path / ".plumb").exists()
