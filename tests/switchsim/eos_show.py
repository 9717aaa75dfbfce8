"""EOS show commands other than the running config and BGP (`eos_show_bgp`), as
text and as ``| json``.

JSON forms use the keys real EOS prints: ``show version`` (``version`` may
carry an engineering-build remark, ``internalVersion`` the full build id),
``show interfaces`` (``forwardingModel`` ``bridged``/``routed``, ``dataLink`` for
a Port-Channel member; ``mtu`` is the L2 MTU on a bridged port, 9214 unless ``l2
mtu`` says otherwise, and the L3 MTU on a routed one, 1500 unless ``mtu`` says
otherwise) and ``show lldp neighbors detail`` (``lldpNeighbors`` ->
``lldpNeighborInfo``, with ``interfaceId`` quoted and ``interfaceId_v2`` bare for
interface-name port ids).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from typing import Any

from .eos_model import L2_MTU_DEFAULT, EosConfig
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
        routed = not port.switchport and not port.lag_member()
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
            mtu = config.default_l3_mtu() if port.mtu is None else port.mtu
        else:
            mtu = L2_MTU_DEFAULT if port.l2_mtu is None else port.l2_mtu
        mac = facts.port_mac(index)
        result[name] = {
            "name": name,
            "forwardingModel": _forwarding(port.switchport, port.lag_member()),
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


def _forwarding(switchport: bool, lag_member: bool) -> str:
    """``forwardingModel``: a Port-Channel member forwards as part of its LAG."""
    if lag_member:
        return "dataLink"
    return "bridged" if switchport else "routed"


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
