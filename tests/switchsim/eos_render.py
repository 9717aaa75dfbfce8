"""EOS show-command output rendered from a `SwitchState`.

Text forms follow EOS's layout; JSON forms use the field names EOS's
``| json`` output uses for ``show version``, ``show interfaces``,
``show hostname``, ``show ip bgp summary`` and ``show ip bgp neighbors``.
``show running-config | json`` is derived from the rendered text, in EOS's
``{"cmds": {"interface Ethernet1": {"cmds": {"mtu 9214": null}}}}`` shape, so
that text and JSON can never disagree; it is the JSON source for PFC, QoS maps,
ECN and BGP maximum-paths.
"""

from __future__ import annotations

import difflib
import ipaddress
from typing import Any

from .model import DeviceFacts, SwitchState, natural_key

INDENT = "   "
_BLOCK_STARTERS = ("interface ", "router ", "tx-queue ")


def dotted_mac(mac: str) -> str:
    """``00:1c:73:00:00:01`` -> ``001c.7300.0001`` (EOS text form)."""
    digits = mac.replace(":", "")
    return ".".join(digits[i : i + 4] for i in range(0, 12, 4))


def running_config(state: SwitchState) -> str:
    """``show running-config`` text."""
    lines = [
        "! Command: show running-config",
        f"! device: {state.hostname} ({state.model}, EOS-{state.nos_version})",
        "!",
        f"! boot system {state.boot_image}",
        "!",
        f"hostname {state.hostname}",
        "!",
    ]
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(state.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    for tc, dscps in sorted(by_tc.items()):
        lines.append(f"qos map dscp {' '.join(map(str, dscps))} to traffic-class {tc}")
    if by_tc:
        lines.append("!")
    for name in sorted(state.interfaces, key=natural_key):
        port = state.interfaces[name]
        lines.append(f"interface {name}")
        if port.description:
            lines.append(f"{INDENT}description {port.description}")
        if port.mtu != 1500:
            lines.append(f"{INDENT}mtu {port.mtu}")
        if port.ipv4:
            lines += [f"{INDENT}no switchport", f"{INDENT}ip address {port.ipv4}"]
        if port.pfc_priorities:
            lines.append(f"{INDENT}priority-flow-control on")
            lines += [
                f"{INDENT}priority-flow-control priority {p} no-drop" for p in port.pfc_priorities
            ]
        if port.pfc_headroom_kb is not None:
            lines.append(f"{INDENT}priority-flow-control headroom {port.pfc_headroom_kb} kbytes")
        if port.pfc_xoff_kb is not None:
            lines.append(f"{INDENT}priority-flow-control xoff-threshold {port.pfc_xoff_kb} kbytes")
        for queue, ecn in sorted(port.ecn.items()):
            lines += [
                f"{INDENT}!",
                f"{INDENT}tx-queue {queue}",
                f"{INDENT * 2}random-detect ecn minimum-threshold {ecn.kmin_kb} kbytes "
                f"maximum-threshold {ecn.kmax_kb} kbytes max-mark-probability {ecn.pmax_percent}",
            ]
        lines.append("!")
    if state.bgp is not None:
        bgp = state.bgp
        lines.append(f"router bgp {bgp.asn}")
        if bgp.router_id:
            lines.append(f"{INDENT}router-id {bgp.router_id}")
        if bgp.maximum_paths != 1:
            lines.append(f"{INDENT}maximum-paths {bgp.maximum_paths} ecmp {bgp.maximum_paths}")
        for peer in sorted(bgp.neighbors, key=ipaddress.IPv4Address):
            neighbor = bgp.neighbors[peer]
            lines.append(f"{INDENT}neighbor {peer} remote-as {neighbor.remote_as}")
            if neighbor.route_map_in:
                lines.append(f"{INDENT}neighbor {peer} route-map {neighbor.route_map_in} in")
        lines.append("!")
    lines.append("end")
    return "\n".join(lines)


def config_tree(text: str) -> dict[str, Any]:
    """``show running-config | json``: the text as EOS's nested ``cmds`` tree."""
    entries = [
        (len(line) - len(line.lstrip(" ")), line.strip())
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("!") and line.strip() != "end"
    ]
    header = [line + "\n" for line in text.splitlines()[:2]]
    root: dict[str, Any] = {"cmds": {}, "comments": [], "header": header}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for index, (indent, command) in enumerate(entries):
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]["cmds"]
        has_children = index + 1 < len(entries) and entries[index + 1][0] > indent
        if has_children or command.startswith(_BLOCK_STARTERS):
            block: dict[str, Any] = {"cmds": {}, "comments": []}
            parent[command] = block
            stack.append((indent, block))
        else:
            parent[command] = None
    return root


def session_diff(running: str, session: str, name: str) -> str:
    """``show session-config diffs``: unified diff of running against the session."""
    return "\n".join(
        difflib.unified_diff(
            running.splitlines(),
            session.splitlines(),
            fromfile="system:/running-config",
            tofile=f"session:/{name}-session-config",
            lineterm="",
        )
    )


