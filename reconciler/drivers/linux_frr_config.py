"""FRR's running configuration as plumb's flat BGP state, and the candidate that takes a
device to a target state (pure): the linux-frr driver's renderer, also the one the
real-network lab configures its switches through.

Observed (from ``vtysh -c 'show version' -c 'show running-config'``)::

    router bgp 64601                           bgp/asn = 64601
     bgp router-id 10.255.0.5                  bgp/router_id = "10.255.0.5"
     neighbor 10.0.0.1 remote-as 64600         bgp/neighbors/10.0.0.1/remote_as = 64600
     neighbor fc00::1 remote-as 64600          bgp/neighbors/fc00::1/remote_as = 64600
     neighbor swp1 interface v6only remote-as 64600  .../Ethernet1/remote_as = 64600
     address-family ipv4 unicast
      neighbor 10.0.0.1 route-map FABRIC-IN in .../10.0.0.1/inbound_filter = "FABRIC-IN"
      neighbor swp1 route-map FABRIC-IN in     .../Ethernet1/inbound_filter = "FABRIC-IN"
      maximum-paths 64                         bgp/maximum_paths = 64
     address-family ipv6 unicast
      neighbor fc00::1 activate
      neighbor fc00::1 route-map FABRIC-IN in  .../fc00::1/inbound_filter = "FABRIC-IN"

FRR omits a value equal to its default: no ``maximum-paths`` line means the build's
ECMP width (``--enable-multipath=N`` in ``show version``), no route-map means an
inbound filter of ``""``. The inbound filter is the route map of the neighbour's
family: IPv6 for an IPv6 neighbour (activated there; FRR activates every neighbour in
IPv4 itself), IPv4 for an IPv4 or interface one. An interface neighbour (BGP
unnumbered, IPv4 routes over IPv6 link-local) is keyed by its inventory port: the
device's port -> Linux name map translates both ways, and a name it does not map is
the port's own.

An interface neighbour needs its peer's link-local address, which FRR learns from
router advertisements: the candidate also gives its interface ``ipv6 nd ra-interval
3`` and ``no ipv6 nd suppress-ra`` (zebra's lines, kept when the neighbour goes: RA
on a link is harmless, and bgpd turns RA on there anyway, every 10 s).

:func:`candidate` rewrites only the ``router bgp`` block: the lines plumb manages are
rendered from the target state, every other line of the block (timers, ``network``
statements, per-neighbour options of neighbours that stay) is kept, and the rest of the
configuration is left as it is, so ``frr-reload.py`` changes nothing plumb does not own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Address, ip_address
from typing import Literal

from reconciler.settings import Scalar

_ROUTER = re.compile(r"^router bgp (\d+)\s*$")
_MULTIPATH = re.compile(r"--enable-multipath=(\d+)")
_REMOTE_AS = re.compile(r"^neighbor (\S+) (interface (?:v6only )?)?remote-as (\S+)$")
_ROUTE_MAP_IN = re.compile(r"^neighbor (\S+) route-map (\S+) in$")
_ROUTER_ID = re.compile(r"^bgp router-id (\S+)$")
_MAX_PATHS = re.compile(r"^maximum-paths (\d+)$")
_NEIGHBOR = re.compile(r"^neighbor (\S+) ")
_HEADER = ("Building configuration...", "Current configuration:")
_IPV4_AF, _IPV6_AF = "address-family ipv4 unicast", "address-family ipv6 unicast"
RA_LINES = ("ipv6 nd ra-interval 3", "no ipv6 nd suppress-ra")
"""An interface neighbour's interface: router advertisements every 3 s, so the peer's
link-local address is learned in seconds."""

INTERFACE = "interface v6only"
"""How a new interface neighbour is declared: over IPv6 link-local only, as the intent
means it, even where the port still has an IPv4 /31 (without ``v6only`` FRR peers
over the /31 and IPv4 routes get IPv4 next hops). An interface neighbour the switch
declares without it keeps its form."""

NeighborKind = Literal["ipv4", "ipv6", "interface"]


def neighbor_kind(key: str) -> NeighborKind:
    """How a neighbour key is configured: by IPv4 or IPv6 address, else by interface."""
    try:
        return "ipv4" if ip_address(key).version == 4 else "ipv6"
    except ValueError:
        return "interface"


class ConfigError(ValueError):
    """A running configuration or target state this module cannot work with."""


@dataclass
class BgpBlock:
    """The ``router bgp`` block, split into what plumb manages and what it keeps."""

    asn: int
    router_id: str | None = None
    remote_as: dict[str, str] = field(default_factory=dict)  # by FRR's name (an ifname)
    interfaces: dict[str, str] = field(default_factory=dict)  # `interface [v6only]`, by name
    inbound: dict[str, str] = field(default_factory=dict)  # ipv4 unicast route-map in
    inbound6: dict[str, str] = field(default_factory=dict)  # ipv6 unicast route-map in
    maximum_paths: int | None = None
    kept: list[str] = field(default_factory=list)  # top-level lines, unindented
    kept_ipv4: list[str] = field(default_factory=list)  # ipv4 unicast lines, unindented
    kept_ipv6: list[str] = field(default_factory=list)  # ipv6 unicast lines, unindented
    other_families: list[list[str]] = field(default_factory=list)  # verbatim, indented


def config_body(text: str) -> list[str]:
    """The configuration's lines without vtysh's header and trailing blanks."""
    lines = [line.rstrip() for line in text.splitlines()]
    return [line for line in lines if line and line not in _HEADER]


def multipath_default(version: str) -> int | None:
    """The ECMP width FRR was built with (its ``maximum-paths`` default), if shown."""
    found = _MULTIPATH.search(version)
    return int(found.group(1)) if found else None


def _split(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(lines before the ``router bgp`` block, its lines, lines after it)."""
    start = next((i for i, line in enumerate(lines) if _ROUTER.match(line)), None)
    if start is None:
        return lines, [], []
    end = start + 1
    while end < len(lines) and (lines[end].startswith(" ") or lines[end] == "!"):
        end += 1
    if end < len(lines) and lines[end] == "exit":
        end += 1
    return lines[:start], lines[start:end], lines[end:]


