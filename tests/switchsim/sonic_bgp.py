"""BGP on default SONiC: bgpcfgd turns DEVICE_METADATA ``bgp_asn`` and BGP_NEIGHBOR rows into FRR.

`frr_running_config` renders what ``vtysh -c 'show running-config'`` prints
for such a config (the ``bgpraw`` string of ``show runningconfiguration
all``): bgpcfgd's templates put IPv4 peers in the PEER_V4 and IPv6 peers in
the PEER_V6 peer group, set ``maximum-paths 64`` and take the router id from
Loopback0; a peer keyed ``<vrf>|<ip>`` is in that VRF's instance (``default|``
is the default one).  With ``frr_mgmt_framework_config`` frrcfgd renders
BGP_GLOBALS* and BGP_NEIGHBOR* instead.  `check_bgpcfgd_change` refuses what
bgpcfgd cannot carry out: a neighbour's ``asn`` changed in place (bgpcfgd logs
that updating a peer is not supported; delete the neighbour and add it again).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .sonic_db import BGPCFGD_MAXIMUM_PATHS, loopback_ipv4

ConfigDb = dict[str, Any]


class BgpcfgdError(ValueError):
    """A BGP change bgpcfgd does not support."""


def check_bgpcfgd_change(old: ConfigDb, new: ConfigDb) -> None:
    """Raise `BgpcfgdError` if a BGP_NEIGHBOR row keeps its key but changes its ``asn``."""
    before = old.get("BGP_NEIGHBOR", {})
    for peer, row in new.get("BGP_NEIGHBOR", {}).items():
        previous = before.get(peer)
        if previous is not None and previous.get("asn") != row.get("asn"):
            key = peer if "|" in peer else f"default|{peer}"
            raise BgpcfgdError(
                f"bgpcfgd: Peer '({key})': changing 'asn' from {previous.get('asn')} to"
                f" {row.get('asn')} is not supported; remove the neighbor and add it again"
            )


Peer = tuple[str, dict[str, Any]]


def _peers(db: ConfigDb, interfaces: bool = False) -> dict[str, list[Peer]]:
    """BGP_NEIGHBOR rows per VRF (a key is ``<ip>`` or ``<vrf>|<ip>``), IPv4, IPv6, then
    (with `interfaces`, for frrcfgd) those keyed by an interface (BGP unnumbered): the
    bgpcfgd templates render addresses only."""
    found: dict[str, list[tuple[tuple[int, int, str], Peer]]] = {}
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, _, peer = key.rpartition("|")
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            if interfaces and vrf:
                found.setdefault(vrf, []).append(((7, 0, peer), (peer, row)))
            continue
        order = (address.version, int(address), "")
        found.setdefault(vrf or "default", []).append((order, (str(address), row)))
    return {vrf: [peer for _, peer in sorted(rows)] for vrf, rows in found.items()}


def _number(text: Any) -> str | None:
    return str(text) if str(text).isdigit() else None


def frr_running_config(db: ConfigDb, frr_version: str) -> str:
    """FRR's ``show running-config`` for the BGP part of config_db `db`: what bgpcfgd
    renders, or with ``frr_mgmt_framework_config`` what frrcfgd sets from BGP_GLOBALS*
    and BGP_NEIGHBOR*. An AS that is no number (``bgp_asn: "None"``) starts no BGP."""
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    hostname = meta.get("hostname", "sonic")
    lines = [
        "Building configuration...",
        "",
        "Current configuration:",
        "!",
        f"frr version {frr_version}",
        "frr defaults traditional",
        f"hostname {hostname}",
        "log syslog informational",
        "log facility local4",
        "no service integrated-vtysh-config",
        "!",
    ]
    if meta.get("frr_mgmt_framework_config") == "true":
        peers = _peers(db, interfaces=True)
        for vrf, fields in sorted(db.get("BGP_GLOBALS", {}).items()):
            asn = _number(fields.get("local_asn"))
            if asn is not None:
                lines += _frrcfgd_instance(db, asn, vrf, fields, peers.get(vrf, []))
        return "\n".join([*lines, "end"])
    peers = _peers(db)
    asn = _number(meta.get("bgp_asn"))
    if asn is None:
        return "\n".join([*lines, "end"])
    for vrf in ["default", *sorted(set(peers) - {"default"})]:
        lines += _bgpcfgd_instance(db, asn, vrf, peers.get(vrf, []))
    return "\n".join([*lines, "end"])


def _header(asn: str, vrf: str) -> str:
    return f"router bgp {asn}" if vrf == "default" else f"router bgp {asn} vrf {vrf}"


def _bgpcfgd_instance(db: ConfigDb, asn: str, vrf: str, peers: list[Peer]) -> list[str]:
    v4 = [(p, r) for p, r in peers if ":" not in p]
    v6 = [(p, r) for p, r in peers if ":" in p]
    router_id = loopback_ipv4(db)
    lines = [_header(asn, vrf)]
    if router_id:
        lines.append(f" bgp router-id {router_id}")
    lines += [
        " bgp log-neighbor-changes",
        " no bgp ebgp-requires-policy",
        " no bgp default ipv4-unicast",
        " bgp graceful-restart restart-time 240",
        " bgp graceful-restart",
        " bgp bestpath as-path multipath-relax",
        " neighbor PEER_V4 peer-group",
        " neighbor PEER_V6 peer-group",
    ]
    for peer, row in peers:
        group = "PEER_V6" if ":" in peer else "PEER_V4"
        lines.append(f" neighbor {peer} remote-as {row.get('asn')}")
        lines.append(f" neighbor {peer} peer-group {group}")
        if row.get("name"):
            lines.append(f" neighbor {peer} description {row['name']}")
        if row.get("admin_status") == "down":
            lines.append(f" neighbor {peer} shutdown")
        lines.append(
            f" neighbor {peer} timers {row.get('keepalive', '60')} {row.get('holdtime', '180')}"
        )
    for family, group, members in (("ipv4", "PEER_V4", v4), ("ipv6", "PEER_V6", v6)):
        lines += [" !", f" address-family {family} unicast"]
        if family == "ipv4" and router_id and vrf == "default":
            lines.append(f"  network {router_id}/32")
        lines += [
            f"  neighbor {group} soft-reconfiguration inbound",
            f"  neighbor {group} route-map FROM_BGP_{group} in",
            f"  neighbor {group} route-map TO_BGP_{group} out",
        ]
        lines += [f"  neighbor {peer} activate" for peer, _ in members]
        lines += [f"  maximum-paths {BGPCFGD_MAXIMUM_PATHS}", " exit-address-family"]
    return [*lines, "exit", "!"]


def _remote(row: dict[str, Any]) -> str | None:
    """What frrcfgd writes after ``remote-as``: the AS, else the peer type."""
    asn = _number(row.get("asn"))
    return asn if asn is not None else row.get("peer_type")


def _frrcfgd_instance(
    db: ConfigDb, asn: str, vrf: str, fields: dict[str, Any], peers: list[Peer]
) -> list[str]:
    lines = [_header(asn, vrf)]
    if fields.get("router_id"):
        lines.append(f" bgp router-id {fields['router_id']}")
    lines.append(" bgp log-neighbor-changes")
    remote = [(p, r) for p, r in peers if _remote(r) is not None]
    lines += [
        f" neighbor {peer}{'' if ':' in peer or '.' in peer else ' interface'} remote-as "
        f"{_remote(row)}"
        for peer, row in remote
    ]
    for family in ("ipv4", "ipv6"):
        af = db.get("BGP_GLOBALS_AF", {}).get(f"{vrf}|{family}_unicast")
        if af is None:
            continue
        lines += [" !", f" address-family {family} unicast"]
        for peer, _ in remote:
            nbr = db.get("BGP_NEIGHBOR_AF", {}).get(f"{vrf}|{peer}|{family}_unicast")
            if nbr is None:
                continue
            lines.append(f"  neighbor {peer} activate")
            maps = nbr.get("route_map_in") or []
            for name in maps if isinstance(maps, list) else [maps]:
                lines.append(f"  neighbor {peer} route-map {name} in")
        if af.get("max_ebgp_paths"):
            lines.append(f"  maximum-paths {af['max_ebgp_paths']}")
        lines.append(" exit-address-family")
    return [*lines, "exit", "!"]
