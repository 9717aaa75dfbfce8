"""Derived fleet facts: the /31 of every routed port and the router id of every switch.

Addresses are allocated from the per-link-class pools in a stable order (links
sorted by their upper end, in natural port order), the upper end taking the even
address of each /31; ``addressing.overrides`` replace single ends. Allocated values
are owned by the pool declaration, overrides by their own line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network

from intent.models import Addressing
from intent.settings import DEVICE, DeviceIntent, Sourced
from inventory.index import CablingIndex, Endpoint, port_sort_key
from inventory.models import BGP_ROLES, Device, LinkClass
from inventory.problems import Location, Problem
from inventory.source import Document


@dataclass(frozen=True, slots=True)
class PortAddress:
    """An interface address as an integer and a prefix length.

    A 4,096-node fleet has 130,000+ routed ports; ``ipaddress.IPv4Interface`` costs
    ~25 us each to build, this costs nothing until someone asks for ``ip``.
    """

    packed: int
    prefixlen: int

    @classmethod
    def of(cls, interface: IPv4Interface) -> PortAddress:
        return cls(int(interface.ip), interface.network.prefixlen)

    @property
    def ip(self) -> IPv4Address:
        return IPv4Address(self.packed)

    @property
    def subnet(self) -> tuple[int, int]:
        """(network number, prefix length): equal for both ends of one /31."""
        return self.packed >> (32 - self.prefixlen), self.prefixlen

    def __str__(self) -> str:
        p = self.packed
        return f"{p >> 24}.{(p >> 16) & 255}.{(p >> 8) & 255}.{p & 255}/{self.prefixlen}"


@dataclass
class AddressPlan:
    """Endpoint -> interface address, device -> router id; each with its owner."""

    addresses: dict[Endpoint, Sourced[PortAddress]] = field(default_factory=dict)
    router_ids: dict[str, Sourced[IPv4Address]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def address(self, device: str, port: str) -> Sourced[PortAddress] | None:
        return self.addresses.get(Endpoint(device, port))


def _merge_pools(
    sections: Sequence[tuple[Document, Addressing]], plan: AddressPlan
) -> tuple[dict[LinkClass, tuple[IPv4Network, Location]], tuple[IPv4Network, Location] | None]:
    pools: dict[LinkClass, tuple[IPv4Network, Location]] = {}
    loopbacks: tuple[IPv4Network, Location] | None = None
    for doc, section in sections:
        for link_class, network in section.pools.items():
            where = doc.where("addressing", "pools", link_class.value)
            if link_class in pools:
                plan.problems.append(
                    Problem(
                        where,
                        f"pool for {link_class.value} is already defined at {pools[link_class][1]}",
                    )
                )
            else:
                pools[link_class] = (network, where)
        if section.loopbacks is not None:
            where = doc.where("addressing", "loopbacks")
            if loopbacks is not None:
                plan.problems.append(Problem(where, f"loopbacks already defined at {loopbacks[1]}"))
            else:
                loopbacks = (section.loopbacks, where)
    return pools, loopbacks


def plan_addresses(
    sections: Sequence[tuple[Document, Addressing]],
    devices: Mapping[str, Device],
    cabling: CablingIndex,
    intent: Mapping[str, DeviceIntent],
) -> AddressPlan:
    """Allocate /31s per routed link and router ids per switch, then apply overrides."""
    plan = AddressPlan()
    pools, loopbacks = _merge_pools(sections, plan)
    for link_class, (network, where) in pools.items():
        members = sorted(
            (link for link in cabling.links if link.link_class is link_class),
            key=lambda link: (
                link.b,
                port_sort_key(link.b_port),
                link.a,
                port_sort_key(link.a_port),
            ),
        )
        if len(members) * 2 > network.num_addresses:
            plan.problems.append(
                Problem(
                    where,
                    f"pool {network} holds {network.num_addresses // 2} "
                    f"/31s but {link_class.value} has {len(members)} links",
                )
            )
            continue
        base = int(network.network_address)
        for i, link in enumerate(members):
            upper = PortAddress(base + 2 * i, 31)
            lower = PortAddress(base + 2 * i + 1, 31)
            plan.addresses[Endpoint(link.b, link.b_port)] = Sourced(upper, where)
            plan.addresses[Endpoint(link.a, link.a_port)] = Sourced(lower, where)
    seen: dict[Endpoint, Location] = {}
    for doc, section in sections:
        for i, override in enumerate(section.overrides):
            where = doc.where("addressing", "overrides", i)
            end = Endpoint(override.device, override.port)
            if cabling.at(override.device, override.port) is None:
                plan.problems.append(Problem(where, f"override for {end}: no such cabled port"))
            elif end in seen:
                plan.problems.append(Problem(where, f"{end} is already overridden at {seen[end]}"))
            else:
                seen[end] = where
                plan.addresses[end] = Sourced(PortAddress.of(override.address), where, scope=DEVICE)
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
