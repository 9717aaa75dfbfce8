"""Linux interfaces as plumb's flat port state, and the ``ip -batch`` lines that change
them (pure); shared by the linux-frr switches (``interfaces/<port>/...``) and the
namespaced hosts of the real-network lab (``nics/<nic>/...``).

Read from ``ip -j -d link show`` and ``ip -j address show``::

    <kind>/<port>/mtu               the link's MTU
    <kind>/<port>/address           its global IPv4 address as ``a.b.c.d/len`` (None: none)
    interfaces/<port>/ipv6_address  a switch port's global IPv6 address, compressed as
                                    ``fc00::1/127`` (None: none; link-local is not one)
    <kind>/<port>/link_kind         ``veth``, ``bond``...; "" for a physical port

A change of one family's address flushes only that family's global addresses (``to
0.0.0.0/0`` or ``to ::/0``): the other family and the link-local address stay.

Linux names an interface in at most 15 characters without ``/``; a port whose
inventory name does not fit is reached through a port -> interface name map (the
real-network lab records one; a whitebox switch usually names ports as Linux does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.settings import Change, Scalar

FIELDS = {"interfaces": ("mtu", "address", "ipv6_address"), "nics": ("mtu", "address")}
"""The port fields plumb writes through iproute2, by kind."""
_FAMILY = {"address": ("inet", "0.0.0.0/0"), "ipv6_address": ("inet6", "::/0")}


def _json(text: str, what: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise ValueError(f"{what}: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise ValueError(f"{what}: expected a JSON list")
    return [entry for entry in data if isinstance(entry, dict)]


def ports_state(
    links: str, addresses: str, kind: str, port_of: Mapping[str, str]
) -> dict[str, Scalar]:
    """The flat state of every interface but ``lo``; ``port_of`` maps interface names
    back to inventory port names (an unmapped interface keeps its own name)."""
    fields = [f for f in FIELDS[kind] if f in _FAMILY]
    found: dict[tuple[str, str], str] = {}
    for entry in _json(addresses, "ip -j address show"):
        for info in entry.get("addr_info", []):
            if info.get("scope") != "global":
                continue
            for name in fields:
                if info.get("family") == _FAMILY[name][0]:
                    text = f"{info['local']}/{info['prefixlen']}"
                    found.setdefault((str(entry["ifname"]), name), text)
    state: dict[str, Scalar] = {}
    for entry in _json(links, "ip -j link show"):
        name = str(entry.get("ifname", ""))
        if not name or name == "lo":
            continue
        port = port_of.get(name, name)
        state[f"{kind}/{port}/mtu"] = int(entry["mtu"])
        for field in fields:
            state[f"{kind}/{port}/{field}"] = found.get((name, field))
        state[f"{kind}/{port}/link_kind"] = str(entry.get("linkinfo", {}).get("info_kind", ""))
    return state


def port_field(path: str, kind: str) -> tuple[str, str] | None:
    """(port, field) of a port path plumb writes through iproute2, else None."""
    if not path.startswith(f"{kind}/"):
        return None
    port, _, name = path[len(kind) + 1 :].rpartition("/")
    return (port, name) if port and name in FIELDS.get(kind, ()) else None


def batch_lines(changes: Sequence[Change], kind: str, ifname_of: Mapping[str, str]) -> list[str]:
    """``ip -batch`` lines taking the ports to each change's ``after``."""
    lines: list[str] = []
    for change in changes:
        found = port_field(change.path, kind)
        if found is None:
            continue
        port, name = found
        dev = ifname_of.get(port, port)
        if name == "mtu":
            lines.append(f"link set dev {dev} mtu {int(str(change.after))}")
        else:
            lines.append(f"address flush dev {dev} scope global to {_FAMILY[name][1]}")
            if change.after:
                lines.append(f"address add {change.after} dev {dev}")
    return lines
