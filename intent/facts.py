"""Derived fleet facts: the /31 (and /127) of every routed port and the router id of
every switch.

Addresses are allocated from the per-link-class pools in a stable order (links
sorted by their upper end, in natural port order), the upper end taking the even
address of each /31; ``addressing.ipv6_pools`` give each link a /127 the same way
(RFC 6164), in columns of their own. ``addressing.overrides`` replace single ends (an
IPv6 override the /127 end). Allocated values are owned by the pool declaration,
overrides by their own line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)

from intent.models import Addressing
from intent.resolve import DEVICE, DeviceIntent, Sourced
from inventory.index import CablingIndex, Endpoint, port_sort_key
from inventory.ipv4 import interface_text
from inventory.models import BGP_ROLES, Device, LinkClass
from inventory.problems import Location, Problem
from inventory.source import Document


@dataclass(frozen=True, slots=True)
class PortAddress:
    """An interface address as an integer, a prefix length and an IP version (a view:
    the plan keeps the integers in columns, see :class:`AddressPlan`)."""

    packed: int
    prefixlen: int
    version: int = 4

    @classmethod
    def of(cls, interface: IPv4Interface | IPv6Interface) -> PortAddress:
        return cls(int(interface.ip), interface.network.prefixlen, interface.version)

    @property
    def ip(self) -> IPv4Address | IPv6Address:
        return IPv4Address(self.packed) if self.version == 4 else IPv6Address(self.packed)

    @property
    def subnet(self) -> tuple[int, int]:
        """(network number, prefix length): equal for both ends of one /31 or /127."""
        bits = 32 if self.version == 4 else 128
        return self.packed >> (bits - self.prefixlen), self.prefixlen

    def __str__(self) -> str:
        if self.version == 4:
            return interface_text(self.packed, self.prefixlen)
        return ipv6_interface_text(self.packed, self.prefixlen)


def ipv6_interface_text(packed: int, prefixlen: int) -> str:
    """``fc00::1/127``: an IPv6 interface address as the NOSes print it (compressed)."""
    return f"{IPv6Address(packed)}/{prefixlen}"


Owner = tuple[Location, int]
"""Who owns an address: the pool or override line, and its scope (DEVICE for overrides)."""


class AddressColumn:
    """One address per cable end, by end code: the address as an integer (-1: none), the
    prefix length and the owner (shared by every address of one pool)."""

    def __init__(self, size: int, version: int) -> None:
        self.version = version
        self.packed: list[int] = [-1] * size
        self.prefixlen = bytearray(size)
        self.owner: list[Owner | None] = [None] * size

    def assign(self, end: int, packed: int, prefixlen: int, owner: Owner) -> None:
        self.packed[end] = packed
        self.prefixlen[end] = prefixlen
        self.owner[end] = owner

    def sourced_at(self, end: int) -> Sourced[PortAddress] | None:
        owner = self.owner[end]
        if owner is None:
            return None
        address = PortAddress(self.packed[end], self.prefixlen[end], self.version)
        return Sourced(address, owner[0], owner[1])

    def text_at(self, end: int) -> str | None:
        """``10.0.0.1/31`` or ``fc00::1/127``, or None when the end has no address."""
        packed = self.packed[end]
        if packed < 0:
            return None
        text = interface_text if self.version == 4 else ipv6_interface_text
        return text(packed, self.prefixlen[end])


class AddressPlan(AddressColumn):
    """Cable end -> interface address, device -> router id; each with its owner.

    The IPv4 addresses are this column, the IPv6 ones (``addressing.ipv6_pools``) the
    :attr:`ipv6` column, both indexed by the cabling index's end codes.
    :meth:`address` builds a :class:`Sourced` view on request.
    """

    def __init__(self, cabling: CablingIndex | None = None) -> None:
        self.cabling = cabling if cabling is not None else CablingIndex((), (), {})
        size = 2 * len(self.cabling.links)
        super().__init__(size, 4)
        self.order: list[int] = []
        """End codes in the order their addresses were first given (pools, then overrides
        of ports no pool covers)."""
        self.ipv6 = AddressColumn(size, 6)
        self.router_ids: dict[str, Sourced[IPv4Address]] = {}
        self.problems: list[Problem] = []

    def assign(self, end: int, packed: int, prefixlen: int, owner: Owner) -> None:
        if self.packed[end] < 0:
            self.order.append(end)
        super().assign(end, packed, prefixlen, owner)

    def address(self, device: str, port: str) -> Sourced[PortAddress] | None:
        end = self.cabling.end(device, port)
        return None if end is None else self.sourced_at(end)

    def ipv6_address(self, device: str, port: str) -> Sourced[PortAddress] | None:
        """The /127 end of a cabled port, or None."""
        end = self.cabling.end(device, port)
        return None if end is None else self.ipv6.sourced_at(end)


Pools = dict[LinkClass, tuple[IPv4Network | IPv6Network, Location]]


def _merge_pools(
    sections: Sequence[tuple[Document, Addressing]], plan: AddressPlan, key: str
) -> Pools:
    """Each link class's pool under ``addressing.<key>``; a second declaration is a problem."""
    pools: Pools = {}
    for doc, section in sections:
        declared: dict[LinkClass, IPv4Network] | dict[LinkClass, IPv6Network] = getattr(
            section, key
        )
        for link_class, network in declared.items():
            where = doc.where("addressing", key, link_class.value)
            if link_class in pools:
                plan.problems.append(
                    Problem(
                        where,
                        f"{key[:-1].replace('_', ' ')} for {link_class.value} is already "
                        f"defined at {pools[link_class][1]}",
                    )
                )
            else:
                pools[link_class] = (network, where)
    return pools


