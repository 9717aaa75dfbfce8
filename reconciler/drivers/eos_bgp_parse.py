"""EOS ``router bgp`` -> plumb's flat state, and the structure a writer keeps (pure).

Part of the parsing half of the EOS driver (:mod:`~reconciler.drivers.eos_parse`
reads the rest of the running config). What real EOS configurations hold:

* ``router bgp`` in asplain or asdot (``65101.65101``, ``bgp asn notation asdot``);
  ``router-id``, ``maximum-paths N [ecmp M]``.
* Neighbours and peer groups (``neighbor G peer group`` / the older ``peer-group``);
  a neighbour inherits ``remote-as`` and route maps from its group; group names are
  not neighbours. Other neighbour options are not plumb's and are not read.
* **Interface neighbours** (BGP unnumbered, EOS 4.30+): ``neighbor interface Et1-4
  peer-group G remote-as N`` (or ``peer-filter F``: its AS reads as that text) is one
  neighbour per port, keyed by the full port name (``Ethernet1``), always in group G.
  Their sessions run over IPv6 link-local and carry IPv4 routes (RFC 8950), so their
  route maps are the IPv4 family's, which only G can hold. A link-local neighbour
  configured by address is keyed with its zone spelled out (``fe80::1%Ethernet1``).
* **Address families.** ``address-family ipv4`` and ``ipv6`` blocks carry their own
  ``neighbor X route-map NAME in|out`` lines, more specific than the router-level
  ones for that family. The route map in force for a neighbour, per family and
  direction, is the first set of: its own line under the family, its peer group's
  line under the family, its own router-level line, its peer group's router-level
  line (:meth:`BgpConfig.levels`).

An AS number that is not valid asplain or asdot is observed as its text: never a
failure of the device, and a value plumb neither compares nor writes from (a change
based on it is refused when its value is validated). Observed per neighbour (IPv4
and IPv6 addresses, interface names): ``remote_as``; ``inbound_filter``
and ``outbound_filter``, the route maps in force for the family of the neighbour's
own address (``""``: none); and ``<family>_inbound_filter`` /
``<family>_outbound_filter`` for the other family when the neighbour (or its group)
is activated there. Where the device answers ``show bgp neighbors vrf all | json``
(revision 2: ``routeMapInbound``/``routeMapOutbound`` per peer),
:func:`reported_policies` replaces the inferred ``inbound_filter``/``outbound_filter``
with what the device says is in force. Only the IPv4 neighbours' ``inbound_filter``
is ever written (:mod:`~reconciler.drivers.eos_lines`, at the level that holds it).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.eos_ranges import expand, scoped
from reconciler.settings import Scalar

FAMILIES = ("ipv4", "ipv6")
DIRECTIONS = {"in": "inbound_filter", "out": "outbound_filter"}
_ASDOT = re.compile(r"^(\d+)\.(\d+)$")


def parse_asn(text: str) -> int:
    """An AS number in asplain (``4259905613``) or asdot (``65001.65101``)."""
    dotted = _ASDOT.match(text)
    if dotted is None:
        return int(text)
    high, low = int(dotted.group(1)), int(dotted.group(2))
    if high > 65535 or low > 65535:
        raise ValueError(f"AS number {text!r} is not valid asdot")
    return high * 65536 + low


def read_asn(text: str) -> int | str:
    """An AS number as configured; text that is not one stays text (that field's
    unknown: no value to compare, and nothing is written from it)."""
    try:
        return parse_asn(text)
    except ValueError:
        return text


def format_asn(asn: int, asdot: bool) -> str:
    """``asn`` as the device writes it: asdot for 4-byte AS numbers when it uses asdot."""
    return f"{asn // 65536}.{asn % 65536}" if asdot and asn > 65535 else str(asn)


def peer_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a neighbour is keyed by, or None for a peer-group name."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def peer_family(peer: str) -> str:
    """The address family of a neighbour's own address."""
    address = peer_address(peer)
    return "ipv6" if address is not None and address.version == 6 else "ipv4"


@dataclass
class Peer:
    """A neighbour or peer group as configured at router level (its own lines only);
    ``interface``: a ``neighbor interface`` port."""

    group: str | None = None
    interface: bool = False
    remote_as: int | str | None = None
    route_map_in: str | None = None
    route_map_out: str | None = None

    def route_map(self, direction: str) -> str | None:
        return self.route_map_in if direction == "in" else self.route_map_out


