"""What the fleet cannot express is never reported as converged: a SONiC leaf whose
HwSKU the config updater does not know keeps its old ECN and headroom (plumb refuses
to write them), and plan, drift and rollout plan say it cannot reach its intent
instead of "0 changes"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fleetcopy import FleetCopy, copy_orion
from tests.reconciler.labfleet import run_plumb

UNREACHABLE = [
    "qos/ecn/3/kmax_kb",
    "qos/ecn/3/kmin_kb",
    "qos/ecn/3/pmax_percent",
    "qos/pfc_headroom_kb",
]


@pytest.fixture(scope="module")
def marketing(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    """ORION with leaf-r1 named by its marketing model (SN5600, no `hwsku:`), its lab
    at intent otherwise."""
    orion = copy_orion(tmp_path_factory.mktemp("unreachable"))
    orion.replace("inventory/devices/leaves.yaml", "model: ACS-SN5600", "model: SN5600")
    for file in ("intent/groups.yaml", "intent/firmware.yaml"):
        orion.replace(file, "models: [ACS-SN5600]", "models: [ACS-SN5600, SN5600]", count=2)
    assert run_plumb(orion.path, "lab", "init", ".").returncode == 0
    assert run_plumb(orion.path, "apply", "--yes", ".").returncode == 0
    return orion


def test_plan_says_cannot_reach_intent_and_its_exit_code_says_not_converged(
    marketing: FleetCopy,
) -> None:
    done = run_plumb(marketing.path, "plan", ".", "--detailed-exitcode")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("CANNOT REACH INTENT")]
    assert [line.split()[3] for line in lines] == UNREACHABLE
    assert all("(leaf-r1)" in line and "the device has None" in line for line in lines)
    assert "0 change(s) on 0 of 45 device(s)" in done.stdout
    assert "4 field(s) on 1 device(s) cannot reach intent" in done.stdout

    doc = json.loads(run_plumb(marketing.path, "plan", ".", "-f", "json").stdout)
    assert doc["empty"] is True and doc["at_intent"] is False
    assert doc["summary"]["unreachable"] == 4
    entries = doc["devices"]["leaf-r1"]["inexpressible"]
    assert sorted(e["path"] for e in entries if e["unreachable"]) == UNREACHABLE


def test_drift_counts_them_and_exits_2(marketing: FleetCopy) -> None:
    done = run_plumb(marketing.path, "drift", ".")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "drift: 4 field(s) on 1 device(s), 4 not writable by plumb; 0 unknown" in done.stdout
    assert "leaf-r1 qos/ecn/3/kmin_kb: is None, intent 200" in done.stdout


def test_a_rollout_of_them_is_not_nothing_to_do(marketing: FleetCopy) -> None:
    done = run_plumb(marketing.path, "rollout", "plan", "rollouts/qos-mtu-tune.yaml", ".")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 of them cannot reach intent" in done.stdout


def test_with_its_hwsku_named_it_converges(tmp_path: Path) -> None:
    orion = copy_orion(tmp_path)
    orion.replace(
        "inventory/devices/leaves.yaml", "model: ACS-SN5600", "model: SN5600\n    hwsku: ACS-SN5600"
    )
    for file in ("intent/groups.yaml", "intent/firmware.yaml"):
        orion.replace(file, "models: [ACS-SN5600]", "models: [ACS-SN5600, SN5600]", count=2)
    assert run_plumb(orion.path, "validate", ".").returncode == 0
    assert run_plumb(orion.path, "lab", "init", ".").returncode == 0
    assert run_plumb(orion.path, "apply", "--yes", ".").returncode == 0
    assert run_plumb(orion.path, "plan", ".", "--detailed-exitcode").returncode == 0
    assert run_plumb(orion.path, "drift", ".").returncode == 0
