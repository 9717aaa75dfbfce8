"""Two clones of one fleet sharing one PostgreSQL state database, as two operators (or
an operator and CI) would: one lease, one freeze, one set of pins between them, and a
lost database stops a running apply before its next write."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.fleet import Fault, FaultKind
from reconciler.state.location import open_state
from tests.fleetcopy import copy_orion
from tests.pgserver import PgServer
from tests.reconciler.labfleet import LabFleet, run_plumb, start_plumb

SHARED_STATE = "\nstate:\n  backend: postgresql\n"


@pytest.fixture
def clones(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LabFleet, LabFleet]]:
    """Two ORION clones, each with its own lab, whose state is one PostgreSQL database."""
    monkeypatch.setenv("PLUMB_STATE_URL", pg_url)
    labs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        copy = copy_orion(tmp_path / name)
        copy.append("plumb.yaml", SHARED_STATE)
        labs.append(LabFleet.create(copy))
    yield labs[0], labs[1]
    for lab in labs:
        lab.close()


def _slow(lab: LabFleet, latency_ms: int = 200) -> None:
    for name in lab.fleet.devices:
        lab.store.add_fault(Fault(name, FaultKind.latency, path_glob="*", latency_ms=latency_ms))


def _wait_for_first_write(lab: LabFleet, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while lab.writes() == 0:
        assert time.monotonic() < deadline, "the apply never wrote"
        time.sleep(0.05)


def test_the_state_lives_in_postgresql_not_in_the_clone(clones: tuple[LabFleet, LabFleet]) -> None:
    """A freeze in one clone is what the other clone sees; neither has a plumb.db."""
    a, b = clones
    assert run_plumb(a.root, "freeze", "--reason", "INC-1").returncode == 0
    shown = run_plumb(b.root, "apply", "--yes")
    assert shown.returncode == 1 and "INC-1" in shown.stderr
    assert not (a.root / ".plumb" / "plumb.db").exists()
    assert not (b.root / ".plumb" / "plumb.db").exists()


def test_a_second_clones_apply_is_refused_naming_the_holder(
    clones: tuple[LabFleet, LabFleet],
) -> None:
    """While clone a applies, clone b's apply is refused at once, naming a's process."""
    a, b = clones
    _slow(a)
    running = start_plumb(a.root, "apply", "--yes", "--concurrency", "1")
    try:
        _wait_for_first_write(a)
        refused = run_plumb(b.root, "apply", "--yes")
        shown = run_plumb(b.root, "lease", "show")
    finally:
        running.kill()
        running.communicate()
    assert refused.returncode == 1
    assert f"fleet lease is held by tester@ci pid {running.pid} for 'apply'" in refused.stderr
    assert b.writes() == 0
    assert f"pid {running.pid} (apply" in shown.stdout and "last heartbeat" in shown.stdout


def test_pins_from_one_clone_are_held_in_the_others_plan(
    clones: tuple[LabFleet, LabFleet], pg_url: str
) -> None:
    """A rollback pin recorded through clone a's state is HELD in clone b's plan."""
    _, b = clones
    device = sorted(b.fleet.devices)[0]
    plan = json.loads(run_plumb(b.root, "plan", "--format", "json").stdout)
    change = next(iter(plan["devices"][device]["changes"]))
    path, before = change["path"], change["from"]
    with open_state(pg_url) as state:  # what a rollback in clone a records
        state.journal.pin(None, {device: {path: before}}, "rolled back from clone a")
    held = json.loads(run_plumb(b.root, "plan", "--format", "json").stdout)["devices"][device]
    assert {"path": path, "value": before, "reason": "rolled back from clone a"} in held["held"]
    assert path not in {c["path"] for c in held["changes"]}


def test_a_freeze_in_one_clone_stops_the_others_apply_at_its_next_device(
    clones: tuple[LabFleet, LabFleet],
) -> None:
    """Clone b's freeze stops clone a's running apply before its next device write."""
    a, b = clones
    _slow(a)
    running = start_plumb(a.root, "apply", "--yes", "--concurrency", "1", "--format", "json")
    try:
        _wait_for_first_write(a)
        assert run_plumb(b.root, "freeze", "--reason", "INC-9 from b").returncode == 0
        out, err = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 1, err
    report = json.loads(out)
    assert report["stopped"].startswith("Frozen: fleet frozen by")
    assert report["stopped"].endswith("INC-9 from b")
    assert report["not_started"]
    assert a.writes() == len(report["results"])


def test_losing_the_state_database_mid_apply_stops_before_the_next_write(
    clones: tuple[LabFleet, LabFleet], pg_server: PgServer, pg_url: str
) -> None:
    """When the apply's connection to the state is cut, it starts no further device
    write, says it is treated as fenced out, and exits 2."""
    a, _ = clones
    _slow(a)
    devices = len(a.fleet.devices)
    running = start_plumb(a.root, "apply", "--yes", "--concurrency", "1")
    try:
        _wait_for_first_write(a)
        assert pg_server.terminate_clients(pg_url) >= 1
        cut_at = a.writes()
        _, err = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 2, err
    assert "cannot be reached" in err and "treated as fenced out" in err
    assert "plumb lease break --reason" in err  # the next command, if its holder is gone
    assert "internal error" not in err
    assert a.writes() <= cut_at + 1  # the device in flight when the link went may finish
    assert a.writes() < devices
