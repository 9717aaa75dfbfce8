"""``show running-config`` of an `EosConfig`: text, its JSON ``cmds`` tree, session diffs.

The text follows EOS's order and indentation: header comments, hostname,
qos profiles, interfaces (every port, configured or not), ``ip routing``,
``qos map``, route-maps, ``router bgp``, the commands kept verbatim, ``end``;
three spaces per level, a ``!`` line closing each block.  Lines kept verbatim
(`eos_blocks`) follow the modeled lines of their mode, in the order given.
``| json`` is derived from the rendered text in EOS's
``{"cmds": {"interface Ethernet1": {"cmds": {"mtu 9214": null}}}}`` shape (``!!``
comments in a block's ``comments``), so text and JSON never disagree.
"""

from __future__ import annotations

import difflib
import ipaddress
from typing import Any

from .eos_blocks import is_separator, render_all
from .eos_model import (
    EcnThresholds,
    EosBgp,
    EosConfig,
    EosFamily,
    EosInterface,
    EosPeer,
    QosSettings,
)
from .model import natural_key

INDENT = "   "
_BLOCK_STARTERS = (
    "interface ",
    "router ",
    "tx-queue ",
    "uc-tx-queue ",
    "mc-tx-queue ",
    "qos profile ",
    "route-map ",
    "address-family ",
)


def running_config(config: EosConfig, model: str, version: str) -> str:
    """``show running-config`` text."""
    lines = [
        "! Command: show running-config",
        f"! device: {config.hostname} ({model}, EOS-{version.split(' ', 1)[0]})",
        "!",
        f"! boot system {config.boot_image}",
        "!",
        f"hostname {config.hostname}",
        "!",
    ]
    for name in sorted(config.qos_profiles, key=natural_key):
        lines.append(f"qos profile {name}")
        lines += _qos_lines(config.qos_profiles[name], 1)
        lines.append("!")
    for name in sorted(config.interfaces, key=natural_key):
        lines.append(f"interface {name}")
        lines += _interface_lines(config.interfaces[name])
        lines.append("!")
    lines += ["ip routing" if config.ip_routing else "no ip routing", "!"]
    if config.dscp_map:
        lines += [*_dscp_lines(config.dscp_map), "!"]
    for (name, seq), entry in sorted(config.route_maps.items()):
        lines.append(f"route-map {name} {entry.action} {seq}")
        lines += [INDENT + line for line in entry.lines]
        lines.append("!")
    if config.bgp is not None:
        lines += [*_bgp_lines(config.bgp), "!"]
    lines += render_all(config.extra, 0)
    if config.extra:
        lines.append("!")
    lines.append("end")
    return "\n".join(lines)


def _dscp_lines(dscp_map: dict[int, tuple[int, int | None]]) -> list[str]:
    groups: dict[tuple[int, int], list[int]] = {}
    for dscp, (tc, dp) in sorted(dscp_map.items()):
        groups.setdefault((tc, -1 if dp is None else dp), []).append(dscp)
    lines = []
    for (tc, dp), dscps in sorted(groups.items()):
        suffix = "" if dp < 0 else f" drop-precedence {dp}"
        lines.append(f"qos map dscp {' '.join(map(str, dscps))} to traffic-class {tc}{suffix}")
    return lines


def _interface_lines(port: EosInterface) -> list[str]:
    lines = []
    if port.description:
        lines.append(f"description {port.description}")
    if port.mtu is not None:
        lines.append(f"mtu {port.mtu}")
    if port.l2_mtu is not None:
        lines.append(f"l2 mtu {port.l2_mtu}")
    if port.switchport and port.switchport_line:
        lines.append("switchport")
    if not port.switchport:
        lines.append("no switchport")
    if port.ipv4:
        lines.append(f"ip address {port.ipv4}")
    lines += [f"ipv6 address {address}" for address in port.ipv6]
    if port.service_profile:
        lines.append(f"service-profile {port.service_profile}")
    lines += port.stated
    single = [block for block in port.extra if not block.children]
    nested = [block for block in port.extra if block.children]
    return (
        [INDENT + line for line in lines]
        + render_all(single, 1)
        + _qos_lines(port.qos, 1)
        + render_all(nested, 1)
    )


def _qos_lines(qos: QosSettings, depth: int) -> list[str]:
    pad = INDENT * depth
    lines = render_all(qos.extra, depth)
    if qos.pfc is not None:
        lines.append(pad + ("priority-flow-control on" if qos.pfc else "no priority-flow-control"))
    prios = sorted(qos.no_drop | qos.drop)
    lines += [
        pad + f"priority-flow-control priority {p} {'no-drop' if p in qos.no_drop else 'drop'}"
        for p in prios
    ]
    for key in qos.queue_keys():
        lines += [pad + "!", pad + f"{key[0]} {key[1]}"]
        ecn = qos.queues.get(key)
        if ecn is not None:
            lines.append(pad + INDENT + ecn_line(ecn))
        lines += render_all(qos.queue_extra.get(key, []), depth + 1)
    return lines


