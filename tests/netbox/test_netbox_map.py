"""The NetBox -> plumb mapping, the file layout and the drift report, without a server."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inventory.models import InventoryFile
from inventory.netbox_drift import RepoRecord, compare, drift_lines, read_repo_records
from inventory.netbox_map import (
    Imported,
    MappingError,
    NetboxData,
    NetboxMapping,
    interface_gbps,
    map_netbox,
)
from inventory.netbox_write import file_changes, read_owned, render_files, write_files
from inventory.source import parse_text
from inventory.validation import validate_document
from tests.netbox.records import cable, device, interface, rack


def fabric() -> dict[str, list[dict[str, Any]]]:
    """Two GPU nodes with two rails each, two rail leaves and a spine; lengths in m, cm, ft."""
    racks = [rack("r1"), rack("net-1", role="network", power="pdu-n", location=None)]
    node1 = device(
        "gpu-n1",
        "gpu-node",
        platform="linux",
        mgmt="198.18.3.1/24",
        manufacturer="halcyon",
        model="HX8",
        gpus=8,
        labels={"nic": "A1"},
    )
    node2 = device(
        "gpu-n2",
        "gpu-node",
        platform="linux",
        mgmt="198.18.3.2/24",
        manufacturer="halcyon",
        model="HX8",
        gpus=8,
    )
    leaf0 = device("leaf-r0", "leaf", rack_name="net-1", mgmt="198.18.1.1/24", rail=0)
    leaf1 = device(
        "leaf-r1",
        "leaf",
        platform="sonic",
        rack_name="net-1",
        mgmt="198.18.1.2/24",
        manufacturer="nvidia",
        model="ACS-SN5600",
        rail=1,
    )
    spine = device("spine-1", "spine", rack_name="net-1", mgmt="198.18.0.1/24")
    ifs = {
        (d["name"], n): interface(d, n, rail=r)
        for d in (node1, node2)
        for n, r in (("eth0", 0), ("eth1", 1))
    }
    ifs[("gpu-n1", "ipmi")] = interface(node1, "ipmi", kind="1000base-t", mgmt_only=True)
    for leaf in (leaf0, leaf1):
        for port in ("Ethernet1", "Ethernet2", "Ethernet33"):
            ifs[(leaf["name"], port)] = interface(leaf, port)
    for port in ("Ethernet1", "Ethernet2"):
        ifs[("spine-1", port)] = interface(spine, port)
    cables = [
        cable(ifs[("leaf-r0", "Ethernet1")], ifs[("gpu-n1", "eth0")], length=3.5, unit="m"),
        cable(ifs[("gpu-n2", "eth0")], ifs[("leaf-r0", "Ethernet2")], length=250, unit="cm"),
        cable(ifs[("gpu-n1", "eth1")], ifs[("leaf-r1", "Ethernet1")], length=10, unit="ft"),
        cable(ifs[("gpu-n2", "eth1")], ifs[("leaf-r1", "Ethernet2")], length=4, unit="m"),
        cable(ifs[("spine-1", "Ethernet1")], ifs[("leaf-r0", "Ethernet33")], length=22, unit="m"),
        cable(
            ifs[("leaf-r1", "Ethernet33")], ifs[("spine-1", "Ethernet2")], length=0.02, unit="km"
        ),
    ]
    return {
        "racks": racks,
        "devices": [node1, node2, leaf0, leaf1, spine],
        "interfaces": list(ifs.values()),
        "cables": cables,
    }


def imported(
    records: dict[str, list[dict[str, Any]]] | None = None, mapping: NetboxMapping | None = None
) -> Imported:
    records = records or fabric()
    data = NetboxData(**{kind: tuple(items) for kind, items in records.items()})
    return map_netbox(data, mapping or NetboxMapping())


def errors_of(
    records: dict[str, list[dict[str, Any]]], mapping: NetboxMapping | None = None
) -> list[str]:
    with pytest.raises(MappingError) as caught:
        imported(records, mapping)
    return caught.value.messages


def test_cable_lengths_are_converted_to_metres() -> None:
    """Lengths in m, cm, ft and km become length_m, rounded to the millimetre."""
    lengths = {(lk["a"], lk["a_port"]): lk["length_m"] for lk in imported().links}
    assert lengths == {
        ("gpu-n1", "eth0"): 3.5,
        ("gpu-n1", "eth1"): 3.048,
        ("gpu-n2", "eth0"): 2.5,
        ("gpu-n2", "eth1"): 4.0,
        ("leaf-r0", "Ethernet33"): 22.0,
        ("leaf-r1", "Ethernet33"): 20.0,
    }


def test_link_ends_are_ordered_by_tier_and_classed_by_roles() -> None:
    """``a`` is the lower tier whichever side NetBox put it on; the class follows the roles."""
    links = {(lk["a"], lk["b"]): lk["class"] for lk in imported().links}
    assert links[("gpu-n1", "leaf-r0")] == "host-leaf"
    assert links[("leaf-r0", "spine-1")] == "leaf-spine"
    assert ("spine-1", "leaf-r0") not in links


def test_gpu_node_nics_carry_speed_and_rail_but_not_management_ports() -> None:
    """A node's physical interfaces are its NICs (rail from the custom field); ipmi is not."""
    node = next(d for d in imported().devices if d["name"] == "gpu-n1")
    assert node["nics"] == [
        {"name": "eth0", "speed_gbps": 400, "rail": 0},
        {"name": "eth1", "speed_gbps": 400, "rail": 1},
    ]
    assert node["gpus"] == 8 and node["labels"] == {"nic": "A1"}
    assert node["mgmt"] == "198.18.3.1"


