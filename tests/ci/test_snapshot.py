"""`plumb snapshot` records what the drivers observe; `plumb plan --against` plans from
that record with no device access, exactly as the live plan does, and calls a device
the record lacks unknown instead of in sync."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci.review.observed import NOT_IN_SNAPSHOT
from lab.fleet import Fault, FaultKind, states_from_snapshot
from tests.ci.gitfleet import plumb
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet


@pytest.fixture
def lab(orion: FleetCopy) -> Iterator[LabFleet]:
    """ORION with a lab on older firmware and six drifted fields."""
    fleet = LabFleet.create(orion)
    yield fleet
    fleet.close()


def test_plan_against_a_snapshot_equals_the_live_plan(lab: LabFleet, tmp_path: Path) -> None:
    """Snapshot the lab, then plan from the file: the same plumb.plan/v1 as observing."""
    snapshot = tmp_path / "orion.json"
    taken = plumb(lab.root, "snapshot", ".", "-o", str(snapshot))
    assert taken.exit_code == 0, taken.stderr
    assert "snapshot of orion: 45 device(s) recorded, 0 not observed" in taken.stderr
    states = states_from_snapshot(json.loads(snapshot.read_text()))
    assert states == lab.running()
    writes = lab.writes()
    offline = plumb(lab.root, "plan", ".", "--against", str(snapshot), "--format", "json")
    live = plumb(lab.root, "plan", ".", "--format", "json")
    assert offline.exit_code == live.exit_code == 0, offline.stderr + live.stderr
    assert offline.json() == live.json()
    assert offline.json()["summary"]["changes"] == 243
    assert lab.writes() == writes


def test_plan_against_needs_no_lab(lab: LabFleet, tmp_path: Path) -> None:
    """With the lab gone, a plan against a recorded snapshot still works."""
    snapshot = tmp_path / "orion.json"
    assert plumb(lab.root, "snapshot", "-o", str(snapshot)).exit_code == 0
    lab.close()
    (lab.root / ".plumb" / "lab.db").unlink()
    done = plumb(lab.root, "plan", "--against", str(snapshot))
    assert done.exit_code == 0, done.stderr
    assert "243 change(s) on 45 of 45 device(s)" in done.stdout
    assert not (lab.root / ".plumb" / "lab.db").exists()


def test_device_missing_from_the_snapshot_is_unknown(lab: LabFleet, tmp_path: Path) -> None:
    """A device the snapshot lacks is not observed (exit 1), never taken as in sync."""
    snapshot = tmp_path / "orion.json"
    assert plumb(lab.root, "snapshot", "-o", str(snapshot)).exit_code == 0
    data = json.loads(snapshot.read_text())
    del data["devices"]["leaf-r3"]
    snapshot.write_text(json.dumps(data))
    done = plumb(lab.root, "plan", "--against", str(snapshot), "--format", "json")
    assert done.exit_code == 1
    doc = done.json()
    assert doc["devices"]["leaf-r3"]["unknown"] == NOT_IN_SNAPSHOT
    assert doc["summary"]["unknown"] == 1 and doc["empty"] is False


def test_snapshot_leaves_out_what_it_cannot_observe(lab: LabFleet, tmp_path: Path) -> None:
    """An unreachable device is named on stderr, absent from the file, and exits 1."""
    lab.store.add_fault(Fault("gpu-n07", FaultKind.unreachable))
    snapshot = tmp_path / "orion.json"
    done = plumb(lab.root, "snapshot", "--select", "role=gpu-node", "-o", str(snapshot))
    assert done.exit_code == 1
    assert "not observed: gpu-n07: DeviceUnreachable" in done.stderr
    recorded = json.loads(snapshot.read_text())["devices"]
    assert len(recorded) == 31 and "gpu-n07" not in recorded


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a JSON document"),
        ('{"schema": "plumb.plan/v1"}', "expected 'plumb.snapshot/v1'"),
    ],
)
def test_bad_snapshot_is_exit_2_naming_the_file(
    orion: FleetCopy, tmp_path: Path, content: str, message: str
) -> None:
    snapshot = tmp_path / "bad.json"
    snapshot.write_text(content)
    done = plumb(orion.path, "plan", "--against", str(snapshot))
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: {snapshot}: ") and message in done.stderr