def parse_block(block: list[str]) -> BgpBlock:
    """A ``router bgp`` block (its header first) as managed values and kept lines."""
    header = _ROUTER.match(block[0])
    if header is None:
        raise ConfigError(f"not a router bgp block: {block[0]!r}")
    parsed = BgpBlock(int(header.group(1)))
    family: list[str] | None = None
    for raw in block[1:]:
        line = raw.strip()
        if line in ("!", "exit", ""):
            continue
        if line.startswith("address-family "):
            family = [raw]
            continue
        if family is not None:
            name = family[0].strip()
            if line == "exit-address-family":
                if name not in (_IPV4_AF, _IPV6_AF):
                    parsed.other_families.append([*family, raw])
                family = None
            elif name == _IPV4_AF:
                _ipv4_line(parsed, line)
            elif name == _IPV6_AF:
                _ipv6_line(parsed, line)
            else:
                family.append(raw)
            continue
        _top_line(parsed, line)
    return parsed


def _top_line(parsed: BgpBlock, line: str) -> None:
    if found := _ROUTER_ID.match(line):
        parsed.router_id = found.group(1)
    elif found := _REMOTE_AS.match(line):
        parsed.remote_as[found.group(1)] = found.group(3)
        if found.group(2):
            parsed.interfaces[found.group(1)] = found.group(2).strip()
    else:
        parsed.kept.append(line)


def _ipv4_line(parsed: BgpBlock, line: str) -> None:
    if found := _ROUTE_MAP_IN.match(line):
        parsed.inbound[found.group(1)] = found.group(2)
    elif found := _MAX_PATHS.match(line):
        parsed.maximum_paths = int(found.group(1))
    else:
        parsed.kept_ipv4.append(line)


def _ipv6_line(parsed: BgpBlock, line: str) -> None:
    if found := _ROUTE_MAP_IN.match(line):
        parsed.inbound6[found.group(1)] = found.group(2)
    else:
        parsed.kept_ipv6.append(line)


def _as_number(text: str) -> Scalar:
    return int(text) if text.isdigit() else text


