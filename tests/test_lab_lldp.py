"""The lab's wire: switches report LLDP neighbours from the inventory cabling, and
``miscable`` swaps two cables' far ends without counting a configuration write."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from intent.fleet import Fleet
from inventory.index import Endpoint
from lab.driver import create_lab, miscable
from lab.fleet import initial_lab_states, is_unmanaged, lab_db_path, swap_far_ends
from lab.store import LabStore
from tests.fleetcopy import FleetCopy


@pytest.fixture
def fleet(orion: FleetCopy) -> Fleet:
    return orion.load()


@pytest.fixture
def store(fleet: Fleet) -> Iterator[LabStore]:
    lab = LabStore(lab_db_path(fleet))
    create_lab(lab, fleet, seed=0)
    yield lab
    lab.close()


def test_every_cabled_switch_port_reports_its_far_end(fleet: Fleet) -> None:
    """Each switch port with a cable reports the cable's far end; hosts report no LLDP."""
    states = initial_lab_states(fleet)
    for name, device in fleet.devices.items():
        lldp = {p: v for p, v in states[name].items() if p.startswith("lldp/")}
        if not device.role.is_switch:
            assert lldp == {}
            continue
        expected = {}
        for pl in fleet.cabling.ports(name):
            expected[f"lldp/{pl.local.port}/system"] = pl.peer.device
            expected[f"lldp/{pl.local.port}/port"] = pl.peer.port
        assert lldp == expected


def test_lldp_paths_are_unmanaged() -> None:
    """LLDP facts are read-only: a write to them counts as an unmanaged write."""
    assert is_unmanaged("lldp/Ethernet33/1/system")
    assert not is_unmanaged("interfaces/Ethernet1/mtu")


def test_miscable_swaps_both_ends_of_two_fabric_cables(store: LabStore) -> None:
    """Swapping two uplinks changes what both leaf ports and both spine ports hear."""
    a, b = Endpoint("leaf-r0", "Ethernet33"), Endpoint("leaf-r0", "Ethernet41")
    moved = miscable(store, a, b)
    assert moved == {
        a: Endpoint("spine-2", "Ethernet1"),
        b: Endpoint("spine-1", "Ethernet1"),
        Endpoint("spine-1", "Ethernet1"): b,
        Endpoint("spine-2", "Ethernet1"): a,
    }
    leaf, spine = store.read_running("leaf-r0"), store.read_running("spine-1")
    assert (leaf["lldp/Ethernet33/system"], leaf["lldp/Ethernet33/port"]) == (
        "spine-2",
        "Ethernet1",
    )
    assert (spine["lldp/Ethernet1/system"], spine["lldp/Ethernet1/port"]) == (
        "leaf-r0",
        "Ethernet41",
    )
    assert store.read_startup("leaf-r0")["lldp/Ethernet33/system"] == "spine-2"


def test_miscable_is_not_a_configuration_write(store: LabStore) -> None:
    """Re-plugging cables moves no write counter."""
    before = store.counters()
    miscable(store, Endpoint("leaf-r0", "Ethernet1"), Endpoint("leaf-r1", "Ethernet2"))
    assert store.counters() == before


def test_miscable_twice_restores_the_wire(store: LabStore) -> None:
    """Swapping the same two ports again puts every cable back."""
    before = store.read_all_running()
    a, b = Endpoint("leaf-r0", "Ethernet1"), Endpoint("leaf-r0", "Ethernet33")
    miscable(store, a, b)
    assert store.read_all_running() != before
    miscable(store, a, b)
    assert store.read_all_running() == before


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (("gpu-n01", "eth0"), ("leaf-r0", "Ethernet2"), "gpu-n01:eth0: not a lab switch"),
        (("leaf-r0", "Ethernet99"), ("leaf-r0", "Ethernet2"), "no LLDP neighbour to swap"),
        (("leaf-r0", "Ethernet33"), ("spine-1", "Ethernet1"), "the two ends of one cable"),
        (("leaf-r0", "Ethernet2"), ("leaf-r0", "Ethernet2"), "is given twice"),
    ],
)
def test_miscable_refuses_what_no_technician_could_do(
    store: LabStore, a: tuple[str, str], b: tuple[str, str], message: str
) -> None:
    """Host ports, ports without a neighbour and the two ends of one cable are refused."""
    before = store.read_all_running()
    with pytest.raises(ValueError, match=message):
        miscable(store, Endpoint(*a), Endpoint(*b))
    assert store.read_all_running() == before


def test_swap_far_ends_is_an_involution() -> None:
    """Applying the swap's result as the new wire and swapping again gives the old wire."""
    a, pa = Endpoint("l", "E1"), Endpoint("h1", "eth0")
    b, pb = Endpoint("l", "E2"), Endpoint("h2", "eth0")
    once = swap_far_ends(a, pa, b, pb)
    again = swap_far_ends(a, once[a], b, once[b])
    assert again[a] == pa and again[b] == pb