def test_leaf_rail_and_rack_domains_come_from_custom_fields() -> None:
    """A leaf's rail, a rack's power/cooling domain, kind (role) and row (location)."""
    result = imported()
    leaf = next(d for d in result.devices if d["name"] == "leaf-r1")
    assert (leaf["rail"], leaf["platform"], leaf["vendor"], leaf["model"]) == (
        1,
        "sonic",
        "nvidia",
        "ACS-SN5600",
    )
    assert result.racks == (
        {"name": "net-1", "kind": "network", "power_domain": "pdu-n", "cooling_domain": "row-a"},
        {
            "name": "r1",
            "kind": "gpu",
            "power_domain": "pdu-1",
            "cooling_domain": "row-a",
            "row": "row-a",
        },
    )


@pytest.mark.parametrize(
    ("kind", "speed", "gbps"),
    [
        ("400gbase-x-osfp", None, 400),
        ("100gbase-x-qsfp28", None, 100),
        ("1000base-t", None, 1),
        ("infiniband-ndr", None, 400),
        ("other", 200_000_000, 200),
        ("400gbase-x-osfp", 100_000_000, 100),
        ("other", None, None),
    ],
)
def test_interface_speed_from_speed_field_else_type(
    kind: str, speed: int | None, gbps: int | None
) -> None:
    """The speed field (kb/s) wins; otherwise the type names the speed, or nothing does."""
    assert interface_gbps({"type": {"value": kind}, "speed": speed}) == gbps


def test_a_role_without_mapping_is_an_error_naming_the_device() -> None:
    """An unmapped role names the device; a mapping in plumb.yaml resolves it."""
    records = fabric()
    records["devices"][4]["role"] = {"id": 99, "name": "Core", "slug": "core"}
    spine_id = records["devices"][4]["id"]
    assert errors_of(records) == [
        f"dcim.device {spine_id} (spine-1): role 'core' has no plumb role; map it under"
        " sources.netbox.roles in plumb.yaml (null: not imported)"
    ]
    mapped = imported(records, NetboxMapping.with_overrides({"core": "spine"}, {}))
    assert next(d for d in mapped.devices if d["name"] == "spine-1")["role"] == "spine"


