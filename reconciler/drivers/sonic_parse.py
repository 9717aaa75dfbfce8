"""SONiC output -> plumb's flat state (pure): ``show version`` text and the JSON of
``show runningconfiguration all``.

The running configuration is config_db as JSON. From 202305 it carries the FRR running
configuration as a top-level ``bgpraw`` string; on a multi-ASIC switch it is one object
per namespace (``localhost`` for the host, ``asic0``... for each ASIC, each with its own
``bgpraw``). :func:`namespaces` gives both shapes as ``{namespace: config_db}`` (``""``
for a single-ASIC switch), and a port's settings come from its own namespace.

=================================  =====================================================
flat path                          config_db (in the port's namespace)
=================================  =====================================================
``system/nos_version``             the branch of ``SONiC Software Version`` (``202405``;
                                   :mod:`.sonic_version`), ``None`` when unreadable
``system/nos_build``               the whole version string (read-only)
``system/asic_type``               ``ASIC`` (``mellanox``, ``broadcom``, ``cisco-8000``...)
``system/buffer_model``            ``DEVICE_METADATA|localhost`` ``buffer_model``:
                                   ``dynamic``, else ``static`` (``traditional``)
``interfaces/<p>/mtu``             ``PORT|<p>`` ``mtu`` (SONiC's default 9100 if unset)
``interfaces/<p>/address``         ``INTERFACE|<p>|<a.b.c.d/len>`` (IPv6 keys are kept
                                   apart and never reported here)
``interfaces/<p>/mode``            ``lag-member`` with a ``PORTCHANNEL_MEMBER`` row (its
                                   MTU is the PortChannel's: teammgrd sets it), ``switched``
                                   with a ``VLAN_MEMBER`` row, else ``routed``
``interfaces/<p>/pfc_priorities``  ``PORT_QOS_MAP|<p>`` ``pfc_enable``
``qos/dscp/<d>``                   the ``DSCP_TO_TC_MAP`` each active port names
                                   (``PORT_QOS_MAP|<p>`` ``dscp_to_tc_map``)
``qos/ecn/<q>/*``                  ``QUEUE|<p>|<q>`` ``wred_profile`` -> ``WRED_PROFILE``
                                   ``green_{min,max}_threshold`` (bytes),
                                   ``green_drop_probability``
``qos/ecn/<q>/wred_profile``       the WRED profile those queues use (read-only)
``qos/pfc_headroom_kb``            the lossless priority groups' ``BUFFER_PG`` profile
                                   ``xoff`` (static buffer model only; absent on the
                                   dynamic model, where buffermgrd computes it)
``qos/pfc_headroom_profiles``      the lossless profiles in use, by name (read-only)
``qos/shared_headroom_pool``       whether their pool has a shared headroom pool (a
                                   non-zero ``xoff``; read-only)
``bgp/*``                          :mod:`.sonic_bgp`
=================================  =====================================================

A QoS row keyed by a comma-separated list of ports (``PORT_QOS_MAP|Ethernet0,Ethernet4``,
``QUEUE|Ethernet0,Ethernet4|3``, as 201911-era files write them) is each listed port's,
as orchagent splits it; a port's own row wins.

Fleet-wide QoS is aggregated over *active* ports (those with a ``QUEUE`` or
``BUFFER_PG`` row) as on EOS (:func:`.eos_parse.common`): the value they all share,
else ``None``. Lossless priority groups are the port's PFC priorities mapped through
its ``pfc_to_pg_map`` (else ``tc_to_pg_map``, else identity); priority group 0 and the
other lossy groups never count. SONiC has no PFC pause threshold to report.

Malformed input raises :class:`ValueError` (or ``KeyError`` / ``TypeError``), which
the driver turns into that device's error.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from reconciler.drivers.eos_parse import common, is_ethernet, natural
from reconciler.drivers.sonic_bgp import parse_bgp
from reconciler.drivers.sonic_buffers import shared_pool
from reconciler.drivers.sonic_version import nos_version
from reconciler.settings import Scalar

ConfigDb = dict[str, Any]
DEFAULT_MTU = 9100
DEFAULT_MAP = "AZURE"
_NAMESPACE = re.compile(r"^(?:localhost|asic[0-9]+)$")
INTERNAL_ROLES = ("Int", "Inb", "Rec", "Dpc")  # backplane, inband, recirculation ports


def kb(text: Any) -> int:
    """Bytes (config_db keeps them as text) -> KB, rounded up."""
    return -(-int(str(text)) // 1024)


def profile_name(reference: str) -> str:
    """Profile references may be bare or in the older ``[TABLE|name]`` form."""
    return reference.strip("[]").rsplit("|", 1)[-1]


def table(db: Mapping[str, Any], name: str) -> dict[str, Any]:
    rows = db.get(name, {})
    if not isinstance(rows, dict):
        raise ValueError(f"config_db table {name} is not an object")
    return rows


def namespaces(data: Mapping[str, Any]) -> dict[str, ConfigDb]:
    """``{namespace: config_db}``: ``{"": db}`` on a single-ASIC switch."""
    if data and all(_NAMESPACE.match(k) for k in data) and "localhost" in data:
        for name, db in data.items():
            if not isinstance(db, dict):
                raise ValueError(f"namespace {name} is not an object")
        return {name: dict(db) for name, db in data.items()}
    return {"": dict(data)}


def host_db(spaces: Mapping[str, ConfigDb]) -> ConfigDb:
    return spaces.get("localhost", spaces.get("", {}))


def metadata(spaces: Mapping[str, ConfigDb]) -> dict[str, Any]:
    found: dict[str, Any] = table(host_db(spaces), "DEVICE_METADATA").get("localhost", {})
    return found


def buffer_model(spaces: Mapping[str, ConfigDb]) -> str:
    return "dynamic" if metadata(spaces).get("buffer_model") == "dynamic" else "static"


def parse_version(text: str) -> dict[str, Scalar]:
    """``show version`` -> branch (``system/nos_version``), build, model (HwSKU), ASIC
    type, serial. A build string that cannot be read leaves the branch unknown (None)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    build = fields.get("SONiC Software Version", "")
    return {
        "system/nos_version": nos_version(build),
        "system/nos_build": build,
        "system/model": fields.get("HwSKU", ""),
        "system/platform": fields.get("Platform", ""),
        "system/asic_type": fields.get("ASIC", ""),
        "system/serial": fields.get("Serial Number", ""),
    }


