"""EOS BGP show commands, as text and as ``| json``: ``show ip|ipv6 bgp summary`` (or
``show bgp ipv4|ipv6 unicast summary``), ``show ip bgp neighbors`` and ``show [ip] bgp
neighbors vrf all``.

An interface neighbour (``neighbor interface Et1 ...``) is listed in the IPv4 summary
under the link-local address it peers with, zoned by its port (``fe80::1%Et1``): the
session runs over IPv6 link-local and carries IPv4 routes (RFC 8950).

Values are the ones in force (`eos_model.EosBgp.policy`): a neighbour's AS may come
from its peer group, and its route maps from its own or its group's lines under the
address family of its own address, else at router level.  ``show bgp neighbors vrf
all | json`` (revision 2 of the model) carries ``routeMapInbound`` and
``routeMapOutbound`` per peer, absent when there is none.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .eos_model import EosConfig
from .model import DeviceFacts


def _peers(config: EosConfig, version: int | None) -> list[tuple[str, int, str | None]]:
    """(address, effective remote AS, inbound route map in force) of working neighbours."""
    return [(address, asn, maps[0]) for address, asn, maps in _policies(config, version)]


def _policies(
    config: EosConfig, version: int | None
) -> list[tuple[str, int, tuple[str | None, str | None]]]:
    """Working neighbours with their remote AS and (inbound, outbound) route maps in
    force for their own address family."""
    bgp = config.bgp
    if bgp is None:
        return []
    found = []
    for address, peer in bgp.neighbors.items():
        group = bgp.peer_groups.get(peer.peer_group or "")
        remote_as = peer.remote_as
        if remote_as is None and group is not None:
            remote_as = group.remote_as
        ip = ipaddress.ip_address(address)
        if remote_as is None or (version is not None and ip.version != version):
            continue
        family = f"ipv{ip.version}"
        maps = (bgp.policy(address, family, "in"), bgp.policy(address, family, "out"))
        found.append((address, remote_as, maps))
    return sorted(found, key=lambda p: _address_key(p[0]))


def _address_key(address: str) -> tuple[int, int]:
    ip = ipaddress.ip_address(address)
    return ip.version, int(ip)


def bgp_summary_json(config: EosConfig, facts: DeviceFacts, version: int) -> dict[str, Any]:
    """``show ip bgp summary | json`` (`version` 4) or ``show ipv6 bgp summary | json`` (6)."""
    bgp = config.bgp
    if bgp is None:
        return {"vrfs": {}}
    peers = {
        address: {
            "version": 4,
            "msgReceived": 0,
            "msgSent": 0,
            "inMsgQueue": 0,
            "outMsgQueue": 0,
            "asn": bgp.shown(remote_as),
            "prefixAccepted": 0,
            "prefixReceived": 0,
            "upDownTime": round(facts.boot_time, 3),
            "underMaintenance": False,
            "peerState": "Established",
        }
        for address, remote_as, _route_map in _peers(config, version)
    }
    if version == 4:
        for port, (_group, how) in bgp.interfaces.items():
            kind, _, asn = how.partition(" ")
            if kind == "remote-as" and port.startswith("Ethernet"):
                peers[f"fe80::1%Et{port[len('Ethernet') :]}"] = {
                    "version": 4,
                    "asn": asn,
                    "upDownTime": round(facts.boot_time, 3),
                    "underMaintenance": False,
                    "peerState": "Established",
                }
    vrf = {
        "vrf": "default",
        "routerId": bgp.router_id or "0.0.0.0",
        "asn": bgp.shown(bgp.asn),
        "peers": peers,
    }
    return {"vrfs": {"default": vrf}}


def bgp_summary_text(config: EosConfig, facts: DeviceFacts, version: int) -> str:
    """``show ip bgp summary`` / ``show ipv6 bgp summary``."""
    data = bgp_summary_json(config, facts, version)["vrfs"]
    if not data:
        return "% BGP inactive"
    vrf = data["default"]
    lines = [
        "BGP summary information for VRF default",
        f"Router identifier {vrf['routerId']}, local AS number {vrf['asn']}",
        "Neighbor Status Codes: m - Under maintenance",
        "  Neighbor         V AS           MsgRcvd   MsgSent  InQ OutQ  Up/Down State"
        "   PfxRcd PfxAcc",
    ]
    for ip, peer in vrf["peers"].items():
        lines.append(
            f"  {ip:<16} 4 {peer['asn']:<12} {0:>7} {0:>9} {0:>4} {0:>4} 00:00:00 Estab   0      0"
        )
    return "\n".join(lines)


def bgp_neighbors_json(config: EosConfig) -> dict[str, Any]:
    """``show ip bgp neighbors | json``."""
    bgp = config.bgp
    if bgp is None:
        return {"vrfs": {}}
    peers = []
    for address, remote_as, route_map in _peers(config, None):
        entry: dict[str, Any] = {
            "peerAddress": address,
            "asn": bgp.shown(remote_as),
            "localAsn": bgp.shown(bgp.asn),
            "routerId": "0.0.0.0",
            "vrf": "default",
            "state": "Established",
            "maxTotalRoutes": 0,
        }
        if route_map:
            entry["routeMapInbound"] = route_map
        peers.append(entry)
    return {"vrfs": {"default": {"peerList": peers}}}


def bgp_neighbors_vrfs_json(config: EosConfig, facts: DeviceFacts) -> dict[str, Any]:
    """``show bgp neighbors vrf all | json`` (revision 2): every VRF's ``peerList``
    (the default VRF's here), each peer with the route maps in force."""
    bgp = config.bgp
    if bgp is None:
        return {"vrfs": {}}
    peers = []
    for address, remote_as, (inbound, outbound) in _policies(config, None):
        entry: dict[str, Any] = {
            "peerAddress": address,
            "asn": bgp.shown(remote_as),
            "linkType": "internal" if remote_as == bgp.asn else "external",
            "routerId": "0.0.0.0",
            "vrf": "default",
            "state": "Established",
            "establishedTime": round(facts.now - facts.boot_time, 3),
            "localAsn": bgp.shown(bgp.asn),
            "updateGroupIndex": -1,
        }
        if inbound:
            entry["routeMapInbound"] = inbound
        if outbound:
            entry["routeMapOutbound"] = outbound
        peers.append(entry)
    return {"vrfs": {"default": {"peerList": peers}}}


def bgp_neighbors_text(config: EosConfig) -> str:
    """``show ip bgp neighbors``."""
    if config.bgp is None:
        return "% BGP inactive"
    lines = []
    for peer in bgp_neighbors_json(config)["vrfs"]["default"]["peerList"]:
        lines.append(
            f"BGP neighbor is {peer['peerAddress']}, remote AS {peer['asn']}, external link"
        )
        lines.append("  BGP state is Established")
        if "routeMapInbound" in peer:
            lines.append(f"  Inbound route map is {peer['routeMapInbound']}")
    return "\n".join(lines)
