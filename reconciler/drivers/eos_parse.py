"""EOS output -> plumb's flat state (pure): the parsing half of the EOS driver.

Reads the structured output of ``show version | json``, ``show interfaces | json``
and ``show running-config | json`` (EOS's nested ``{"cmds": {...}}`` tree), the text
of ``show running-config`` and the unified diff of ``show session-config diffs``.

EOS configures ECN, PFC headroom and the PFC pause threshold per interface, while
plumb's intent holds them once per switch (``qos/ecn/<prio>/*``,
``qos/pfc_headroom_kb``, ``qos/pfc_xoff_kb``). A fleet-wide value is observed as the
value every Ethernet port shares, and as ``None`` when the ports disagree or one
lacks it, so a write (which sets every port) converges. Every DSCP 0-63 and every
queue 0-7 is reported (``None`` when unset), so each path intent may name is
observable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from reconciler.settings import Scalar

ECN_LINE = re.compile(
    r"^random-detect ecn minimum-threshold (\d+) (bytes|kbytes|mbytes) "
    r"maximum-threshold (\d+) (bytes|kbytes|mbytes) max-mark-probability (\d+)(?: weight \d+)?$"
)
_UNITS = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
Tree = Mapping[str, Any]


def is_ethernet(name: str) -> bool:
    return re.fullmatch(r"Ethernet\d+(?:/\d+)*", name) is not None


def natural(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def common(values: list[Any]) -> Any:
    """The value every port shares, or None when they differ (or there are none)."""
    if not values or any(v != values[0] for v in values):
        return None
    return values[0]


def _kb(number: str, unit: str) -> int:
    return -(-int(number) * _UNITS[unit] // 1024)


# -- show version / show interfaces ------------------------------------------------------


def parse_version(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """``show version | json`` -> ``system/*`` (version, model, serial)."""
    return {
        "system/nos_version": str(data["version"]),
        "system/model": str(data.get("modelName", "")),
        "system/serial": str(data.get("serialNumber", "")),
    }


def parse_interfaces(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """``show interfaces | json`` -> per-port mtu, address and description."""
    out: dict[str, Scalar] = {}
    interfaces: Mapping[str, Any] = data.get("interfaces", {})
    for name in sorted((n for n in interfaces if is_ethernet(n)), key=natural):
        port = interfaces[name]
        address: str | None = None
        for entry in port.get("interfaceAddress", []):
            primary = entry.get("primaryIp", {})
            if primary.get("address") not in (None, "0.0.0.0"):
                address = f"{primary['address']}/{primary['maskLen']}"
                break
        out[f"interfaces/{name}/mtu"] = int(port["mtu"])
        out[f"interfaces/{name}/address"] = address
        out[f"interfaces/{name}/description"] = str(port.get("description", ""))
    return out


# -- running-config tree -----------------------------------------------------------------


def _children(block: Any) -> Mapping[str, Any]:
    if isinstance(block, Mapping):
        cmds: Mapping[str, Any] = block.get("cmds", {})
        return cmds
    return {}


def _port_config(block: Any) -> dict[str, Any]:
    """One ``interface EthernetN`` block as plain values."""
    port: dict[str, Any] = {"mtu": 1500, "address": None, "pfc": [], "ecn": {}}
    port.update(headroom=None, xoff=None)
    for line, sub in _children(block).items():
        words = line.split()
        match words:
            case ["mtu", value]:
                port["mtu"] = int(value)
            case ["ip", "address", address]:
                port["address"] = address
            case ["priority-flow-control", "priority", prio, "no-drop"]:
                port["pfc"].append(int(prio))
            case ["priority-flow-control", "headroom", size, unit]:
                port["headroom"] = _kb(size, unit)
            case ["priority-flow-control", "xoff-threshold", size, unit]:
                port["xoff"] = _kb(size, unit)
            case ["tx-queue", queue]:
                for ecn in _children(sub):
                    found = ECN_LINE.match(ecn)
                    if found:
                        low, low_unit, high, high_unit, pmax = found.groups()
                        port["ecn"][int(queue)] = (
                            _kb(low, low_unit),
                            _kb(high, high_unit),
                            int(pmax),
                        )
    return port


def _bgp(block: Any, asn: int) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {"bgp/asn": asn, "bgp/router_id": None, "bgp/maximum_paths": 1}
    filters: dict[str, str] = {}
    for line in _children(block):
        match line.split():
            case ["router-id", rid]:
                out["bgp/router_id"] = rid
            case ["maximum-paths", paths, *_]:
                out["bgp/maximum_paths"] = int(paths)
            case ["neighbor", peer, "remote-as", remote]:
                out[f"bgp/neighbors/{peer}/remote_as"] = int(remote)
            case ["neighbor", peer, "route-map", name, "in"]:
                filters[peer] = name
    for path in [p for p in out if p.endswith("/remote_as")]:
        peer = path.split("/")[2]
        out[f"bgp/neighbors/{peer}/inbound_filter"] = filters.get(peer, "")
    return out


def parse_config(tree: Tree) -> dict[str, Scalar]:
    """``show running-config | json`` (or a text config made into a tree) -> the flat
    settings it configures: ports, QoS maps, ECN/PFC per port aggregated, BGP."""
    out: dict[str, Scalar] = {}
    ports: dict[str, dict[str, Any]] = {}
    dscp: dict[int, int] = {}
    bgp: dict[str, Scalar] = {"bgp/asn": None, "bgp/router_id": None, "bgp/maximum_paths": None}
    for line, block in _children(tree).items():
        words = line.split()
        match words:
            case ["hostname", name]:
                out["system/hostname"] = name
            case ["interface", name] if is_ethernet(name):
                ports[name] = _port_config(block)
            case ["qos", "map", "dscp", *values, "to", "traffic-class", tc]:
                dscp.update({int(d): int(tc) for d in values})
            case ["router", "bgp", asn]:
                bgp = _bgp(block, int(asn))
    for name in sorted(ports, key=natural):
        port = ports[name]
        out[f"interfaces/{name}/mtu"] = port["mtu"]
        out[f"interfaces/{name}/address"] = port["address"]
        out[f"interfaces/{name}/pfc_priorities"] = ",".join(map(str, sorted(port["pfc"])))
    for number in range(64):
        out[f"qos/dscp/{number}"] = dscp.get(number)
    every = [ports[n] for n in ports]
    for queue in range(8):
        shared = common([p["ecn"].get(queue) for p in every])
        for index, field in enumerate(("kmin_kb", "kmax_kb", "pmax_percent")):
            out[f"qos/ecn/{queue}/{field}"] = None if shared is None else shared[index]
    out["qos/pfc_headroom_kb"] = common([p["headroom"] for p in every])
    out["qos/pfc_xoff_kb"] = common([p["xoff"] for p in every])
    out.update(bgp)
    return out


def observed_state(
    version: Mapping[str, Any], interfaces: Mapping[str, Any], running: Tree
) -> dict[str, Scalar]:
    """The whole observed state: interface counters win over config for mtu/address."""
    state = parse_config(running)
    state.update(parse_version(version))
    state.update(parse_interfaces(interfaces))
    return dict(sorted(state.items()))


# -- text config and session diffs -------------------------------------------------------


def config_lines(text: str) -> list[tuple[int, str]]:
    """(indent, command) for every configuration line, comments and ``end`` dropped."""
    out = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped and not stripped.startswith("!") and stripped != "end":
            out.append((len(raw) - len(raw.lstrip(" ")), stripped))
    return out


def text_tree(text: str) -> dict[str, Any]:
    """``show running-config`` text -> the same ``cmds`` tree ``| json`` gives."""
    root: dict[str, Any] = {"cmds": {}}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    entries = config_lines(text)
    for index, (indent, command) in enumerate(entries):
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]["cmds"]
        if index + 1 < len(entries) and entries[index + 1][0] > indent:
            block: dict[str, Any] = {"cmds": {}}
            parent[command] = block
            stack.append((indent, block))
        else:
            parent[command] = None
    return root


def _hunks(diff: str) -> list[tuple[int, list[str], list[str]]]:
    """(stated old start, old lines, new lines) of every hunk of a unified diff."""
    hunks: list[tuple[int, list[str], list[str]]] = []
    for line in diff.splitlines():
        found = _HUNK.match(line)
        if found is not None:
            start = int(found.group(1)) - (0 if found.group(2) == "0" else 1)
            hunks.append((start, [], []))
            continue
        if not hunks or line.startswith("\\"):
            continue
        kind, body = line[:1], line[1:]
        if kind in (" ", ""):
            hunks[-1][1].append(body)
            hunks[-1][2].append(body)
        elif kind == "-":
            hunks[-1][1].append(body)
        elif kind == "+":
            hunks[-1][2].append(body)
    return hunks


def _locate(source: list[str], old: list[str], stated: int, position: int) -> int:
    """Where ``old`` sits in ``source``: at the stated line if it matches there, else
    the first match after ``position`` (header comments may shift line numbers)."""
    if not old:
        return max(stated, position)
    candidates: list[int] = [stated, *range(position, len(source) - len(old) + 1)]
    for start in candidates:
        if start >= position and source[start : start + len(old)] == old:
            return start
    raise ValueError(f"session diff does not match the running config near {old[0]!r}")


def apply_unified_diff(text: str, diff: str) -> str:
    """The text a unified diff of ``text`` describes; ValueError if it does not apply."""
    source = text.splitlines()
    result: list[str] = []
    position = 0
    offset = 0
    for stated, old, new in _hunks(diff):
        start = _locate(source, old, stated + offset, position)
        offset = start - stated
        result += source[position:start]
        result += new
        position = start + len(old)
    result += source[position:]
    return "\n".join(result)


def diff_paths(before: Mapping[str, Scalar], after: Mapping[str, Scalar]) -> dict[str, Scalar]:
    """Paths whose value differs between two flat states, with the new value."""
    paths: Iterable[str] = sorted(set(before) | set(after))
    return {p: after.get(p) for p in paths if before.get(p) != after.get(p)}