def front_ports(spaces: Mapping[str, ConfigDb]) -> dict[str, str]:
    """Front-panel Ethernet ports -> their namespace, in natural order."""
    found: dict[str, str] = {}
    for space, db in spaces.items():
        for port, fields in table(db, "PORT").items():
            if is_ethernet(port) and fields.get("role", "Ext") not in INTERNAL_ROLES:
                found[port] = space
    return dict(sorted(found.items(), key=lambda kv: natural(kv[0])))


def spans(spec: str) -> list[int]:
    """``3`` or ``3-4`` -> the queue or priority-group numbers."""
    low, _, high = spec.partition("-")
    return list(range(int(low), int(high or low) + 1))


def lists(ports: str, port: str) -> bool:
    """Whether a key's port part names ``port``: itself, or a comma-separated list of ports
    that holds it (``Ethernet0,Ethernet4``, as 201911-era config_db files write QoS rows
    and orchagent still splits them)."""
    return ports == port or ("," in ports and port in ports.split(","))


def port_key(db: Mapping[str, Any], name: str, port: str) -> str | None:
    """The key of ``TABLE|<port>`` (a port's own row, else a row listing it), if any."""
    rows = table(db, name)
    if port in rows:
        return port
    return next((key for key in rows if "," in key and lists(key, port)), None)


def port_row(db: Mapping[str, Any], name: str, port: str) -> dict[str, Any]:
    key = port_key(db, name, port)
    found: dict[str, Any] = {} if key is None else table(db, name)[key]
    return found


def rows_of(db: Mapping[str, Any], name: str, port: str) -> dict[int, dict[str, Any]]:
    """``TABLE|<port>|<n or n-m>`` rows -> per number (single numbers win over ranges; a
    port's own rows over rows listing several ports)."""
    rows: dict[int, dict[str, Any]] = {}
    keys = [k for k in table(db, name) if lists(k.partition("|")[0], port)]
    for key in sorted(keys, key=lambda k: (k.partition("|")[0] == port, "-" not in k, k)):
        for number in spans(key.partition("|")[2]):
            rows[number] = table(db, name)[key]
    return rows


