"""Addresses written from integers match what ``ipaddress`` writes, for every address."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface

from hypothesis import given
from hypothesis import strategies as st

from intent.facts import PortAddress
from inventory.ipv4 import interface_text, ipv4_text

ADDRESSES = st.integers(min_value=0, max_value=2**32 - 1)
PREFIXES = st.integers(min_value=0, max_value=32)


@given(ADDRESSES)
def test_ipv4_text_is_what_ipaddress_writes(packed: int) -> None:
    """Dotted-quad text of any 32-bit address equals str(IPv4Address)."""
    assert ipv4_text(packed) == str(IPv4Address(packed))


@given(ADDRESSES, PREFIXES)
def test_interface_text_is_what_ipaddress_writes(packed: int, prefixlen: int) -> None:
    """Address/prefix text equals str(IPv4Interface) for any address and prefix length."""
    assert interface_text(packed, prefixlen) == str(IPv4Interface((packed, prefixlen)))


@given(ADDRESSES, PREFIXES)
def test_port_address_round_trips_through_ipaddress(packed: int, prefixlen: int) -> None:
    """A PortAddress built from an IPv4Interface prints and compares as that interface."""
    interface = IPv4Interface((packed, prefixlen))
    port = PortAddress.of(interface)
    assert str(port) == str(interface)
    assert port.ip == interface.ip
    assert port.subnet == (int(interface.network.network_address) >> (32 - prefixlen), prefixlen)


def test_edges_of_the_range() -> None:
    """The first and last addresses, and octets of one, two and three digits."""
    assert ipv4_text(0) == "0.0.0.0"
    assert ipv4_text(2**32 - 1) == "255.255.255.255"
    assert interface_text(int(IPv4Address("10.9.100.1")), 31) == "10.9.100.1/31"
