"""EOS show commands other than the running config, as text and as ``| json``.

JSON forms use the keys real EOS prints: ``show version`` (``version`` may
carry an engineering-build remark, ``internalVersion`` the full build id),
``show interfaces`` (``forwardingModel`` ``bridged``/``routed``; ``mtu`` is
the L2 MTU on a bridged port, 9214 unless ``l2 mtu`` says otherwise, and
the L3 MTU on a routed one, 1500 unless ``mtu`` says otherwise),
``show ip|ipv6 bgp summary``, ``show ip bgp neighbors`` and
``show lldp neighbors detail`` (``lldpNeighbors`` -> ``lldpNeighborInfo``,
with ``interfaceId`` quoted and ``interfaceId_v2`` bare for interface-name
port ids).  Values are effective ones (`eos_view`): a neighbour's AS may
come from its peer group.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from typing import Any

from .eos_model import L2_MTU_DEFAULT, L3_MTU_DEFAULT, EosConfig, asn_text
from .model import DeviceFacts, natural_key

LLDP_TTL = 120
_MAC = re.compile(r"^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$")


def dotted_mac(mac: str) -> str:
    """``00:1c:73:00:00:01`` -> ``001c.7300.0001`` (EOS text form)."""
    digits = mac.replace(":", "")
    return ".".join(digits[i : i + 4] for i in range(0, 12, 4))


def internal_version(version: str, facts: DeviceFacts) -> str:
    """The build id: an engineering build's own, else ``VERSION-BUILD.COMPACT``."""
    head = version.split(" ", 1)[0]
    if "-" in head:
        return head
    build = int(hashlib.sha256(facts.serial.encode()).hexdigest()[:7], 16) % 40_000_000
    return f"{head}-{build}.{head.replace('.', '')}"


def version_json(model: str, version: str, facts: DeviceFacts) -> dict[str, Any]:
    """``show version | json``."""
    return {
        "mfgName": "Arista",
        "modelName": model,
        "hardwareRevision": "11.00",
        "serialNumber": facts.serial,
        "systemMacAddress": facts.mac,
        "hwMacAddress": facts.mac,
        "configMacAddress": "00:00:00:00:00:00",
        "version": version,
        "architecture": "x86_64",
        "internalVersion": internal_version(version, facts),
        "internalBuildId": "00000000-0000-4000-8000-" + facts.mac.replace(":", ""),
        "imageFormatVersion": "3.0",
        "imageOptimization": "Default",
        "bootupTimestamp": round(facts.boot_time, 3),
        "uptime": round(facts.now - facts.boot_time, 3),
        "memTotal": 32_617_876,
        "memFree": 24_713_500,
        "isIntlVersion": False,
    }


