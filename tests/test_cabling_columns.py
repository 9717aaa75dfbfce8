"""The cabling index and the address plan as columns: end codes, their views, the cable
locations found on request, and /31s that match an allocation done with ``ipaddress``."""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network

import pytest

from intent.facts import PortAddress
from intent.resolve import DEVICE
from inventory.index import CablingIndex, Endpoint, port_sort_key
from inventory.models import Device, Link
from inventory.problems import Location
from tests.fleetcopy import FleetCopy


def _device(name: str, role: str = "leaf") -> Device:
    return Device.model_validate(
        {
            "name": name,
            "role": role,
            "vendor": "arista",
            "model": "7060DX5-64S",
            "platform": "eos",
            "rack": "r1",
            "mgmt": "192.0.2.1",
        }
    )


def _link(a: str, a_port: str, b: str, b_port: str) -> Link:
    return Link.model_validate(
        {"a": a, "a_port": a_port, "b": b, "b_port": b_port, "class": "leaf-spine", "length_m": 3.0}
    )


def _index(links: list[Link]) -> CablingIndex:
    devices = {name: _device(name) for name in ("l1", "l2", "s1")}
    where = [Location("links.yaml", i + 1, 3) for i in range(len(links))]
    return CablingIndex(links, where, devices)


def test_end_codes_pair_the_two_ends_of_a_cable() -> None:
    """End 2i is a cable's a end, 2i+1 its b end; the peer of an end is end ^ 1."""
    index = _index([_link("l1", "Ethernet33", "s1", "Ethernet1"), _link("l2", "E1", "s1", "E2")])
    end = index.end("s1", "E2")
    assert end == 3
    assert index.endpoint(end ^ 1) == Endpoint("l2", "E1")
    assert index.end("l1", "Ethernet33") == 0
    assert index.end("l1", "Ethernet34") is None
    assert index.end("nobody", "E1") is None


def test_ports_come_in_natural_order_with_views_that_match_the_columns() -> None:
    """A device's ports are in natural port order; each view names the columns' ends."""
    index = _index(
        [
            _link("l1", "Ethernet10", "s1", "Ethernet3"),
            _link("l1", "Ethernet2", "s1", "Ethernet1"),
            _link("l1", "Ethernet1/2", "s1", "Ethernet2"),
        ]
    )
    assert list(index.ends("l1")) == sorted(
        ["Ethernet10", "Ethernet2", "Ethernet1/2"], key=port_sort_key
    )
    for pl in index.ports("s1"):
        end = index.end(pl.local.device, pl.local.port)
        assert end is not None
        assert pl.peer == index.endpoint(end ^ 1)
        assert pl.link is index.links[end >> 1]
        assert pl.index == end >> 1
    assert index.at("s1", "Ethernet3") == index.ports("s1")[2]


def test_refused_cables_are_reported_and_left_out() -> None:
    """A port cabled twice, an unknown device and a cable to itself are problems at the
    cable's line, and none of them is indexed."""
    index = _index(
        [
            _link("l1", "E1", "s1", "E1"),
            _link("l2", "E1", "s1", "E1"),
            _link("l1", "E2", "ghost", "E1"),
            _link("l2", "E5", "l2", "E5"),
        ]
    )
    assert [(p.location.line, p.message) for p in index.problems] == [
        (2, "port s1:E1 is already cabled at links.yaml:1:3"),
        (3, "link end ghost:E1: no device 'ghost'"),
        (4, "link connects l2:E5 to itself"),
    ]
    assert index.endpoint(1) == Endpoint("s1", "E1")
    assert index.at("s1", "E1") is not None and index.at("s1", "E1").peer.device == "l1"  # type: ignore[union-attr]
    assert index.end("l2", "E1") is None and index.end("l1", "E2") is None
    assert list(index.ends("l2")) == []


def test_link_locations_point_into_each_file(orion: FleetCopy) -> None:
    """Cable i's location is its entry in the file that declares it, across files."""
    fleet = orion.load()
    locations = fleet.where.links
    assert len(locations) == len(fleet.links)
    backend = fleet.where.docs["inventory/links/backend.yaml"]
    frontend = fleet.where.docs["inventory/links/frontend.yaml"]
    backend_count = len(backend.data["links"])
    assert locations[0] == backend.where("links", 0)
    assert locations[backend_count - 1] == backend.where("links", backend_count - 1)
    assert locations[backend_count] == frontend.where("links", 0)
    assert locations[-1] == frontend.where("links", len(frontend.data["links"]) - 1)
    with pytest.raises(IndexError):
        locations[len(locations)]


def test_pool_addresses_match_an_allocation_with_ipaddress(orion: FleetCopy) -> None:
    """Every routed end holds the /31 that allocating the pool in cable order (upper end
    even) with ``ipaddress`` gives it, owned by the pool line."""
    fleet = orion.load()
    pools = {"leaf-spine": IPv4Network("10.0.0.0/16"), "host-leaf": IPv4Network("10.1.0.0/16")}
    for link_class, network in pools.items():
        members = sorted(
            (link for link in fleet.links if link.link_class.value == link_class),
            key=lambda k: (k.b, port_sort_key(k.b_port), k.a, port_sort_key(k.a_port)),
        )
        hosts = [network.network_address + i for i in range(2 * len(members))]
        for i, link in enumerate(members):
            upper = fleet.addresses.address(link.b, link.b_port)
            lower = fleet.addresses.address(link.a, link.a_port)
            assert upper is not None and lower is not None
            assert str(upper.value) == str(IPv4Interface(f"{hosts[2 * i]}/31"))
            assert str(lower.value) == str(IPv4Interface(f"{hosts[2 * i + 1]}/31"))
            assert upper.origin.file == "intent/addressing.yaml" and upper.scope == 0
    frontend = next(link for link in fleet.links if link.link_class.value == "frontend")
    assert fleet.addresses.address(frontend.a, frontend.a_port) is None


def test_an_override_replaces_one_end_at_device_scope(orion: FleetCopy) -> None:
    """An override keeps the end's place, takes its own prefix and is owned by its line."""
    orion.append(
        "intent/addressing.yaml",
        "  overrides:\n    - {device: leaf-r0, port: Ethernet33, address: 10.9.0.4/30}\n",
    )
    fleet = orion.load()
    found = fleet.addresses.address("leaf-r0", "Ethernet33")
    assert found is not None
    assert found.value == PortAddress(int(IPv4Interface("10.9.0.4/30").ip), 30)
    assert fleet.addresses.text_at(fleet.cabling.end("leaf-r0", "Ethernet33") or 0) == "10.9.0.4/30"
    assert found.scope == DEVICE
    assert found.origin.line == 10


def test_pool_order_breaks_port_name_ties_by_the_lower_end() -> None:
    """Two port names of one natural-order key (Ethernet1, Ethernet01) on the upper device
    are ordered by the lower end, as the full allocation key orders them."""
    from intent.facts import _pool_members
    from inventory.models import LinkClass

    links = [
        _link("l2", "E1", "s1", "Ethernet1"),
        _link("l1", "E1", "s1", "Ethernet01"),
        _link("l1", "E2", "s1", "Ethernet2"),
        _link("l2", "E2", "l1", "Ethernet1"),
    ]
    index = _index(links)
    assert index.ties == {"s1"}
    members = _pool_members(index, LinkClass.leaf_spine)
    expected = sorted(
        range(len(links)),
        key=lambda i: (
            links[i].b,
            port_sort_key(links[i].b_port),
            links[i].a,
            port_sort_key(links[i].a_port),
        ),
    )
    assert members == expected == [3, 1, 0, 2]