def bgp_state(
    running: str, multipath: int | None, port_of: Mapping[str, str] | None = None
) -> dict[str, Scalar]:
    """The flat BGP state of a running configuration (empty without ``router bgp``);
    ``port_of`` names an interface neighbour's port by its Linux name."""
    _, block, _ = _split(config_body(running))
    if not block:
        return {}
    parsed = parse_block(block)
    state: dict[str, Scalar] = {
        "bgp/asn": parsed.asn,
        "bgp/router_id": parsed.router_id,
        "bgp/maximum_paths": parsed.maximum_paths
        if parsed.maximum_paths is not None
        else multipath,
    }
    ports = port_of or {}
    for peer, remote in parsed.remote_as.items():
        key = ports.get(peer, peer) if peer in parsed.interfaces else peer
        inbound = parsed.inbound6 if neighbor_kind(peer) == "ipv6" else parsed.inbound
        state[f"bgp/neighbors/{key}/remote_as"] = _as_number(remote)
        state[f"bgp/neighbors/{key}/inbound_filter"] = inbound.get(peer, "")
    return state


@dataclass(frozen=True)
class Neighbor:
    """One neighbour of the target: FRR's name for it (an interface neighbour's Linux
    name), how it is configured, its remote AS and inbound filter."""

    name: str
    kind: NeighborKind
    remote_as: Scalar
    inbound: Scalar


_NEIGHBORS, _REMOTE = "bgp/neighbors/", "/remote_as"


def _neighbors(target: Mapping[str, Scalar], ifname_of: Mapping[str, str]) -> list[Neighbor]:
    """The target's neighbours in FRR's names (a port name may hold ``/``)."""
    found: list[Neighbor] = []
    for path, value in target.items():
        if not (path.startswith(_NEIGHBORS) and path.endswith(_REMOTE)) or value is None:
            continue
        key = path[len(_NEIGHBORS) : -len(_REMOTE)]
        kind = neighbor_kind(key)
        name = ifname_of.get(key, key) if kind == "interface" else key
        inbound = target.get(f"{_NEIGHBORS}{key}/inbound_filter")
        found.append(Neighbor(name, kind, value, inbound))
    return sorted(found, key=lambda n: n.name)


def _check(target: Mapping[str, Scalar]) -> int:
    asn = target.get("bgp/asn")
    if not isinstance(asn, int) or isinstance(asn, bool) or not 1 <= asn <= 4294967295:
        raise ConfigError(f"bgp/asn must be an AS number 1-4294967295, not {asn!r}")
    router_id = target.get("bgp/router_id")
    if router_id is not None:
        try:
            IPv4Address(str(router_id))
        except ValueError:
            raise ConfigError(f"bgp/router_id {router_id!r} is no IPv4 address") from None
    return asn


def _peer_lines(lines: list[str], peers: set[str]) -> dict[str, list[str]]:
    """Kept per-neighbour lines by neighbour, for neighbours that stay."""
    out: dict[str, list[str]] = {}
    for line in lines:
        found = _NEIGHBOR.match(line)
        if found and found.group(1) in peers:
            out.setdefault(found.group(1), []).append(line)
    return out


def render_block(
    target: Mapping[str, Scalar], kept: BgpBlock | None, ifname_of: Mapping[str, str]
) -> list[str]:
    """The ``router bgp`` block holding ``target``'s managed values and ``kept``'s others."""
    asn = _check(target)
    base = kept if kept is not None else BgpBlock(asn)
    neighbors = _neighbors(target, ifname_of)
    peers = {n.name for n in neighbors}
    lines = [f"router bgp {asn}"]
    if target.get("bgp/router_id") is not None:
        lines.append(f" bgp router-id {target['bgp/router_id']}")
    lines += [f" {line}" for line in base.kept if not _NEIGHBOR.match(line)]
    own = _peer_lines(base.kept, peers)
    for n in neighbors:
        how = f"{base.interfaces.get(n.name, INTERFACE)} " if n.kind == "interface" else ""
        lines.append(f" neighbor {n.name} {how}remote-as {n.remote_as}")
        lines += [f" {line}" for line in own.get(n.name, [])]
    lines += [" !", f" {_IPV4_AF}"]
    lines += [f"  {line}" for line in base.kept_ipv4 if not _NEIGHBOR.match(line)]
    own_ipv4 = _peer_lines(base.kept_ipv4, peers)
    for n in neighbors:
        lines += [f"  {line}" for line in own_ipv4.get(n.name, [])]
        # An IPv6 neighbour's filter is its own family's; a map it has here stays.
        inbound = base.inbound.get(n.name) if n.kind == "ipv6" else n.inbound
        if inbound:
            lines.append(f"  neighbor {n.name} route-map {inbound} in")
    paths = target.get("bgp/maximum_paths")
    if paths is not None:
        lines.append(f"  maximum-paths {paths}")
    lines.append(" exit-address-family")
    ipv6 = _ipv6_family(base, neighbors)
    if ipv6:
        lines += [" !", f" {_IPV6_AF}", *ipv6, " exit-address-family"]
    for family in base.other_families:
        lines += [" !", *family]
    return [*lines, "exit"]


