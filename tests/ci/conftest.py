"""One git repository for every review test, built once: ``main`` is ORION as shipped,
and each branch below is one change under review (read-only for the tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.ci.gitfleet import GitFleet, make_git_fleet
from tests.fleetcopy import ORION, FleetCopy

NEW_BUNDLE = """\
    - name: hx8-2026.12
      models: [HX8]
      components:
        gpu_driver: "570.133.20"
        cuda: "12.8"
        nic_firmware: "28.43.2026"
        nic_driver: "24.10-1.1.4.0"
        bios: "1.8.2"
        bmc: "3.12.4"
        fabric_manager: "570.133.20"
"""
FIRMWARE_RACKS = ("gpu-r01", "gpu-r02", "gpu-r03", "gpu-r04")  # gang llm-pretrain-a whole
SPEC = "rollouts/firmware-hx8-2026-12.yaml"


def inventory(name: str) -> dict[str, list[dict[str, object]]]:
    """An ORION inventory file read with plain ruamel.yaml, not plumb's loader."""
    data: dict[str, list[dict[str, object]]] = YAML(typ="safe").load(
        (ORION / "inventory" / name).read_text()
    )
    return data


def nodes_in(racks: tuple[str, ...]) -> list[dict[str, object]]:
    return [d for d in inventory("devices/nodes.yaml")["devices"] if d["rack"] in racks]


def raise_host_mtu(fleet: FleetCopy) -> None:
    fleet.replace("intent/mtu.yaml", "host: 9000 ", "host: 9200 ")


def roce_on_one_leaf(fleet: FleetCopy) -> None:
    fleet.set_device_overrides("  leaf-r3:\n    qos: {roce_priority: 4}\n")


def firmware_on_two_racks(fleet: FleetCopy, *, spec_edit: tuple[str, str] | None = None) -> None:
    """A new HX8 bundle for the nodes of two racks, with its own rollout spec."""
    fleet.replace(
        "intent/firmware.yaml",
        "    - name: eos-4.31.2F\n",
        NEW_BUNDLE + "    - name: eos-4.31.2F\n",
    )
    names = [str(d["name"]) for d in nodes_in(FIRMWARE_RACKS)]
    fleet.set_device_overrides(
        "".join(f"  {n}: {{firmware: {{bundle: hx8-2026.12}}}}\n" for n in names)
    )
    spec = (fleet.path / "rollouts/firmware-hx8-2026-09.yaml").read_text()
    spec = spec.replace("name: firmware-hx8-2026-09", "name: firmware-hx8-2026-12")
    if spec_edit is not None:
        assert spec_edit[0] in spec
        spec = spec.replace(*spec_edit)
    fleet.write(SPEC, spec)


def firmware_with_tight_caps(fleet: FleetCopy) -> None:
    """As above, but the spec's caps cannot hold a canary for both racks' strata."""
    firmware_on_two_racks(
        fleet, spec_edit=("extra_attributes: [label.nic_revision]", "extra_attributes: [rack]")
    )
    fleet.replace(SPEC, "per_wave: 8", "per_wave: 1")


def fewer_maximum_paths(fleet: FleetCopy) -> None:
    fleet.replace("intent/bgp.yaml", "maximum_paths: 64", "maximum_paths: 48")


def quoted_host_mtu(fleet: FleetCopy) -> None:
    fleet.replace("intent/mtu.yaml", "host: 9000 ", 'host: "9000" ')


def broken_inventory(fleet: FleetCopy) -> None:
    fleet.replace("inventory/racks.yaml", "racks:", "rackz:")


@pytest.fixture(scope="session")
def changes(tmp_path_factory: pytest.TempPathFactory) -> GitFleet:
    repo = make_git_fleet(tmp_path_factory.mktemp("review"))
    repo.branch("mtu", raise_host_mtu)
    repo.branch("roce", roce_on_one_leaf)
    repo.branch("firmware", firmware_on_two_racks)
    repo.branch("tight", firmware_with_tight_caps)
    repo.branch("clean", fewer_maximum_paths)
    repo.branch("schema", quoted_host_mtu)
    repo.branch("broken", broken_inventory)
    repo.branch("mtu-then-clean", fewer_maximum_paths, start="mtu")
    return repo


@pytest.fixture
def own_git_fleet(tmp_path: Path) -> GitFleet:
    """A repository of its own, for a test that adds files to the working tree."""
    return make_git_fleet(tmp_path)
