"""`plumb lab show` and `plumb lab fault` take their own arguments first and the fleet
path after them, like every other command; `lab show --format json`."""

from __future__ import annotations

import json

from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet, run_plumb


def test_lab_show_takes_the_device_then_the_path(lab: LabFleet) -> None:
    """From outside the repo, `lab show DEVICE PATH` shows that device's settings."""
    done = run_plumb(lab.root.parent, "lab", "show", "leaf-r3", "orion")
    assert done.returncode == 0, done.stderr
    assert f"bgp/asn = {lab.running()['leaf-r3']['bgp/asn']!r}" in done.stdout.splitlines()


def test_lab_show_of_a_fleet_directory_still_shows_the_lab(lab: LabFleet) -> None:
    """`lab show DIR` with a fleet repo there shows the lab's counters, as before."""
    done = run_plumb(lab.root.parent, "lab", "show", "orion")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("devices: 45\n")


def test_lab_fault_takes_the_path_after_its_arguments(lab: LabFleet) -> None:
    """`lab fault DEVICE KIND PATH` injects the fault; `lab show -f json` lists it."""
    added = run_plumb(lab.root.parent, "lab", "fault", "leaf-r3", "unreachable", "orion")
    assert added.returncode == 0, added.stderr
    shown = run_plumb(lab.root.parent, "lab", "show", "orion", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["devices"] == 45
    assert [(f["device"], f["kind"], f["left"]) for f in doc["faults"]] == [
        ("leaf-r3", "unreachable", None)
    ]


def test_lab_show_json_of_one_device_is_its_running_state(lab: LabFleet) -> None:
    """`lab show DEVICE -f json` is the device's running settings, as the lab holds them."""
    done = run_plumb(lab.root, "lab", "show", "spine-1", "-f", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"device": "spine-1", "running": lab.running()["spine-1"]}


def test_lab_show_of_an_unknown_device_is_an_error(orion: FleetCopy) -> None:
    """A device the lab does not have is exit 2 naming it."""
    LabFleet.create(orion).close()
    done = run_plumb(orion.path, "lab", "show", "leaf-r99")
    assert done.returncode == 2
    assert "no lab device 'leaf-r99'" in done.stderr