def _merge_loopbacks(
    sections: Sequence[tuple[Document, Addressing]], plan: AddressPlan
) -> tuple[IPv4Network, Location] | None:
    loopbacks: tuple[IPv4Network, Location] | None = None
    for doc, section in sections:
        if section.loopbacks is not None:
            where = doc.where("addressing", "loopbacks")
            if loopbacks is not None:
                plan.problems.append(Problem(where, f"loopbacks already defined at {loopbacks[1]}"))
            else:
                loopbacks = (section.loopbacks, where)
    return loopbacks


def _pool_members(cabling: CablingIndex, link_class: LinkClass) -> list[int]:
    """The cables of one class in allocation order: by upper end, then lower end, each
    device by name and its ports in natural order.

    The index lists each device's ports in natural order already, so the cables of one
    upper device need sorting only when two of its port names share a natural-order key.
    """
    device, port, classes = cabling.end_device, cabling.end_port, cabling.link_class
    key = port_sort_key
    members: list[int] = []
    for upper in sorted(cabling.devices()):
        block = [
            end >> 1
            for end in cabling.ends(upper).values()
            if end & 1 and classes[end >> 1] is link_class
        ]
        if upper in cabling.ties:
            block.sort(key=lambda i: (key(port[2 * i + 1]), device[2 * i], key(port[2 * i])))
        members += block
    return members


def _allocate(plan: AddressPlan, members: list[int], base: int, owner: Owner) -> None:
    """Cable i of the pool gets the /31 at ``base + 2 i``, its upper end the even address
    (no end of a pool's cables has an address yet: each cable has one class)."""
    packed, prefixlen, owners, order = plan.packed, plan.prefixlen, plan.owner, plan.order
    address = base
    for index in members:
        upper = 2 * index + 1
        lower = upper - 1
        packed[upper], packed[lower] = address, address + 1
        prefixlen[upper] = prefixlen[lower] = 31
        owners[upper] = owners[lower] = owner
        order += (upper, lower)
        address += 2


def _allocate6(column: AddressColumn, members: list[int], base: int, owner: Owner) -> None:
    """Cable i of an IPv6 pool gets the /127 at ``base + 2 i``, its upper end the even
    address (as :func:`_allocate` does with /31s)."""
    address = base
    for index in members:
        upper = 2 * index + 1
        column.assign(upper, address, 127, owner)
        column.assign(upper - 1, address + 1, 127, owner)
        address += 2


def _allocate_pools(plan: AddressPlan, cabling: CablingIndex, pools: Pools) -> None:
    for link_class, (network, where) in pools.items():
        members = _pool_members(cabling, link_class)
        width = 31 if network.version == 4 else 127
        if len(members) * 2 > network.num_addresses:
            plan.problems.append(
                Problem(
                    where,
                    f"pool {network} holds {network.num_addresses // 2} "
                    f"/{width}s but {link_class.value} has {len(members)} links",
                )
            )
            continue
        if network.version == 4:
            _allocate(plan, members, int(network.network_address), (where, 0))
        else:
            _allocate6(plan.ipv6, members, int(network.network_address), (where, 0))


def plan_addresses(
    sections: Sequence[tuple[Document, Addressing]],
    devices: Mapping[str, Device],
    cabling: CablingIndex,
    intent: Mapping[str, DeviceIntent],
) -> AddressPlan:
    """Allocate /31s (and /127s) per routed link and router ids per switch, then apply
    overrides."""
    plan = AddressPlan(cabling)
    pools = _merge_pools(sections, plan, "pools")
    ipv6_pools = _merge_pools(sections, plan, "ipv6_pools")
    loopbacks = _merge_loopbacks(sections, plan)
    _allocate_pools(plan, cabling, pools)
    _allocate_pools(plan, cabling, ipv6_pools)
    seen: dict[tuple[Endpoint, int], Location] = {}
    for doc, section in sections:
        for i, override in enumerate(section.overrides):
            where = doc.where("addressing", "overrides", i)
            end = Endpoint(override.device, override.port)
            address = override.address
            code = cabling.end(override.device, override.port)
            if code is None:
                plan.problems.append(Problem(where, f"override for {end}: no such cabled port"))
            elif (end, address.version) in seen:
                plan.problems.append(
                    Problem(where, f"{end} is already overridden at {seen[end, address.version]}")
                )
            else:
                seen[end, address.version] = where
                packed, prefixlen = int(address.ip), address.network.prefixlen
                if address.version == 4:
                    plan.assign(code, packed, prefixlen, (where, DEVICE))
                else:
                    plan.ipv6.assign(code, packed, prefixlen, (where, DEVICE))
    _plan_router_ids(plan, devices, intent, loopbacks)
    return plan


def _plan_router_ids(
    plan: AddressPlan,
    devices: Mapping[str, Device],
    intent: Mapping[str, DeviceIntent],
    loopbacks: tuple[IPv4Network, Location] | None,
) -> None:
    switches = sorted(name for name, d in devices.items() if d.role in BGP_ROLES)
    next_host = 1
    for name in switches:
        explicit = intent[name].get("bgp", "router_id") if name in intent else None
        if explicit is not None and explicit.value is not None:
            plan.router_ids[name] = explicit
            continue
        if loopbacks is None:
            continue
        network, where = loopbacks
        if next_host >= network.num_addresses - 1:
            plan.problems.append(
                Problem(where, f"loopbacks {network} is too small for {len(switches)} switches")
            )
            return
        plan.router_ids[name] = Sourced(
            IPv4Address(int(network.network_address) + next_host), where
        )
        next_host += 1
