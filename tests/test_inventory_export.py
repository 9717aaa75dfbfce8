"""`plumb inventory export ansible` read by the real `ansible-inventory`: a two-line
script that execs plumb is a dynamic inventory whose groups, hosts and variables are
the fleet's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from intent.fleet import load_fleet
from tests.fleetcopy import ORION, FleetCopy

BIN = Path(sys.executable).parent
PLUMB = BIN / "plumb"
ANSIBLE_INVENTORY = BIN / "ansible-inventory"
pytestmark = pytest.mark.skipif(
    not ANSIBLE_INVENTORY.exists() and shutil.which("ansible-inventory") is None,
    reason="ansible-core is not installed",
)


def _script(tmp_path: Path, fleet: Path) -> Path:
    """The dynamic-inventory script the docs show: exec plumb with the fleet's path."""
    script = tmp_path / "plumb-inventory"
    script.write_text(f'#!/bin/sh\nexec {PLUMB} inventory export ansible {fleet} "$@"\n')
    script.chmod(0o755)
    return script


def _ansible_inventory(script: Path, *args: str) -> Any:
    env = dict(os.environ, ANSIBLE_HOME=str(script.parent / "ansible-home"))
    env["ANSIBLE_INVENTORY_UNPARSED_FAILED"] = "true"  # a script it cannot read is an error
    command = str(ANSIBLE_INVENTORY) if ANSIBLE_INVENTORY.exists() else "ansible-inventory"
    done = subprocess.run(
        [command, "-i", str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """ORION's inventory as `ansible-inventory --list` reads it through plumb."""
    return _ansible_inventory(_script(tmp_path_factory.mktemp("inv"), ORION), "--list")


def test_every_device_is_a_host_at_its_management_address(listed: Any) -> None:
    """Every device is in `all`, with ansible_host its mgmt address."""
    fleet = load_fleet(ORION)
    hostvars = listed["_meta"]["hostvars"]
    assert set(hostvars) == set(fleet.devices)
    for name, device in fleet.devices.items():
        assert hostvars[name]["ansible_host"] == str(device.mgmt)
        assert hostvars[name]["plumb_model"] == device.model


def test_groups_by_role_platform_rack_rail_and_label(listed: Any) -> None:
    """Groups follow the inventory: role, platform, rack, the rail a leaf serves, labels."""
    fleet = load_fleet(ORION)
    nodes = sorted(n for n, d in fleet.devices.items() if d.role.value == "gpu-node")
    assert sorted(listed["role_gpu_node"]["hosts"]) == nodes and len(nodes) == 32
    eos = sorted(n for n, d in fleet.devices.items() if d.platform.value == "eos")
    assert sorted(listed["platform_eos"]["hosts"]) == eos
    assert sorted(listed["platform_sonic"]["hosts"]) == sorted(
        n for n, d in fleet.devices.items() if d.platform.value == "sonic"
    )
    assert "leaf-r0" in listed["rail_0"]["hosts"]
    assert all(fleet.devices[n].rail == 0 for n in listed["rail_0"]["hosts"])
    b0 = sorted(n for n, d in fleet.devices.items() if d.labels.get("nic_revision") == "B0")
    assert sorted(listed["label_nic_revision_B0"]["hosts"]) == b0 and b0
    racks = {d.rack for d in fleet.devices.values()}
    assert {f"rack_{r.replace('-', '_')}" for r in racks} <= set(listed["all"]["children"])


def test_platform_decides_how_ansible_connects(listed: Any) -> None:
    """EOS over network_cli with arista.eos; SONiC and GPU nodes over ssh."""
    hostvars = listed["_meta"]["hostvars"]
    leaf = hostvars["leaf-r0"]
    assert leaf["ansible_network_os"] == "arista.eos.eos"
    assert leaf["ansible_connection"] == "ansible.netcommon.network_cli"
    assert leaf["plumb_rail"] == 0
    node = hostvars["gpu-n01"]
    assert node["ansible_connection"] == "ssh" and "ansible_network_os" not in node
    assert node["plumb_nic_rails"] == list(range(8))
    sonic = next(h for h in hostvars.values() if h["plumb_platform"] == "sonic")
    assert sonic["ansible_connection"] == "ssh"


def test_host_query_gives_one_hosts_variables(tmp_path: Path) -> None:
    """`ansible-inventory --host NAME` gets the same variables as the list."""
    script = _script(tmp_path, ORION)
    one = _ansible_inventory(script, "--host", "gpu-n29")
    assert one["ansible_host"] == str(load_fleet(ORION).devices["gpu-n29"].mgmt)
    assert one["plumb_labels"] == {"nic_revision": "B0"}
    direct = subprocess.run(
        [str(PLUMB), "inventory", "export", "ansible", str(ORION), "--host", "no-such-host"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(direct.stdout) == {}


def test_a_label_with_characters_ansible_refuses_becomes_underscores(
    orion: FleetCopy, tmp_path: Path
) -> None:
    """A label value with `.` or `-` makes a valid group name; the host keeps the value."""
    orion.replace("inventory/devices/nodes.yaml", "{nic_revision: A1}", "{nic_revision: a1.x-2}")
    listed = _ansible_inventory(_script(tmp_path, orion.path), "--list")
    assert "gpu-n01" in listed["label_nic_revision_a1_x_2"]["hosts"]
    labels = listed["_meta"]["hostvars"]["gpu-n01"]["plumb_labels"]
    assert labels == {"nic_revision": "a1.x-2"}


def test_a_fleet_that_does_not_load_fails_the_script(orion: FleetCopy, tmp_path: Path) -> None:
    """A broken repo exits 2 with file:line on stderr and prints no inventory."""
    orion.replace("inventory/devices/leaves.yaml", "mgmt: 198.18.1.1", "mgmt: 198.18.1.300")
    done = subprocess.run(
        [str(_script(tmp_path, orion.path)), "--list"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "inventory/devices/leaves.yaml:13:" in done.stderr
