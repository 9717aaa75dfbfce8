"""The state database's problems as a user meets them on the command line: a clear
message and exit 2 (never "internal error"), and read-only commands that keep working
on a read-only checkout."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from reconciler.state.db import open_state_db
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import PLUMB, LabFleet, plumb_env, run_plumb

UNSHARE = shutil.which("unshare")


def _state(root: Path) -> Path:
    return root / ".plumb" / "plumb.db"


def test_an_empty_state_database_is_refused_with_exit_2(orion: FleetCopy) -> None:
    """A 0-byte plumb.db stops every command that needs it with exit 2, and stays 0 bytes
    (a frozen fleet is never silently unfrozen by a fresh file)."""
    _state(orion.path).parent.mkdir()
    _state(orion.path).write_bytes(b"")
    for args in (("lease", "show"), ("freeze", "--reason", "x"), ("audit", "verify")):
        done = run_plumb(orion.path, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert "is damaged (the file is empty (0 bytes))" in done.stderr
        assert "Restore it from a backup" in done.stderr
        assert "internal error" not in done.stderr
    assert _state(orion.path).stat().st_size == 0


def test_a_malformed_state_database_exits_2(orion: FleetCopy) -> None:
    """A plumb.db that is not a database is named, with what to do; exit 2."""
    _state(orion.path).parent.mkdir()
    _state(orion.path).write_bytes(b"\x00garbage" * 4096)
    done = run_plumb(orion.path, "lease", "show")
    assert done.returncode == 2
    assert f"error: state database {_state(orion.path)} is damaged" in done.stderr


def test_a_newer_schema_exits_2_naming_the_upgrade(orion: FleetCopy) -> None:
    """A state database migrated by a newer plumb is refused with exit 2."""
    open_state_db(_state(orion.path)).close()
    conn = sqlite3.connect(_state(orion.path))
    conn.execute("UPDATE plumb_revision SET version_num = '0999'")
    conn.commit()
    conn.close()
    done = run_plumb(orion.path, "audit", "show")
    assert done.returncode == 2
    assert "schema version 999 is newer than this plumb knows" in done.stderr
    assert "upgrade plumb" in done.stderr


def test_audit_verify_names_a_row_that_is_not_text(lab: LabFleet) -> None:
    """A tampered audit row holding bytes that are not UTF-8: `audit verify` names the
    row and exits 1, no crash."""
    assert run_plumb(lab.root, "freeze", "--reason", "hold").returncode == 0
    assert run_plumb(lab.root, "unfreeze").returncode == 0
    conn = sqlite3.connect(_state(lab.root))
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET detail = CAST(x'7bff22' AS TEXT) WHERE seq = 2")
    conn.commit()
    conn.close()
    done = run_plumb(lab.root, "audit", "verify")
    assert done.returncode == 1, done.stderr
    assert "BAD seq 2: not UTF-8: column(s) detail hold bytes that are not UTF-8" in done.stdout
    assert "BAD seq 2: hash mismatch" in done.stdout
    assert "Traceback" not in done.stderr


def _read_only(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run plumb with ``root`` mounted read-only (a private mount namespace)."""
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$1" && shift && "$@"'
    return subprocess.run(
        [str(UNSHARE), "-rm", "sh", "-c", script, "sh", str(root), str(PLUMB), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=plumb_env(),
        check=False,
    )


def _needs_mounts(tmp_path: Path) -> None:
    if UNSHARE is None:
        pytest.skip("needs unshare(1) for a read-only mount")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"'
    probe = subprocess.run(
        [UNSHARE, "-rm", "sh", "-c", script, "sh", str(tmp_path)],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("user namespaces with mounts are not available here")


def test_read_only_commands_work_on_a_read_only_checkout(lab: LabFleet, tmp_path: Path) -> None:
    """On a read-only checkout with recorded state, `lease show`, `audit show`,
    `audit verify`, `rollout list` and `validate` work; a command that records (freeze)
    exits 2 saying the state is read-only."""
    _needs_mounts(tmp_path)
    assert run_plumb(lab.root, "apply", "--yes").returncode == 0
    for args in (
        ("lease", "show"),
        ("audit", "show", "--limit", "3"),
        ("audit", "verify"),
        ("rollout", "list"),
        ("validate",),
    ):
        done = _read_only(lab.root, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert "audit chain ok" in _read_only(lab.root, "audit", "verify").stdout
    frozen = _read_only(lab.root, "freeze", "--reason", "stop")
    assert frozen.returncode == 2
    assert "is read-only here" in frozen.stderr
    assert "internal error" not in frozen.stderr


def test_a_read_only_checkout_without_state_reads_as_empty(
    orion: FleetCopy, tmp_path: Path
) -> None:
    """A fresh, read-only checkout (no state directory) shows no lease and an empty log."""
    _needs_mounts(tmp_path)
    shown = _read_only(orion.path, "lease", "show")
    assert (shown.returncode, shown.stdout.strip()) == (0, "no lease held"), shown.stderr
    verified = _read_only(orion.path, "audit", "verify")
    assert verified.returncode == 0, verified.stderr
    assert "audit chain ok: 0 records" in verified.stdout