def test_a_cable_to_a_front_port_is_an_error_naming_the_cable() -> None:
    """A node cabled to a patch panel's front port cannot become a plumb link."""
    records = fabric()
    bad = records["cables"][0]
    bad["b_terminations"][0]["object_type"] = "dcim.frontport"
    assert errors_of(records) == [
        f"dcim.cable {bad['id']}: ends on a dcim.frontport, not an interface;"
        " plumb links connect interfaces"
    ]


def test_a_length_without_unit_and_a_missing_length_are_errors() -> None:
    """Both cables are named; PFC headroom needs a length in a known unit."""
    records = fabric()
    no_unit, no_length = records["cables"][0], records["cables"][1]
    no_unit["length_unit"] = None
    no_length["length"] = None
    assert errors_of(records) == [
        f"dcim.cable {no_unit['id']}: length 3.5 has no unit",
        f"dcim.cable {no_length['id']}: has no length (plumb's PFC headroom depends on it)",
    ]


def test_devices_of_a_role_mapped_to_null_are_left_out_with_their_cables() -> None:
    """A PDU is not imported and its power cable is ignored; a data cable to it is an error."""
    records = fabric()
    pdu = device("pdu-1", "pdu", platform=None, mgmt=None)
    outlet = interface(pdu, "outlet1")
    records["devices"].append(pdu)
    node_psu = interface(records["devices"][0], "psu0")
    records["cables"].append(
        cable(node_psu, outlet, a_type="dcim.powerport", b_type="dcim.poweroutlet")
    )
    mapping = NetboxMapping.with_overrides({"pdu": None}, {})
    assert "pdu-1" not in {d["name"] for d in imported(records, mapping).devices}
    spare = interface(records["devices"][1], "eth7", rail=7)
    records["interfaces"].append(spare)
    records["cables"].append(data := cable(spare, outlet))
    assert errors_of(records, mapping) == [
        f"dcim.cable {data['id']}: pdu-1 outlet1 is on a device plumb does not import (role 'pdu')"
    ]


def test_a_planned_cable_is_skipped_and_said_so() -> None:
    """Only connected cables are links; the others are listed as skipped."""
    records = fabric()
    planned = records["cables"][3]
    planned["status"] = {"value": "planned", "label": "Planned"}
    result = imported(records)
    assert len(result.links) == 5
    assert result.skipped == (f"dcim.cable {planned['id']}: status planned, not imported",)


def test_a_value_plumb_refuses_names_the_object_and_field() -> None:
    """A rail out of range is reported against the NetBox interface, with the field."""
    records = fabric()
    nic = records["interfaces"][0]
    nic["custom_fields"]["rail"] = 99
    messages = errors_of(records)
    assert len(messages) == 1
    assert messages[0].startswith(f"dcim.interface {nic['id']} (gpu-n1 eth0): rail: ")


def test_rendered_files_load_as_inventory() -> None:
    """Each file validates against the inventory schema; one cable a line."""
    files = render_files(imported())
    assert sorted(files) == [
        "inventory/devices/leaves.yaml",
        "inventory/devices/nodes.yaml",
        "inventory/devices/spines.yaml",
        "inventory/links/backend.yaml",
        "inventory/racks.yaml",
    ]
    for path, text in files.items():
        validate_document(parse_text(path, text.encode()), InventoryFile)
    assert (
        "- {a: gpu-n1, a_port: eth0, b: leaf-r0, b_port: Ethernet1, class: host-leaf,"
        " length_m: 3.5, speed_gbps: 400}\n" in files["inventory/links/backend.yaml"]
    )


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_files_do_not_depend_on_the_order_netbox_returns_records_or_cable_sides(
    rng: random.Random,
) -> None:
    """Records in any order, cables entered from either end: the same bytes."""
    expected = render_files(imported())
    records = fabric()
    for items in records.values():
        rng.shuffle(items)
    for entry in records["cables"]:
        if rng.random() < 0.5:
            entry["a_terminations"], entry["b_terminations"] = (
                entry["b_terminations"],
                entry["a_terminations"],
            )
    assert render_files(imported(records)) == expected