def active(db: Mapping[str, Any], port: str) -> bool:
    """A port carries QoS when it has queue or priority-group rows."""
    return bool(rows_of(db, "QUEUE", port) or rows_of(db, "BUFFER_PG", port))


def pfc_priorities(db: Mapping[str, Any], port: str) -> list[int]:
    enabled = str(port_row(db, "PORT_QOS_MAP", port).get("pfc_enable", ""))
    return sorted({int(p) for p in enabled.split(",") if p.strip()})


def lossless_groups(db: Mapping[str, Any], port: str) -> list[int]:
    """The priority groups the port's PFC priorities map to."""
    qos = port_row(db, "PORT_QOS_MAP", port)
    mapping: dict[str, Any] = {}
    if "pfc_to_pg_map" in qos:
        mapping = table(db, "MAP_PFC_PRIORITY_TO_PRIORITY_GROUP").get(
            profile_name(str(qos["pfc_to_pg_map"])), {}
        )
    elif "tc_to_pg_map" in qos:
        mapping = table(db, "TC_TO_PRIORITY_GROUP_MAP").get(
            profile_name(str(qos["tc_to_pg_map"])), {}
        )
    return sorted({int(mapping.get(str(p), p)) for p in pfc_priorities(db, port)})


def dscp_map_name(db: Mapping[str, Any], port: str | None = None) -> str:
    """The DSCP-to-TC map a port uses: its own, else the global one, else AZURE."""
    for key in (port, "global"):
        row = {} if key is None else port_row(db, "PORT_QOS_MAP", key)
        if "dscp_to_tc_map" in row:
            return profile_name(str(row["dscp_to_tc_map"]))
    return DEFAULT_MAP


def wred_name(db: Mapping[str, Any], port: str, queue: int) -> str | None:
    """The WRED profile queue ``queue`` of ``port`` references, if any."""
    reference = rows_of(db, "QUEUE", port).get(queue, {}).get("wred_profile")
    return None if reference is None else profile_name(str(reference))


def ecn_of(db: Mapping[str, Any], port: str) -> dict[int, tuple[int, int, int]]:
    """Per queue of ``port``: (Kmin KB, Kmax KB, Pmax %) of its WRED profile."""
    wred = table(db, "WRED_PROFILE")
    found: dict[int, tuple[int, int, int]] = {}
    for queue, fields in rows_of(db, "QUEUE", port).items():
        reference = fields.get("wred_profile")
        if reference is None:
            continue
        profile = wred[profile_name(str(reference))]
        found[queue] = (
            kb(profile["green_min_threshold"]),
            kb(profile["green_max_threshold"]),
            int(profile.get("green_drop_probability", "100")),
        )
    return found


def headroom_profiles(db: Mapping[str, Any], port: str) -> list[str | None]:
    """The buffer profile each lossless priority group of ``port`` uses (None: none,
    or ``NULL`` for a profile the dynamic buffer manager computes)."""
    groups = rows_of(db, "BUFFER_PG", port)
    names: list[str | None] = []
    for group in lossless_groups(db, port):
        name = profile_name(str(groups.get(group, {}).get("profile", "NULL")))
        names.append(None if name == "NULL" else name)
    return names


def port_speed_cable(db: Mapping[str, Any], port: str) -> tuple[str, str]:
    """A port's speed and its cable length (``CABLE_LENGTH|AZURE|<port>``), as the
    traditional buffer model names its lossless profile by them."""
    speed = str(table(db, "PORT").get(port, {}).get("speed", ""))
    cables = [str(rows[port]) for rows in table(db, "CABLE_LENGTH").values() if port in rows]
    return speed, cables[0] if cables else ""


def _headroom(db: Mapping[str, Any], port: str) -> int | None:
    profiles = table(db, "BUFFER_PROFILE")
    values = []
    for name in headroom_profiles(db, port):
        xoff = None if name is None else profiles[name].get("xoff")
        values.append(None if xoff is None else kb(xoff))
    shared: int | None = common(values)
    return shared


def _global_ipv6(prefixes: list[str]) -> str | None:
    """The first global IPv6 address of a port's ``INTERFACE`` keys, compressed as the
    switch prints it (a link-local or unreadable key is not one)."""
    for prefix in prefixes:
        if ":" not in prefix:
            continue
        try:
            address = ipaddress.IPv6Interface(prefix)
        except ValueError:
            continue
        if not address.ip.is_link_local:
            return str(address)
    return None