@dataclass
class Family:
    """One ``address-family`` block: its route maps and activations, by peer or group."""

    route_map_in: dict[str, str] = field(default_factory=dict)
    route_map_out: dict[str, str] = field(default_factory=dict)
    activated: set[str] = field(default_factory=set)

    def route_map(self, who: str, direction: str) -> str | None:
        return (self.route_map_in if direction == "in" else self.route_map_out).get(who)


Level = tuple[str, str]
"""Where a route map is configured: (``address-family NAME`` or ``router``, peer or group)."""


@dataclass
class BgpConfig:
    """What plumb reads from ``router bgp``, with the structure a writer must keep."""

    asn: int | str | None = None
    asdot: bool = False
    router_id: str | None = None
    maximum_paths: int | None = None
    peers: dict[str, Peer] = field(default_factory=dict)  # addresses and group names
    families: dict[str, Family] = field(default_factory=dict)

    def inherited(self, peer: str) -> Peer:
        """The peer group ``peer`` belongs to (an empty one when none)."""
        group = self.peers[peer].group
        return self.peers.get(group, Peer()) if group else Peer()

    def neighbours(self) -> list[str]:
        """Addresses, then interface ports."""
        found = (p for p, v in self.peers.items() if v.interface or peer_address(p) is not None)
        return sorted(found, key=_peer_order)

    def remote_as(self, peer: str) -> int | str | None:
        own = self.peers[peer].remote_as
        return self.inherited(peer).remote_as if own is None else own

    def levels(self, peer: str, family: str, direction: str) -> Iterator[tuple[Level, str | None]]:
        """Every place a route map for ``peer`` in ``family`` can be configured, most
        specific first, with the route map configured there (None: not there)."""
        group = self.peers[peer].group if peer in self.peers else None
        block = self.families.get(family, Family())
        yield ("address-family " + family, peer), block.route_map(peer, direction)
        if group:
            yield ("address-family " + family, group), block.route_map(group, direction)
        yield ("router", peer), self.peers.get(peer, Peer()).route_map(direction)
        if group:
            yield ("router", group), self.peers.get(group, Peer()).route_map(direction)

    def holder(self, peer: str, family: str, direction: str) -> tuple[Level, str] | None:
        """Where the route map in force is configured, and its name (None: no route map)."""
        for level, name in self.levels(peer, family, direction):
            if name:
                return level, name
        return None

    def policy(self, peer: str, family: str, direction: str) -> str:
        """The route map in force (``""``: none)."""
        found = self.holder(peer, family, direction)
        return "" if found is None else found[1]

    def activated(self, peer: str, family: str) -> bool:
        block = self.families.get(family, Family())
        group = self.peers[peer].group if peer in self.peers else None
        return peer in block.activated or (group is not None and group in block.activated)


def _peer_order(peer: str) -> tuple[int, int, tuple[int, ...]]:
    address = peer_address(peer)
    if address is None:  # an interface neighbour: after the addresses, in port order
        return 7, 0, tuple(int(n) for n in re.findall(r"\d+", peer))
    return address.version, int(address), ()


def _children(block: Any) -> Mapping[str, Any]:
    if isinstance(block, Mapping):
        cmds: Mapping[str, Any] = block.get("cmds") or {}
        return cmds
    return {}


def _family(bgp: BgpConfig, name: str, block: Any) -> None:
    family = bgp.families.setdefault(name, Family())
    for line in _children(block):
        match line.split():
            case ["neighbor", who, "route-map", route_map, "in"]:
                family.route_map_in[scoped(who)] = route_map
            case ["neighbor", who, "route-map", route_map, "out"]:
                family.route_map_out[scoped(who)] = route_map
            case ["neighbor", who, "activate"]:
                family.activated.add(scoped(who))


