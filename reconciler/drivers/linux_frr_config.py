"""FRR's running configuration as plumb's flat BGP state, and the candidate that takes a
device to a target state (pure): the linux-frr driver's renderer, also the one the
real-network lab configures its switches through.

Observed (from ``vtysh -c 'show version' -c 'show running-config'``)::

    router bgp 64601                           bgp/asn = 64601
     bgp router-id 10.255.0.5                  bgp/router_id = "10.255.0.5"
     neighbor 10.0.0.1 remote-as 64600         bgp/neighbors/10.0.0.1/remote_as = 64600
     address-family ipv4 unicast
      neighbor 10.0.0.1 route-map FABRIC-IN in .../10.0.0.1/inbound_filter = "FABRIC-IN"
      maximum-paths 64                         bgp/maximum_paths = 64

FRR omits a value equal to its default: no ``maximum-paths`` line means the build's
ECMP width (``--enable-multipath=N`` in ``show version``), no route-map means an
inbound filter of ``""``. A neighbour given by interface name (BGP unnumbered) is
reported under that name.

:func:`candidate` rewrites only the ``router bgp`` block: the lines plumb manages are
rendered from the target state, every other line of the block (timers, ``network``
statements, per-neighbour options of neighbours that stay) is kept, and the rest of the
configuration is left as it is, so ``frr-reload.py`` changes nothing plumb does not own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Address

from reconciler.settings import Scalar

_ROUTER = re.compile(r"^router bgp (\d+)\s*$")
_MULTIPATH = re.compile(r"--enable-multipath=(\d+)")
_REMOTE_AS = re.compile(r"^neighbor (\S+) (?:interface )?remote-as (\S+)$")
_ROUTE_MAP_IN = re.compile(r"^neighbor (\S+) route-map (\S+) in$")
_ROUTER_ID = re.compile(r"^bgp router-id (\S+)$")
_MAX_PATHS = re.compile(r"^maximum-paths (\d+)$")
_NEIGHBOR = re.compile(r"^neighbor (\S+) ")
_HEADER = ("Building configuration...", "Current configuration:")


class ConfigError(ValueError):
    """A running configuration or target state this module cannot work with."""


@dataclass
class BgpBlock:
    """The ``router bgp`` block, split into what plumb manages and what it keeps."""

    asn: int
    router_id: str | None = None
    remote_as: dict[str, str] = field(default_factory=dict)
    inbound: dict[str, str] = field(default_factory=dict)
    maximum_paths: int | None = None
    kept: list[str] = field(default_factory=list)  # top-level lines, unindented
    kept_ipv4: list[str] = field(default_factory=list)  # ipv4 unicast lines, unindented
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
            if line == "exit-address-family":
                if family[0].strip() != "address-family ipv4 unicast":
                    parsed.other_families.append([*family, raw])
                family = None
            elif family[0].strip() == "address-family ipv4 unicast":
                _ipv4_line(parsed, line)
            else:
                family.append(raw)
            continue
        _top_line(parsed, line)
    return parsed


def _top_line(parsed: BgpBlock, line: str) -> None:
    if found := _ROUTER_ID.match(line):
        parsed.router_id = found.group(1)
    elif found := _REMOTE_AS.match(line):
        parsed.remote_as[found.group(1)] = found.group(2)
    else:
        parsed.kept.append(line)


def _ipv4_line(parsed: BgpBlock, line: str) -> None:
    if found := _ROUTE_MAP_IN.match(line):
        parsed.inbound[found.group(1)] = found.group(2)
    elif found := _MAX_PATHS.match(line):
        parsed.maximum_paths = int(found.group(1))
    else:
        parsed.kept_ipv4.append(line)


def _as_number(text: str) -> Scalar:
    return int(text) if text.isdigit() else text


def bgp_state(running: str, multipath: int | None) -> dict[str, Scalar]:
    """The flat BGP state of a running configuration (empty without ``router bgp``)."""
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
    for peer, remote in parsed.remote_as.items():
        state[f"bgp/neighbors/{peer}/remote_as"] = _as_number(remote)
        state[f"bgp/neighbors/{peer}/inbound_filter"] = parsed.inbound.get(peer, "")
    return state


def _neighbors(target: Mapping[str, Scalar]) -> dict[str, tuple[Scalar, Scalar]]:
    found: dict[str, tuple[Scalar, Scalar]] = {}
    for path, value in target.items():
        parts = path.split("/")
        if len(parts) == 4 and parts[1] == "neighbors" and parts[3] == "remote_as":
            if value is None:
                continue
            found[parts[2]] = (value, target.get(f"bgp/neighbors/{parts[2]}/inbound_filter"))
    return found


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


def render_block(target: Mapping[str, Scalar], kept: BgpBlock | None) -> list[str]:
    """The ``router bgp`` block holding ``target``'s managed values and ``kept``'s others."""
    asn = _check(target)
    base = kept if kept is not None else BgpBlock(asn)
    neighbors = _neighbors(target)
    peers = set(neighbors)
    lines = [f"router bgp {asn}"]
    if target.get("bgp/router_id") is not None:
        lines.append(f" bgp router-id {target['bgp/router_id']}")
    lines += [f" {line}" for line in base.kept if not _NEIGHBOR.match(line)]
    own = _peer_lines(base.kept, peers)
    for peer, (remote, _) in sorted(neighbors.items()):
        lines.append(f" neighbor {peer} remote-as {remote}")
        lines += [f" {line}" for line in own.get(peer, [])]
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  {line}" for line in base.kept_ipv4 if not _NEIGHBOR.match(line)]
    own_ipv4 = _peer_lines(base.kept_ipv4, peers)
    for peer, (_, inbound) in sorted(neighbors.items()):
        lines += [f"  {line}" for line in own_ipv4.get(peer, [])]
        if inbound:
            lines.append(f"  neighbor {peer} route-map {inbound} in")
    paths = target.get("bgp/maximum_paths")
    if paths is not None:
        lines.append(f"  maximum-paths {paths}")
    lines.append(" exit-address-family")
    for family in base.other_families:
        lines += [" !", *family]
    return [*lines, "exit"]


def candidate(running: str, target: Mapping[str, Scalar]) -> str:
    """``running`` with its ``router bgp`` block holding ``target``'s BGP values (a
    target without ``bgp/asn`` removes the block)."""
    before, block, after = _split(config_body(running))
    kept = parse_block(block) if block else None
    if target.get("bgp/asn") is None:
        rendered: list[str] = []
    else:
        if kept is not None and kept.asn != target["bgp/asn"]:
            kept = BgpBlock(_check(target), kept=kept.kept, kept_ipv4=kept.kept_ipv4)
        rendered = render_block(target, kept)
    at = len(before) if block else _insert_at(before)
    lines = [*before[:at], *rendered, *before[at:], *after]
    return "\n".join(line for line in lines if line != "end") + "\nend\n"


def _insert_at(lines: list[str]) -> int:
    """Where a new ``router bgp`` block goes: after the global lines, before route-maps."""
    for index, line in enumerate(lines):
        if line.startswith(("route-map ", "ip prefix-list ", "bgp ")) and index > 0:
            return index
    return len(lines)