def ecn_line(ecn: EcnThresholds) -> str:
    """The ``random-detect ecn`` line of a queue."""
    text = (
        f"random-detect ecn minimum-threshold {ecn.low} {ecn.low_unit} "
        f"maximum-threshold {ecn.high} {ecn.high_unit}"
    )
    if ecn.probability is not None:
        text += f" max-mark-probability {ecn.probability}"
    if ecn.weight is not None:
        text += f" weight {ecn.weight}"
    return text


def _peer_key(address: str) -> tuple[int, int]:
    ip = ipaddress.ip_address(address)
    return ip.version, int(ip)


def _port_key(port: str) -> tuple[str, tuple[int, ...]]:
    kind = port.rstrip("0123456789/")
    return kind, tuple(int(n) for n in port[len(kind) :].split("/"))


def _activation_key(who: str) -> tuple[int, int, int, str]:
    try:
        version, value = _peer_key(who)
    except ValueError:
        return 1, 0, 0, who
    return 0, version, value, ""


def _peer_lines(who: str, peer: EosPeer, bgp: EosBgp) -> list[str]:
    lines = []
    if peer.peer_group:
        lines.append(f"neighbor {who} peer group {peer.peer_group}")
    if peer.remote_as is not None:
        lines.append(f"neighbor {who} remote-as {bgp.shown(peer.remote_as)}")
    if peer.description:
        lines.append(f"neighbor {who} description {peer.description}")
    if peer.route_map_in:
        lines.append(f"neighbor {who} route-map {peer.route_map_in} in")
    if peer.route_map_out:
        lines.append(f"neighbor {who} route-map {peer.route_map_out} out")
    return lines + [block.line for block in peer.extra]


def _bgp_lines(bgp: EosBgp) -> list[str]:
    body = list(bgp.stated)
    if bgp.asdot:
        body.append("bgp asn notation asdot")
    if bgp.router_id:
        body.append(f"router-id {bgp.router_id}")
    if bgp.maximum_paths is not None:
        ecmp = "" if bgp.ecmp is None else f" ecmp {bgp.ecmp}"
        body.append(f"maximum-paths {bgp.maximum_paths}{ecmp}")
    for name in sorted(bgp.peer_groups):
        body.append(f"neighbor {name} peer group")
        body += _peer_lines(name, bgp.peer_groups[name], bgp)
    for address in sorted(bgp.neighbors, key=_peer_key):
        body += _peer_lines(address, bgp.neighbors[address], bgp)
    for port in sorted(bgp.interfaces, key=_port_key):
        group, how = bgp.interfaces[port]
        body.append(f"neighbor interface {port} peer-group {group} {how}")
    lines = [f"router bgp {bgp.shown(bgp.asn)}"] + [INDENT + line for line in body]
    lines += render_all([b for b in bgp.extra if not b.children], 1)
    for name in ("ipv4", "ipv6"):
        family = _family_lines(bgp.families.get(name, EosFamily()))
        if family:
            lines += [INDENT + "!", f"{INDENT}address-family {name}"]
            lines += [INDENT * 2 + line for line in family]
            lines += render_all([b for b in bgp.families[name].extra if b.children], 2)
    lines += render_all([b for b in bgp.extra if b.children], 1)
    return lines


def _family_lines(family: EosFamily) -> list[str]:
    """An address family's lines (its own sub-blocks aside), empty when it says nothing."""
    lines = [f"neighbor {p} activate" for p in sorted(family.activated, key=_activation_key)]
    lines += [f"no neighbor {p} activate" for p in sorted(family.deactivated, key=_activation_key)]
    for direction, table in (("in", family.route_map_in), ("out", family.route_map_out)):
        lines += [
            f"neighbor {p} route-map {table[p]} {direction}"
            for p in sorted(table, key=_activation_key)
        ]
    return lines + [block.line for block in family.extra if not block.children]


def config_tree(text: str) -> dict[str, Any]:
    """``show running-config | json``: the text as EOS's nested ``cmds`` tree."""
    entries = [
        (len(line) - len(line.lstrip(" ")), line.strip())
        for line in text.splitlines()
        if line.strip() and not is_separator(line.strip())
    ]
    header = [line + "\n" for line in text.splitlines() if line.startswith(("! device", "! boot"))]
    root: dict[str, Any] = {"cmds": {}, "comments": [], "header": header}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for index, (indent, command) in enumerate(entries):
        while stack[-1][0] >= indent:
            stack.pop()
        if command.startswith("!!"):
            stack[-1][1]["comments"].append(command)
            continue
        parent = stack[-1][1]["cmds"]
        has_children = index + 1 < len(entries) and entries[index + 1][0] > indent
        if has_children or command.startswith(_BLOCK_STARTERS):
            block: dict[str, Any] = {"cmds": {}, "comments": []}
            parent[command] = block
            stack.append((indent, block))
        else:
            parent[command] = None
    return root


def session_diff(running: str, session: str, name: str, hunks: bool) -> str:
    """``show session-config named NAME diffs``: running against the session.

    EOS up to 4.31 prints a unified diff with ``@@`` hunk headers; 4.32 and
    later leave the hunk headers out (`hunks` False).
    """
    lines = difflib.unified_diff(
        running.splitlines(),
        session.splitlines(),
        fromfile="system:/running-config",
        tofile=f"session:/{name}-session-config",
        lineterm="",
    )
    return "\n".join(line for line in lines if hunks or not line.startswith("@@"))