def test_writing_twice_changes_nothing_and_stale_owned_files_are_deleted(
    tmp_path: Path,
) -> None:
    """The second write has no changes; a devices file NetBox no longer fills is removed,
    a gangs file is never touched."""
    (tmp_path / "inventory" / "devices").mkdir(parents=True)
    (tmp_path / "inventory" / "devices" / "old.yaml").write_text("devices: []\n")
    (tmp_path / "inventory" / "gangs.yaml").write_text("gangs: []\n")
    files = render_files(imported())
    changes = file_changes(read_owned(tmp_path), files)
    assert ("inventory/devices/old.yaml", "delete") in {(c.path, c.action) for c in changes}
    write_files(tmp_path, files, changes)
    assert file_changes(read_owned(tmp_path), files) == []
    assert (tmp_path / "inventory" / "gangs.yaml").read_text() == "gangs: []\n"
    assert not (tmp_path / "inventory" / "devices" / "old.yaml").exists()


def test_drift_names_added_removed_changed_conflicting_and_plumb_only_records(
    tmp_path: Path,
) -> None:
    """Each kind of difference is reported once, with where plumb holds the record."""
    files = render_files(imported())
    write_files(tmp_path, files, file_changes({}, files))
    (tmp_path / "inventory" / "local.yaml").write_text(
        "devices:\n"
        "  - {name: lab-1, role: leaf, vendor: x, model: y, platform: eos, rack: r1,"
        " mgmt: 10.0.0.1}\n"
    )
    records = fabric()
    records["cables"][0]["length"] = 5.25  # gpu-n1 eth0: 3.5 -> 5.25
    records["devices"].pop(4)  # spine-1 gone, so are its cables
    records["cables"] = records["cables"][:4]
    records["devices"].append(device("lab-1", "leaf", mgmt="10.0.0.1/24"))
    repo: list[RepoRecord] = read_repo_records(tmp_path)
    new = imported(records)
    report = compare(repo, new, file_changes(read_owned(tmp_path), render_files(new)))
    lines = drift_lines(report)
    assert "~ link gpu-n1:eth0 -- leaf-r0:Ethernet1: length_m 3.5 -> 5.25" in lines
    assert "- device spine-1: in plumb (inventory/devices/spines.yaml:5:5), not in NetBox" in lines
    assert any(
        line.startswith("! device lab-1: in NetBox and kept by hand at inventory/local.yaml:2:5")
        for line in lines
    )
    assert "  delete inventory/devices/spines.yaml" in lines
    assert not report.in_sync


def test_an_unchanged_repo_is_in_sync() -> None:
    """No file to change and no conflict: in sync."""
    result = imported()
    repo = [RepoRecord("device", d["name"], d, "x:1:1", True) for d in result.devices]
    assert compare(repo, result, []).in_sync


def test_two_devices_of_one_name_in_different_sites_are_an_error() -> None:
    """NetBox allows a name once per site; plumb needs it once in the fleet."""
    records = fabric()
    twin = device("leaf-r0", "leaf", rack_name="net-1", mgmt="198.18.9.1/24", rail=0)
    records["devices"].append(twin)
    first = records["devices"][2]["id"]
    assert errors_of(records) == [
        f"dcim.device {twin['id']} (leaf-r0): dcim.device {first} has the same name; plumb"
        " needs unique names (import one site with sources.netbox.site)"
    ]


def test_labels_that_are_not_an_object_are_an_error() -> None:
    """The labels custom field must hold a JSON object of label: value."""
    records = fabric()
    records["devices"][0]["custom_fields"]["labels"] = ["A1"]
    node = records["devices"][0]["id"]
    assert errors_of(records) == [
        f"dcim.device {node} (gpu-n1): custom field labels is not a JSON object"
    ]
