"""The per-device port views the built-in policies share: link classes and lossless ports
read from the cabling columns."""

from __future__ import annotations

from inventory.index import port_sort_key
from inventory.models import LinkClass
from policies.builtin.ports import classes_of, lossless_classes, lossless_ends
from tests.fleetcopy import FleetCopy


def test_classes_of_a_leaf_and_a_node(orion: FleetCopy) -> None:
    """A leaf carries host-leaf and leaf-spine cables; a GPU node host-leaf and frontend."""
    fleet = orion.load()
    assert classes_of(fleet, "leaf-r0") == {LinkClass.host_leaf, LinkClass.leaf_spine}
    assert classes_of(fleet, "gpu-n01") == {LinkClass.host_leaf, LinkClass.frontend}
    assert classes_of(fleet, "no-such-device") == set()


def test_lossless_ends_are_the_ports_of_lossless_classes_in_port_order(orion: FleetCopy) -> None:
    """A node's backend NICs are lossless, its frontend NIC is not; ports come in order."""
    fleet = orion.load()
    ports = [port for port, _ in lossless_ends(fleet, "gpu-n01")]
    assert ports == [f"eth{i}" for i in range(8)]
    leaf = list(lossless_ends(fleet, "leaf-r0"))
    assert [p for p, _ in leaf] == sorted((p for p, _ in leaf), key=port_sort_key)
    assert all(fleet.cabling.endpoint(end).port == port for port, end in leaf)
    assert len(leaf) == len(fleet.cabling.ends("leaf-r0"))


def test_no_lossless_class_means_no_lossless_port(orion: FleetCopy) -> None:
    """Without qos.lossless_link_classes no port is lossless."""
    orion.replace(
        "intent/qos.yaml",
        "  lossless_link_classes: [host-leaf, leaf-spine]",
        "  lossless_link_classes: []",
    )
    fleet = orion.load()
    assert lossless_classes(fleet, "leaf-r0") == ()
    assert list(lossless_ends(fleet, "leaf-r0")) == []
