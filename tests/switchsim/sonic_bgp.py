"""BGP on default SONiC: bgpcfgd turns DEVICE_METADATA ``bgp_asn`` and BGP_NEIGHBOR rows into FRR.

`frr_running_config` renders what ``vtysh -c 'show running-config'`` prints
for such a config (the ``bgpraw`` string of ``show runningconfiguration
all``): bgpcfgd's templates put IPv4 peers in the PEER_V4 and IPv6 peers in
the PEER_V6 peer group, set ``maximum-paths 64`` and take the router id from
Loopback0.  `check_bgpcfgd_change` refuses what bgpcfgd cannot carry out: a
neighbour's ``asn`` changed in place (bgpcfgd logs that updating a peer is not
supported; delete the neighbour and add it again).
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
            raise BgpcfgdError(
                f"bgpcfgd: Peer '(default|{peer})': changing 'asn' from {previous.get('asn')} to"
                f" {row.get('asn')} is not supported; remove the neighbor and add it again"
            )


def frr_running_config(db: ConfigDb, frr_version: str) -> str:
    """FRR's ``show running-config`` for the BGP part of config_db `db`."""
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
    asn = meta.get("bgp_asn")
    if asn is None:
        return "\n".join([*lines, "end"])
    peers = sorted(
        db.get("BGP_NEIGHBOR", {}).items(),
        key=lambda item: (":" in item[0], int(ipaddress.ip_address(item[0]))),
    )
    v4 = [(p, r) for p, r in peers if ":" not in p]
    v6 = [(p, r) for p, r in peers if ":" in p]
    router_id = loopback_ipv4(db)
    lines.append(f"router bgp {asn}")
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
        if family == "ipv4" and router_id:
            lines.append(f"  network {router_id}/32")
        lines += [
            f"  neighbor {group} soft-reconfiguration inbound",
            f"  neighbor {group} route-map FROM_BGP_{group} in",
            f"  neighbor {group} route-map TO_BGP_{group} out",
        ]
        lines += [f"  neighbor {peer} activate" for peer, _ in members]
        lines += [f"  maximum-paths {BGPCFGD_MAXIMUM_PATHS}", " exit-address-family"]
    lines += ["exit", "!", "end"]
    return "\n".join(lines)