def read_bgp(bgp: BgpConfig, asn: str, block: Any) -> None:
    """The lines of ``router bgp ASN`` (and its ipv4/ipv6 address families) into ``bgp``."""
    bgp.asn = read_asn(asn)
    bgp.asdot = bgp.asdot or "." in asn
    for line, sub in _children(block).items():
        match line.split():
            case ["router-id", rid]:
                bgp.router_id = rid
            case ["maximum-paths", paths, *_]:
                bgp.maximum_paths = int(paths)
            case ["bgp", "asn", "notation", notation]:
                bgp.asdot = notation == "asdot"
            case ["address-family", ("ipv4" | "ipv6") as family]:
                _family(bgp, family, sub)
            case ["neighbor", "interface", ports, ("peer-group" | "peer"), *rest]:
                _interfaces(bgp, ports, rest)
            case ["neighbor", name, "peer", "group"] | ["neighbor", name, "peer-group"]:
                bgp.peers.setdefault(name, Peer())
            case ["neighbor", peer, "peer", "group", name] | ["neighbor", peer, "peer-group", name]:
                bgp.peers.setdefault(scoped(peer), Peer()).group = name
            case ["neighbor", peer, "remote-as", remote]:
                bgp.peers.setdefault(scoped(peer), Peer()).remote_as = read_asn(remote)
            case ["neighbor", peer, "route-map", name, "in"]:
                bgp.peers.setdefault(scoped(peer), Peer()).route_map_in = name
            case ["neighbor", peer, "route-map", name, "out"]:
                bgp.peers.setdefault(scoped(peer), Peer()).route_map_out = name


def _interfaces(bgp: BgpConfig, ports: str, rest: list[str]) -> None:
    """``neighbor interface PORTS peer-group G remote-as N | peer-filter F``."""
    if rest[:1] == ["group"]:  # "peer group G": the spelling of newer releases
        rest = rest[1:]
    match rest:
        case [group, "remote-as", remote]:
            remote_as: int | str = read_asn(remote)
        case [group, "peer-filter", name]:
            remote_as = f"peer-filter {name}"
        case _:
            return
    for port in expand(ports):
        bgp.peers[port] = Peer(group=group, interface=True, remote_as=remote_as)


def bgp_state(bgp: BgpConfig) -> dict[str, Scalar]:
    """The flat ``bgp/*`` settings ``router bgp`` holds."""
    out: dict[str, Scalar] = {
        "bgp/asn": bgp.asn,
        "bgp/router_id": bgp.router_id if bgp.asn is not None else None,
        "bgp/maximum_paths": None,
    }
    if bgp.asn is None:
        return out
    out["bgp/maximum_paths"] = bgp.maximum_paths or 1
    for peer in bgp.neighbours():
        base = f"bgp/neighbors/{peer}"
        own = peer_family(peer)
        out[f"{base}/remote_as"] = bgp.remote_as(peer)
        for direction, name in DIRECTIONS.items():
            out[f"{base}/{name}"] = bgp.policy(peer, own, direction)
        for family in FAMILIES:
            if family != own and bgp.activated(peer, family):
                for direction, name in DIRECTIONS.items():
                    out[f"{base}/{family}_{name}"] = bgp.policy(peer, family, direction)
    return out


def parse_bgp_peers(data: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """``show bgp neighbors vrf all | json`` (revision 2) -> the default VRF's peers with
    the (inbound, outbound) route maps the device has in force (``""``: none). Peers
    known by interface only (no ``peerAddress``) are left out."""
    vrfs: Mapping[str, Any] = data.get("vrfs", {})
    found: dict[str, tuple[str, str]] = {}
    for entry in vrfs.get("default", {}).get("peerList", []):
        address = entry.get("peerAddress")
        if not isinstance(address, str) or peer_address(address) is None:
            continue
        inbound = entry.get("routeMapInbound") or ""
        outbound = entry.get("routeMapOutbound") or ""
        found[str(ipaddress.ip_address(address))] = (str(inbound), str(outbound))
    return found


def reported_policies(
    state: Mapping[str, Scalar], reported: Mapping[str, tuple[str, str]]
) -> dict[str, Scalar]:
    """``state`` with each configured neighbour's ``inbound_filter``/``outbound_filter``
    taken from what the device reports in force, where it reports the neighbour."""
    out = dict(state)
    for peer, (inbound, outbound) in reported.items():
        base = f"bgp/neighbors/{peer}"
        if f"{base}/remote_as" in out:
            out[f"{base}/inbound_filter"] = inbound
            out[f"{base}/outbound_filter"] = outbound
    return out