def _ipv6_family(base: BgpBlock, neighbors: list[Neighbor]) -> list[str]:
    """The ``address-family ipv6 unicast`` lines: kept ones, then each IPv6 neighbour
    activated with its inbound filter (an IPv4 or interface neighbour's kept map stays)."""
    lines = [f"  {line}" for line in base.kept_ipv6 if not _NEIGHBOR.match(line)]
    own = _peer_lines(base.kept_ipv6, {n.name for n in neighbors})
    for n in neighbors:
        activate = f"neighbor {n.name} activate"
        lines += [f"  {line}" for line in own.get(n.name, []) if line != activate]
        inbound = n.inbound if n.kind == "ipv6" else base.inbound6.get(n.name)
        if n.kind == "ipv6":
            lines.append(f"  {activate}")
        if inbound:
            lines.append(f"  neighbor {n.name} route-map {inbound} in")
    return lines


def candidate(
    running: str, target: Mapping[str, Scalar], ifname_of: Mapping[str, str] | None = None
) -> str:
    """``running`` with its ``router bgp`` block holding ``target``'s BGP values (a
    target without ``bgp/asn`` removes the block), and router advertisements on the
    interfaces of its interface neighbours; ``ifname_of`` maps a port to its Linux name."""
    ports = ifname_of or {}
    before, block, after = _split(config_body(running))
    kept = parse_block(block) if block else None
    if target.get("bgp/asn") is None:
        rendered: list[str] = []
    else:
        if kept is not None and kept.asn != target["bgp/asn"]:
            kept = BgpBlock(
                _check(target), kept=kept.kept, kept_ipv4=kept.kept_ipv4, kept_ipv6=kept.kept_ipv6
            )
        rendered = render_block(target, kept, ports)
        interfaces = [n.name for n in _neighbors(target, ports) if n.kind == "interface"]
        before, after, missing = _with_ra(before, after, interfaces)
        rendered = [*missing, *rendered]
    at = len(before) if block else _insert_at(before)
    lines = [*before[:at], *rendered, *before[at:], *after]
    return "\n".join(line for line in lines if line != "end") + "\nend\n"


def _with_ra(
    before: list[str], after: list[str], interfaces: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """``before`` and ``after`` with the RA lines added to the blocks of ``interfaces``
    they hold, and the blocks of those they do not hold."""
    missing: list[str] = []
    for name in interfaces:
        header = f"interface {name}"
        for lines in (before, after):
            if header in lines:
                at = lines.index(header) + 1
                end = at
                while end < len(lines) and lines[end].startswith(" "):
                    end += 1
                held = {line.strip() for line in lines[at:end]}
                lines[end:end] = [f" {ra}" for ra in RA_LINES if ra not in held]
                break
        else:
            missing += [header, *(f" {ra}" for ra in RA_LINES), "exit", "!"]
    return before, after, missing


def _insert_at(lines: list[str]) -> int:
    """Where a new ``router bgp`` block goes: after the global lines, before route-maps."""
    for index, line in enumerate(lines):
        if line.startswith(("route-map ", "ip prefix-list ", "bgp ")) and index > 0:
            return index
    return len(lines)
