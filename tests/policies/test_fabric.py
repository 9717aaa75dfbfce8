"""Fabric-shape policies: cable class vs roles, rails, unique addresses, one bundle per gang."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.engine import PolicyReport
from tests.fleetcopy import FleetCopy, copy_orion
from tests.policies.support import assert_denied, at, flagged, only, places, primary, subjects

FABRIC_POLICIES = (
    "cabling.class-fits-roles",
    "cabling.rail-match",
    "addressing.unique",
    "firmware.gang-uniform",
)
BACKEND_FILE = "inventory/links/backend.yaml"
ADDRESSING_FILE = "intent/addressing.yaml"
N07_ETH3 = "{a: gpu-n07, a_port: eth3, b: leaf-r3, b_port: Ethernet7,"
N07_ETH4 = "{a: gpu-n07, a_port: eth4, b: leaf-r4, b_port: Ethernet7,"
R0_UPLINK = "{a: leaf-r0, a_port: Ethernet33, b: spine-1, b_port: Ethernet1, class: leaf-spine,"


@pytest.fixture
def orion(tmp_path: Path) -> FleetCopy:
    return copy_orion(tmp_path / "orion")


@pytest.mark.parametrize("policy_id", FABRIC_POLICIES)
def test_clean_orion_has_no_violation(clean_report: PolicyReport, policy_id: str) -> None:
    assert flagged(clean_report, policy_id) == []


def test_a_leaf_spine_class_on_a_host_cable_is_flagged(orion: FleetCopy) -> None:
    """A host cable declared leaf-spine joins a gpu-node and a leaf: wrong class."""
    orion.replace(BACKEND_FILE, N07_ETH3 + " class: host-leaf", N07_ETH3 + " class: leaf-spine")
    found = flagged(orion.evaluate(), "cabling.class-fits-roles")
    assert_denied(found)
    (violation,) = found
    assert violation.subject == "gpu-n07:eth3"
    assert violation.message == (
        "leaf-spine cable gpu-n07:eth3 (gpu-node) <-> leaf-r3:Ethernet7 (leaf): "
        "a leaf-spine cable joins leaf - spine"
    )
    assert primary(violation) == at(orion, BACKEND_FILE, N07_ETH3)


def test_a_leaf_to_spine_cable_declared_frontend_is_flagged(orion: FleetCopy) -> None:
    orion.replace(BACKEND_FILE, R0_UPLINK, R0_UPLINK.replace("leaf-spine", "frontend"))
    violation = only(orion.evaluate(), "cabling.class-fits-roles")
    assert violation.message.endswith(
        "a frontend cable joins frontend - gpu-node or frontend - frontend"
    )


def test_nics_swapped_between_rails_are_flagged_both(orion: FleetCopy) -> None:
    """gpu-n07's rail-3 and rail-4 NICs plugged into each other's leaves: both flagged at
    their cable lines, nothing else."""
    orion.replace(BACKEND_FILE, N07_ETH3, N07_ETH3.replace("leaf-r3", "leaf-r4"))
    orion.replace(BACKEND_FILE, N07_ETH4, N07_ETH4.replace("leaf-r4", "leaf-r3"))
    report = orion.evaluate()
    found = flagged(report, "cabling.rail-match")
    assert_denied(found)
    assert subjects(report, "cabling.rail-match") == {"gpu-n07:eth3", "gpu-n07:eth4"}
    by_subject = {v.subject: v for v in found}
    assert by_subject["gpu-n07:eth3"].message == (
        "gpu-n07:eth3 is on rail 3 but cabled to leaf-r4:Ethernet7 of rail 4"
    )
    assert primary(by_subject["gpu-n07:eth4"]) == at(
        orion, BACKEND_FILE, "a_port: eth4, b: leaf-r3"
    )


def test_overlapping_pools_give_duplicate_addresses(orion: FleetCopy) -> None:
    """The host-leaf pool set to the leaf-spine pool: every /31 is handed out twice."""
    orion.replace(ADDRESSING_FILE, "host-leaf: 10.1.0.0/16", "host-leaf: 10.0.0.0/16")
    report = orion.evaluate()
    found = flagged(report, "addressing.unique")
    assert_denied(found)
    assert len(found) == 512  # both ends of each of the 256 host-leaf cables
    first = next(v for v in found if "10.0.0.0/31" in v.message)
    assert "already the address of" in first.message
    assert {primary(v)[0] for v in found} == {ADDRESSING_FILE}
    lines = {p for v in found for p in places(v)}
    assert at(orion, ADDRESSING_FILE, "host-leaf: 10.0.0.0/16") in lines
    assert at(orion, ADDRESSING_FILE, "leaf-spine: 10.0.0.0/16") in lines


def test_an_override_taking_another_cables_address_is_flagged(orion: FleetCopy) -> None:
    """leaf-r0:Ethernet33 overridden to 10.1.0.0/31, the address pool allocation gave
    leaf-r0:Ethernet1: that port now repeats it, and its host peer shares a /31 with a
    port of another cable."""
    orion.append(
        ADDRESSING_FILE,
        "  overrides:\n    - {device: leaf-r0, port: Ethernet33, address: 10.1.0.0/31}\n",
    )
    report = orion.evaluate()
    found = {v.subject: v for v in flagged(report, "addressing.unique")}
    assert set(found) == {"leaf-r0:Ethernet1", "gpu-n01:eth0"}
    assert found["leaf-r0:Ethernet1"].message == (
        "leaf-r0:Ethernet1 has 10.1.0.0/31, already the address of leaf-r0:Ethernet33"
    )
    assert found["gpu-n01:eth0"].message == (
        "gpu-n01:eth0 has 10.1.0.1/31, in the same /31 as leaf-r0:Ethernet33 on another cable"
    )
    override = at(orion, ADDRESSING_FILE, "address: 10.1.0.0/31")
    assert primary(found["leaf-r0:Ethernet1"]) == override  # the override is most specific
    assert at(orion, ADDRESSING_FILE, "host-leaf: 10.1.0.0/16") in places(found["gpu-n01:eth0"])


def test_a_gang_split_over_two_bundles_is_flagged(orion: FleetCopy) -> None:
    """One node of llm-pretrain-a held back on the older bundle splits the gang."""
    orion.set_device_overrides("  gpu-n05:\n    firmware:\n      bundle: hx8-2026.06\n")
    violation = only(orion.evaluate(), "firmware.gang-uniform")
    assert_denied([violation])
    assert violation.subject == "llm-pretrain-a"
    assert violation.message.startswith("gang llm-pretrain-a spans 2 firmware bundles: ")
    assert "hx8-2026.06: 1 node(s) (gpu-n05)" in violation.message
    assert "hx8-2026.09: 15 node(s)" in violation.message
    assert primary(violation) == at(orion, "intent/devices.yaml", "bundle: hx8-2026.06")


def test_a_node_outside_any_gang_may_differ(orion: FleetCopy) -> None:
    """gpu-n30 runs no gang: its own bundle splits nothing."""
    orion.set_device_overrides("  gpu-n30:\n    firmware:\n      bundle: hx8-2026.06\n")
    assert flagged(orion.evaluate(), "firmware.gang-uniform") == []


@settings(max_examples=8, deadline=None)
@given(
    node=st.integers(1, 32), rails=st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True)
)
def test_rail_match_flags_exactly_the_swapped_nics(
    tmp_path_factory: pytest.TempPathFactory, node: int, rails: list[int]
) -> None:
    """Swapping the leaves of any two NICs of any node flags exactly those two NICs."""
    orion = copy_orion(tmp_path_factory.mktemp("orion") / "orion")
    name = f"gpu-n{node:02d}"
    text = orion.path.joinpath(BACKEND_FILE).read_text()
    first, second = (f"{{a: {name}, a_port: eth{r}, b: leaf-r{r}," for r in rails)
    assert first in text and second in text
    swapped = (
        first.replace(f"leaf-r{rails[0]}", "LEAF-A"),
        second.replace(f"leaf-r{rails[1]}", f"leaf-r{rails[0]}"),
    )
    orion.replace(BACKEND_FILE, first, swapped[0])
    orion.replace(BACKEND_FILE, second, swapped[1])
    orion.replace(BACKEND_FILE, "LEAF-A", f"leaf-r{rails[1]}")
    report = orion.evaluate()
    assert subjects(report, "cabling.rail-match") == {f"{name}:eth{r}" for r in rails}