def _interfaces(db: Mapping[str, Any], port: str) -> dict[str, Scalar]:
    fields = table(db, "PORT")[port]
    addresses = sorted(
        k.partition("|")[2] for k in table(db, "INTERFACE") if k.startswith(f"{port}|")
    )
    ipv4 = [a for a in addresses if ":" not in a]
    switched = any(k.endswith(f"|{port}") for k in table(db, "VLAN_MEMBER"))
    member = any(k.endswith(f"|{port}") for k in table(db, "PORTCHANNEL_MEMBER"))
    prefix = f"interfaces/{port}"
    out: dict[str, Scalar] = {
        f"{prefix}/mtu": int(fields.get("mtu", DEFAULT_MTU)),
        f"{prefix}/address": ipv4[0] if ipv4 else None,
        f"{prefix}/mode": "lag-member" if member else "switched" if switched else "routed",
        f"{prefix}/pfc_priorities": ",".join(map(str, pfc_priorities(db, port))),
        f"{prefix}/description": str(fields.get("description", "")),
    }
    ipv6 = _global_ipv6(addresses)
    if ipv6 is not None:
        out[f"{prefix}/ipv6_address"] = ipv6
    if fields.get("alias"):
        # lldpmgrd advertises the alias as the port id: the neighbour hears this name
        out[f"{prefix}/alias"] = str(fields["alias"])
    return out


def _qos(spaces: Mapping[str, ConfigDb], ports: Mapping[str, str]) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    live = {p: s for p, s in ports.items() if active(spaces[s], p)}
    maps = {(s, dscp_map_name(spaces[s], p)) for p, s in live.items()}
    if not maps:
        host = next(iter(spaces))
        maps = {(host, dscp_map_name(spaces[host]))}
    for number in range(64):
        values = []
        for space, name in sorted(maps):
            value = table(spaces[space], "DSCP_TO_TC_MAP").get(name, {}).get(str(number))
            values.append(None if value is None else int(value))
        out[f"qos/dscp/{number}"] = common(values)
    per_port = [ecn_of(spaces[s], p) for p, s in live.items()]
    for queue in range(8):
        shared = common([found.get(queue) for found in per_port])
        for index, field in enumerate(("kmin_kb", "kmax_kb", "pmax_percent")):
            out[f"qos/ecn/{queue}/{field}"] = None if shared is None else shared[index]
        wred = {wred_name(spaces[s], p, queue) for p, s in live.items()} - {None}
        if wred:
            out[f"qos/ecn/{queue}/wred_profile"] = wred.pop() if len(wred) == 1 else None
    if buffer_model(spaces) == "static":
        lossless = [(p, s) for p, s in live.items() if lossless_groups(spaces[s], p)]
        out["qos/pfc_headroom_kb"] = common([_headroom(spaces[s], p) for p, s in lossless])
        names = {(s, n) for p, s in lossless for n in headroom_profiles(spaces[s], p) if n}
        out["qos/pfc_headroom_profiles"] = ",".join(sorted({n for _, n in names}))
        if names:
            out["qos/shared_headroom_pool"] = all(
                shared_pool(spaces[s], table(spaces[s], "BUFFER_PROFILE").get(n, {}))
                for s, n in names
            )
    return out


def parse_running(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """``show runningconfiguration all`` -> the flat settings it configures."""
    if not isinstance(data, Mapping):
        raise TypeError("the running configuration is not a JSON object")
    spaces = namespaces(data)
    meta = metadata(spaces)
    out: dict[str, Scalar] = {"system/buffer_model": buffer_model(spaces)}
    if "hostname" in meta:
        out["system/hostname"] = str(meta["hostname"])
    ports = front_ports(spaces)
    for port, space in ports.items():
        out.update(_interfaces(spaces[space], port))
    out.update(_qos(spaces, ports))
    out.update(parse_bgp(spaces))
    return out


def observed_state(version_text: str, data: Mapping[str, Any]) -> dict[str, Scalar]:
    state = parse_running(data)
    state.update(parse_version(version_text))
    return dict(sorted(state.items()))
