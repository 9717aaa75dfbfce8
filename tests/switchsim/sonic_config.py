"""The initial config_db of a named SONiC profile, per namespace, from a `SwitchState`.

Layout as SONiC's minigraph/`sonic-cfggen` writes it for a T0/T1 router:
DEVICE_METADATA (``bgp_asn``, ``buffer_model``,
``docker_routing_config_mode: separated`` -> bgpcfgd), PORT (lanes, alias,
speed, fec, admin status), dual-stack INTERFACE keys on every routed port,
Loopback0 (whose IPv4 address bgpcfgd uses as router id), BGP_NEIGHBOR rows
(IPv4 and IPv6 peers with ``asn``, ``name``, ``local_addr`` ...) and the QoS
tables of `sonic_qos`.  A port is active (admin up, with QoS) when it has an
address.  On a multi-ASIC profile the front-panel ports are split between the
ASIC namespaces; the host namespace keeps the device-wide tables.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .model import BgpNeighbor, BgpState, InterfaceState, SwitchState, natural_key
from .sonic_profiles import SonicProfile
from .sonic_qos import AZURE_DSCP, AZURE_ECN, qos_tables

ConfigDb = dict[str, Any]
HOST = "localhost"
ROUTER_ID = "10.1.0.1"
LOCAL_ASN = 65100
PEER_ASN = 65200


def profile_state(hostname: str, profile: SonicProfile) -> SwitchState:
    """The switch a profile describes when the spec gives no initial state."""
    ports: dict[str, InterfaceState] = {}
    neighbors: dict[str, BgpNeighbor] = {}
    for index in range(profile.port_count):
        name = f"Ethernet{4 * index}"
        if index >= profile.port_count - 2:
            ports[name] = InterfaceState(mtu=9100)
            continue
        ports[name] = InterfaceState(
            mtu=9100,
            description=f"ARISTA{index + 1:02d}T2:Ethernet1",
            ipv4=f"10.0.0.{2 * index}/31",
            pfc_priorities=[3, 4],
            ecn={3: AZURE_ECN, 4: AZURE_ECN},
            pfc_headroom_kb=None,  # the platform's own profile for the port's cable
        )
        neighbors[f"10.0.0.{2 * index + 1}"] = BgpNeighbor(remote_as=PEER_ASN)
    return SwitchState(
        hostname=hostname,
        model=profile.hwsku,
        nos_version=profile.build_version,
        boot_image=f"SONiC-OS-{profile.build_version}",
        interfaces=ports,
        dscp_to_tc=dict(AZURE_DSCP),
        bgp=BgpState(asn=LOCAL_ASN, router_id=ROUTER_ID, maximum_paths=64, neighbors=neighbors),
    )


def _ipv6_of(index: int, host: int) -> str:
    return str(ipaddress.IPv6Address(0xFC00 << 112 | (4 * index + host)))


def _metadata(state: SwitchState, profile: SonicProfile, mac: str) -> dict[str, str]:
    meta = {
        "hostname": state.hostname,
        "hwsku": profile.hwsku,
        "platform": profile.platform,
        "mac": mac,
        "type": "LeafRouter",
        "buffer_model": profile.buffer_model,
        "docker_routing_config_mode": "separated",
        "default_bgp_status": "up",
        "default_pfcwd_status": "disable",
        "deployment_id": "1",
        "synchronous_mode": "enable",
    }
    if state.bgp is not None:
        meta["bgp_asn"] = str(state.bgp.asn)
    return meta


def _ports_and_peers(
    state: SwitchState, profile: SonicProfile, names: list[str], first_lane: int
) -> ConfigDb:
    ports: ConfigDb = {}
    interfaces: ConfigDb = {}
    peers: ConfigDb = {}
    bgp_neighbors = state.bgp.neighbors if state.bgp else {}
    for name in names:
        port = state.interfaces[name]
        index = int(name.removeprefix("Ethernet")) // 4
        lanes = ",".join(str(first_lane + 8 * index + i) for i in range(4))
        ports[name] = {
            "admin_status": "up" if port.ipv4 else "down",
            "alias": f"etp{index + 1}",
            "index": str(index + 1),
            "lanes": lanes,
            "speed": profile.port_speed,
            "fec": "rs",
            "mtu": str(port.mtu),
            "description": port.description,
        }
        if not port.ipv4:
            continue
        interfaces[name] = {}
        interfaces[f"{name}|{port.ipv4}"] = {}
        interfaces[f"{name}|{_ipv6_of(index, 1)}/126"] = {}
        local = ipaddress.IPv4Interface(port.ipv4)
        for peer, neighbor in bgp_neighbors.items():
            if ipaddress.IPv4Address(peer) in local.network and peer != str(local.ip):
                row = _peer_row(neighbor, port.description, str(local.ip))
                peers[peer] = row
                peers[_ipv6_of(index, 2)] = {**row, "local_addr": _ipv6_of(index, 1)}
    return {"PORT": ports, "INTERFACE": interfaces, "BGP_NEIGHBOR": peers}


def _peer_row(neighbor: BgpNeighbor, description: str, local: str) -> dict[str, str]:
    return {
        "admin_status": "up",
        "asn": str(neighbor.remote_as),
        "holdtime": "10",
        "keepalive": "3",
        "local_addr": local,
        "name": description.split(":", 1)[0] or "PEER",
        "nhopself": "0",
        "rrclient": "0",
    }


def _unplaced_peers(state: SwitchState, placed: set[str]) -> ConfigDb:
    """Neighbours the state lists that no port subnet holds (multihop peers)."""
    if state.bgp is None:
        return {}
    return {
        ip: _peer_row(n, f"PEER{i}", ROUTER_ID)
        for i, (ip, n) in enumerate(sorted(state.bgp.neighbors.items()))
        if ip not in placed
    }


def _namespace_db(
    state: SwitchState, profile: SonicProfile, names: list[str], first_lane: int, mac: str
) -> ConfigDb:
    db = _ports_and_peers(state, profile, names, first_lane)
    active = {n for n in names if state.interfaces[n].ipv4}
    ports = {n: state.interfaces[n] for n in names}
    db.update(qos_tables(profile, ports, active, state.dscp_to_tc or dict(AZURE_DSCP)))
    db["DEVICE_METADATA"] = {"localhost": _metadata(state, profile, mac)}
    return db


def render_profile_config(
    state: SwitchState, profile: SonicProfile, mac: str
) -> dict[str, ConfigDb]:
    """config_db per namespace (``localhost`` alone on a single-ASIC switch)."""
    names = sorted(state.interfaces, key=natural_key)
    router_id = state.bgp.router_id if state.bgp and state.bgp.router_id else ROUTER_ID
    loopback: ConfigDb = {
        "Loopback0": {},
        f"Loopback0|{router_id}/32": {},
        "Loopback0|fc00:1::1/128": {},
    }
    if not profile.multi_asic:
        db = _namespace_db(state, profile, names, 0, mac)
        peers = set(db.get("BGP_NEIGHBOR", {}))
        db.setdefault("BGP_NEIGHBOR", {}).update(_unplaced_peers(state, peers))
        db["LOOPBACK_INTERFACE"] = loopback
        return {HOST: _drop_empty(db)}
    host = {
        "DEVICE_METADATA": {"localhost": _metadata(state, profile, mac)},
        "LOOPBACK_INTERFACE": loopback,
    }
    out: dict[str, ConfigDb] = {HOST: host}
    share = -(-len(names) // len(profile.namespaces))
    placed: set[str] = set()
    for number, namespace in enumerate(profile.namespaces):
        part = names[number * share : (number + 1) * share]
        db = _namespace_db(state, profile, part, 0, mac)
        meta = db["DEVICE_METADATA"]["localhost"]
        meta.update(asic_name=namespace, sub_role="FrontEnd", asic_id=f"0{number + 1}:00.0")
        db["LOOPBACK_INTERFACE"] = dict(loopback)
        placed |= set(db.get("BGP_NEIGHBOR", {}))
        out[namespace] = db
    first = out[profile.namespaces[0]]
    first.setdefault("BGP_NEIGHBOR", {}).update(_unplaced_peers(state, placed))
    return {ns: _drop_empty(db) for ns, db in out.items()}


def _drop_empty(db: ConfigDb) -> ConfigDb:
    return {table: rows for table, rows in db.items() if rows}
