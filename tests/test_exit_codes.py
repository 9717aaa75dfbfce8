"""Where exit 2 means changes pending (`drift`, `plan --detailed-exitcode`), no error
exits 2: not a bad global option before the command, not a damaged state file, not bad
input raised past the command. Elsewhere those stay 2. Run through the console script,
whose entry point maps the errors."""

from __future__ import annotations

import pytest

from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import run_plumb


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--bogus", "drift"), 1),
        (("--bogus", "plan", "--detailed-exitcode"), 1),
        (("--bogus", "plan"), 2),
        (("--bogus", "lease", "show"), 2),
    ],
)
def test_a_bad_global_option_never_reads_as_changes_pending(
    orion: FleetCopy, args: tuple[str, ...], code: int
) -> None:
    """A usage error before the command's name exits 1 where 2 means pending, else 2."""
    done = run_plumb(orion.path, *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert "No such option: --bogus" in done.stderr and done.stdout == ""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("drift",), 1),
        (("plan", "--detailed-exitcode"), 1),
        (("plan",), 2),
        (("lease", "show"), 2),
    ],
)
def test_a_damaged_state_file_never_reads_as_changes_pending(
    orion: FleetCopy, args: tuple[str, ...], code: int
) -> None:
    """A state database that is not one is an error: 1 where 2 means pending, else 2."""
    assert run_plumb(orion.path, "lab", "init").returncode == 0
    (orion.path / ".plumb" / "plumb.db").write_text("not a database\n")
    done = run_plumb(orion.path, *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert "plumb.db is damaged" in done.stderr