def version_text(model: str, version: str, facts: DeviceFacts) -> str:
    """``show version``."""
    data = version_json(model, version, facts)
    minutes = int(data["uptime"] // 60)
    return "\n".join(
        [
            f"Arista {model}",
            "Hardware version: 11.00",
            f"Serial number: {facts.serial}",
            f"Hardware MAC address: {dotted_mac(facts.mac)}",
            f"System MAC address: {dotted_mac(facts.mac)}",
            "",
            f"Software image version: {version}",
            "Architecture: x86_64",
            f"Internal build version: {data['internalVersion']}",
            f"Internal build ID: {data['internalBuildId']}",
            "Image format version: 3.0",
            "Image optimization: Default",
            "",
            f"Uptime: {minutes // 60} hours and {minutes % 60} minutes",
            f"Total memory: {data['memTotal']} kB",
            f"Free memory: {data['memFree']} kB",
        ]
    )


def interfaces_json(config: EosConfig, facts: DeviceFacts) -> dict[str, Any]:
    """``show interfaces | json``."""
    result: dict[str, Any] = {}
    for index, name in enumerate(sorted(config.interfaces, key=natural_key), start=1):
        port = config.interfaces[name]
        routed = not port.switchport
        addresses: list[dict[str, Any]] = []
        if routed and port.ipv4:
            iface = ipaddress.IPv4Interface(port.ipv4)
            addresses.append(
                {
                    "primaryIp": {"address": str(iface.ip), "maskLen": iface.network.prefixlen},
                    "secondaryIps": {},
                    "secondaryIpsOrderedList": [],
                    "virtualIp": {"address": "0.0.0.0", "maskLen": 0},
                    "virtualSecondaryIps": {},
                    "virtualSecondaryIpsOrderedList": [],
                    "broadcastAddress": "255.255.255.255",
                    "dhcp": False,
                }
            )
        if routed:
            mtu = L3_MTU_DEFAULT if port.mtu is None else port.mtu
        else:
            mtu = L2_MTU_DEFAULT if port.l2_mtu is None else port.l2_mtu
        mac = facts.port_mac(index)
        result[name] = {
            "name": name,
            "forwardingModel": "routed" if routed else "bridged",
            "lineProtocolStatus": "up",
            "interfaceStatus": "connected",
            "hardware": "ethernet",
            "interfaceAddress": addresses,
            "physicalAddress": mac,
            "burnedInAddress": mac,
            "description": port.description,
            "bandwidth": 400_000_000_000,
            "mtu": mtu,
            "l3MtuConfigured": port.mtu is not None,
            "l2Mru": 0,
            "lastStatusChangeTimestamp": round(facts.boot_time, 3),
        }
    return {"interfaces": result}


def interfaces_text(config: EosConfig, facts: DeviceFacts) -> str:
    """``show interfaces``."""
    blocks = []
    for name, data in interfaces_json(config, facts)["interfaces"].items():
        lines = [
            f"{name} is up, line protocol is up (connected)",
            f"  Hardware is Ethernet, address is {dotted_mac(data['physicalAddress'])} "
            f"(bia {dotted_mac(data['burnedInAddress'])})",
        ]
        if data["description"]:
            lines.append(f"  Description: {data['description']}")
        if data["interfaceAddress"]:
            primary = data["interfaceAddress"][0]["primaryIp"]
            lines += [
                f"  Internet address is {primary['address']}/{primary['maskLen']}",
                "  Broadcast address is 255.255.255.255",
            ]
        kind = "IP" if data["forwardingModel"] == "routed" else "Ethernet"
        lines.append(f"  {kind} MTU {data['mtu']} bytes, BW 400000000 kbit")
        lines.append("  Full-duplex, 400Gb/s, auto negotiation: off, uplink: off")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _peers(config: EosConfig, version: int | None) -> list[tuple[str, int, str | None]]:
    """(address, effective remote AS, effective inbound route map) of working neighbours."""
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
        route_map = peer.route_map_in or (group.route_map_in if group else None)
        found.append((address, remote_as, route_map))
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
            "asn": asn_text(remote_as, bgp.asdot),
            "prefixAccepted": 0,
            "prefixReceived": 0,
            "upDownTime": round(facts.boot_time, 3),
            "underMaintenance": False,
            "peerState": "Established",
        }
        for address, remote_as, _route_map in _peers(config, version)
    }
    vrf = {
        "vrf": "default",
        "routerId": bgp.router_id or "0.0.0.0",
        "asn": asn_text(bgp.asn, bgp.asdot),
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
            "asn": asn_text(remote_as, bgp.asdot),
            "localAsn": asn_text(bgp.asn, bgp.asdot),
            "routerId": "0.0.0.0",
            "vrf": "default",
            "state": "Established",
            "maxTotalRoutes": 0,
        }
        if route_map:
            entry["routeMapInbound"] = route_map
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


def _chassis_id(system: str) -> str:
    digest = hashlib.sha256(system.encode()).hexdigest()
    return dotted_mac("02" + digest[:10])


def lldp_json(
    config: EosConfig, lldp: tuple[tuple[str, str, str], ...], facts: DeviceFacts
) -> dict[str, Any]:
    """``show lldp neighbors detail | json``: every port, with its neighbours (if any)."""
    result: dict[str, Any] = {
        name: {"lldpNeighborInfo": []} for name in sorted(config.interfaces, key=natural_key)
    }
    for local, system, port in lldp:
        is_mac = bool(_MAC.match(port))
        info = {
            "chassisIdType": "macAddress",
            "chassisId": _chassis_id(system),
            "systemName": system,
            "systemDescription": "",
            "systemCapabilities": {"bridge": True, "router": True},
            "ttl": LLDP_TTL,
            "neighborDiscoveryTime": round(facts.boot_time, 3),
            "lastChangeTime": round(facts.boot_time, 3),
            "lastContactTime": round(facts.now, 3),
            "managementAddresses": [],
            "neighborInterfaceInfo": {
                "interfaceIdType": "macAddress" if is_mac else "interfaceName",
                "interfaceId": port if is_mac else f'"{port}"',
                "interfaceId_v2": port,
                "interfaceDescription": "",
                "unknownTlvs": [],
                "unknownOrgDefinedTlvs": [],
            },
        }
        result.setdefault(local, {"lldpNeighborInfo": []})["lldpNeighborInfo"].append(info)
    return {"lldpNeighbors": result}


def lldp_text(lldp: tuple[tuple[str, str, str], ...]) -> str:
    """``show lldp neighbors``."""
    lines = [
        "Last table change time   : 0:00:01 ago",
        f"Number of table inserts  : {len(lldp)}",
        "Number of table deletes  : 0",
        "Number of table drops    : 0",
        "Number of table age-outs : 0",
        "",
        "Port          Neighbor Device ID       Neighbor Port ID    TTL",
        "---------- ------------------------ ---------------------- ---",
    ]
    for local, system, port in sorted(lldp, key=lambda n: natural_key(n[0])):
        short = "Et" + local.removeprefix("Ethernet")
        lines.append(f"{short:<13} {system:<24} {port:<19} {LLDP_TTL}")
    return "\n".join(lines)


def boot_config_text(boot_image: str) -> str:
    """``show boot-config``."""
    return "\n".join(
        [
            f"Software image: {boot_image}",
            "Console speed: (not set)",
            "Aboot password (encrypted): (not set)",
            "Memory test iterations: (not set)",
        ]
    )