def version_json(state: SwitchState, facts: DeviceFacts) -> dict[str, Any]:
    """``show version | json``."""
    return {
        "mfgName": "Arista",
        "modelName": state.model,
        "hardwareRevision": "11.00",
        "serialNumber": facts.serial,
        "systemMacAddress": facts.mac,
        "hwMacAddress": facts.mac,
        "configMacAddress": "00:00:00:00:00:00",
        "version": state.nos_version,
        "architecture": "x86_64",
        "internalVersion": f"{state.nos_version}-{facts.serial[-8:]}",
        "internalBuildId": "00000000-0000-4000-8000-" + facts.mac.replace(":", ""),
        "imageFormatVersion": "3.0",
        "imageOptimization": "Default",
        "bootupTimestamp": round(facts.boot_time, 3),
        "uptime": round(facts.now - facts.boot_time, 3),
        "memTotal": 32_617_876,
        "memFree": 24_713_500,
        "isIntlVersion": False,
    }


def version_text(state: SwitchState, facts: DeviceFacts) -> str:
    """``show version``."""
    data = version_json(state, facts)
    minutes = int(data["uptime"] // 60)
    return "\n".join(
        [
            f"Arista {state.model}",
            "Hardware version: 11.00",
            f"Serial number: {facts.serial}",
            f"Hardware MAC address: {dotted_mac(facts.mac)}",
            f"System MAC address: {dotted_mac(facts.mac)}",
            "",
            f"Software image version: {state.nos_version}",
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


def interfaces_json(state: SwitchState, facts: DeviceFacts) -> dict[str, Any]:
    """``show interfaces | json``."""
    result: dict[str, Any] = {}
    for index, name in enumerate(sorted(state.interfaces, key=natural_key), start=1):
        port = state.interfaces[name]
        addresses: list[dict[str, Any]] = []
        if port.ipv4:
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
        mac = facts.port_mac(index)
        result[name] = {
            "name": name,
            "forwardingModel": "routed" if port.ipv4 else "bridged",
            "lineProtocolStatus": "up",
            "interfaceStatus": "connected",
            "hardware": "ethernet",
            "interfaceAddress": addresses,
            "physicalAddress": mac,
            "burnedInAddress": mac,
            "description": port.description,
            "bandwidth": 400_000_000_000,
            "mtu": port.mtu,
            "l3MtuConfigured": port.mtu != 1500,
            "l2Mru": 0,
            "lastStatusChangeTimestamp": round(facts.boot_time, 3),
        }
    return {"interfaces": result}


def interfaces_text(state: SwitchState, facts: DeviceFacts) -> str:
    """``show interfaces``."""
    blocks = []
    for name, data in interfaces_json(state, facts)["interfaces"].items():
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
                f"  IP MTU {data['mtu']} bytes, BW 400000000 kbit",
            ]
        else:
            lines.append(f"  Ethernet MTU {data['mtu']} bytes, BW 400000000 kbit")
        lines.append("  Full-duplex, 400Gb/s, auto negotiation: off, uplink: off")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def bgp_summary_json(state: SwitchState, facts: DeviceFacts) -> dict[str, Any]:
    """``show ip bgp summary | json``."""
    if state.bgp is None:
        return {"vrfs": {}}
    peers = {
        ip: {
            "version": 4,
            "msgReceived": 0,
            "msgSent": 0,
            "inMsgQueue": 0,
            "outMsgQueue": 0,
            "asn": str(peer.remote_as),
            "prefixAccepted": 0,
            "prefixReceived": 0,
            "upDownTime": round(facts.boot_time, 3),
            "underMaintenance": False,
            "peerState": "Established",
        }
        for ip, peer in sorted(state.bgp.neighbors.items())
    }
    vrf = {
        "vrf": "default",
        "routerId": state.bgp.router_id or "0.0.0.0",
        "asn": str(state.bgp.asn),
        "peers": peers,
    }
    return {"vrfs": {"default": vrf}}


def bgp_summary_text(state: SwitchState, facts: DeviceFacts) -> str:
    """``show ip bgp summary``."""
    data = bgp_summary_json(state, facts)["vrfs"]
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


def bgp_neighbors_json(state: SwitchState) -> dict[str, Any]:
    """``show ip bgp neighbors | json``."""
    if state.bgp is None:
        return {"vrfs": {}}
    peers = []
    for ip, peer in sorted(state.bgp.neighbors.items()):
        entry: dict[str, Any] = {
            "peerAddress": ip,
            "asn": str(peer.remote_as),
            "localAsn": str(state.bgp.asn),
            "routerId": "0.0.0.0",
            "vrf": "default",
            "state": "Established",
            "maxTotalRoutes": 0,
        }
        if peer.route_map_in:
            entry["routeMapInbound"] = peer.route_map_in
        peers.append(entry)
    return {"vrfs": {"default": {"peerList": peers}}}


def bgp_neighbors_text(state: SwitchState) -> str:
    """``show ip bgp neighbors``."""
    if state.bgp is None:
        return "% BGP inactive"
    lines = []
    for peer in bgp_neighbors_json(state)["vrfs"]["default"]["peerList"]:
        lines.append(
            f"BGP neighbor is {peer['peerAddress']}, remote AS {peer['asn']}, external link"
        )
        lines.append("  BGP state is Established")
        if "routeMapInbound" in peer:
            lines.append(f"  Inbound route map is {peer['routeMapInbound']}")
    return "\n".join(lines)


def boot_config_text(state: SwitchState) -> str:
    """``show boot-config``."""
    return "\n".join(
        [
            f"Software image: {state.boot_image}",
            "Console speed: (not set)",
            "Aboot password (encrypted): (not set)",
            "Memory test iterations: (not set)",
        ]
    )
