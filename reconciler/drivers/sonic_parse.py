"""SONiC output -> plumb's flat state (pure): ``show version`` text and the config_db
JSON of ``show runningconfiguration all``.

=================================  =====================================================
flat path                          config_db
=================================  =====================================================
``interfaces/<p>/mtu``             ``PORT|<p>`` ``mtu`` (SONiC's default 9100 if unset)
``interfaces/<p>/address``         ``INTERFACE|<p>|<a.b.c.d/len>``
``interfaces/<p>/pfc_priorities``  ``PORT_QOS_MAP|<p>`` ``pfc_enable``
``qos/dscp/<d>``                   ``DSCP_TO_TC_MAP|<map>`` (the global or first port map)
``qos/ecn/<q>/*``                  ``QUEUE|<p>|<q>`` ``wred_profile`` -> ``WRED_PROFILE``
                                   ``green_{min,max}_threshold`` (bytes),
                                   ``green_drop_probability``
``qos/pfc_headroom_kb``            ``BUFFER_PG|<p>|<pgs>`` -> ``BUFFER_PROFILE`` ``xoff``
``qos/pfc_xoff_kb``                the same profile's ``static_th`` (pause threshold)
``bgp/asn``, ``router_id``         ``BGP_GLOBALS|default`` ``local_asn``, ``router_id``
``bgp/maximum_paths``              ``BGP_GLOBALS_AF|default|ipv4_unicast`` ``max_ebgp_paths``
``bgp/neighbors/<ip>/*``           ``BGP_NEIGHBOR|<ip>`` ``asn``;
                                   ``BGP_NEIGHBOR_AF|default|<ip>|ipv4_unicast``
                                   ``route_map_in[0]``
=================================  =====================================================

Fleet-wide QoS is aggregated over ports as on EOS (:func:`.eos_parse.common`): the
value every port shares, else ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reconciler.drivers.eos_parse import common, is_ethernet, natural
from reconciler.settings import Scalar

ConfigDb = dict[str, Any]
DEFAULT_MTU = 9100
DEFAULT_MAP = "AZURE"


def _kb(text: Any) -> int:
    return -(-int(str(text)) // 1024)


def profile_name(reference: str) -> str:
    """Profile references may be bare or in the older ``[TABLE|name]`` form."""
    return reference.strip("[]").rsplit("|", 1)[-1]


def table(db: Mapping[str, Any], name: str) -> dict[str, Any]:
    rows: dict[str, Any] = db.get(name, {})
    return rows


def parse_version(text: str) -> dict[str, Scalar]:
    """``show version`` -> nos version (``SONiC.202411`` is ``202411``), model, serial."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    version = fields.get("SONiC Software Version", "")
    if not version:
        raise ValueError("show version: no 'SONiC Software Version' line")
    return {
        "system/nos_version": re.sub(r"^SONiC\.", "", version),
        "system/model": fields.get("HwSKU", ""),
        "system/serial": fields.get("Serial Number", ""),
    }


def dscp_map_name(db: Mapping[str, Any]) -> str:
    """The DSCP-to-TC map in use: the global one, else the first port's, else AZURE."""
    qos = table(db, "PORT_QOS_MAP")
    if "dscp_to_tc_map" in qos.get("global", {}):
        return profile_name(str(qos["global"]["dscp_to_tc_map"]))
    for name in sorted(qos, key=natural):
        if "dscp_to_tc_map" in qos[name]:
            return profile_name(str(qos[name]["dscp_to_tc_map"]))
    return DEFAULT_MAP


def _queues(spec: str) -> list[int]:
    low, _, high = spec.partition("-")
    return list(range(int(low), int(high or low) + 1))


def _port_qos(db: Mapping[str, Any], ports: list[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {p: {"ecn": {}, "headroom": [], "xoff": []} for p in ports}
    wred = table(db, "WRED_PROFILE")
    # Ranges first, single queues last: the most specific entry wins.
    for key in sorted(table(db, "QUEUE"), key=lambda k: ("-" not in k, k)):
        port, _, spec = key.partition("|")
        reference = table(db, "QUEUE")[key].get("wred_profile")
        if port not in found or reference is None:
            continue
        profile = wred.get(profile_name(str(reference)), {})
        value = (
            _kb(profile["green_min_threshold"]),
            _kb(profile["green_max_threshold"]),
            int(profile.get("green_drop_probability", "100")),
        )
        for queue in _queues(spec):
            found[port]["ecn"][queue] = value
    buffers = table(db, "BUFFER_PROFILE")
    for key, fields in table(db, "BUFFER_PG").items():
        port = key.partition("|")[0]
        if port not in found:
            continue
        profile = buffers.get(profile_name(str(fields.get("profile", ""))), {})
        found[port]["headroom"].append(_kb(profile["xoff"]) if "xoff" in profile else None)
        found[port]["xoff"].append(_kb(profile["static_th"]) if "static_th" in profile else None)
    return found


def _bgp(db: Mapping[str, Any]) -> dict[str, Scalar]:
    glob = table(db, "BGP_GLOBALS").get("default", {})
    asn = glob.get("local_asn", table(db, "DEVICE_METADATA").get("localhost", {}).get("bgp_asn"))
    out: dict[str, Scalar] = {
        "bgp/asn": None if asn is None else int(asn),
        "bgp/router_id": glob.get("router_id"),
        "bgp/maximum_paths": None,
    }
    if asn is None:
        return out
    af = table(db, "BGP_GLOBALS_AF").get("default|ipv4_unicast", {})
    out["bgp/maximum_paths"] = int(af.get("max_ebgp_paths", "1"))
    filters = table(db, "BGP_NEIGHBOR_AF")
    for key, fields in table(db, "BGP_NEIGHBOR").items():
        vrf, _, peer = key.rpartition("|")
        if vrf not in ("", "default"):
            continue
        out[f"bgp/neighbors/{peer}/remote_as"] = int(fields["asn"])
        maps = filters.get(f"default|{peer}|ipv4_unicast", {}).get("route_map_in") or [""]
        out[f"bgp/neighbors/{peer}/inbound_filter"] = str(
            maps[0] if isinstance(maps, list) else maps
        )
    return out


def parse_config_db(db: Mapping[str, Any]) -> dict[str, Scalar]:
    """config_db -> the flat settings it configures (see the module table)."""
    out: dict[str, Scalar] = {}
    hostname = table(db, "DEVICE_METADATA").get("localhost", {}).get("hostname")
    if hostname is not None:
        out["system/hostname"] = str(hostname)
    ports = sorted((p for p in table(db, "PORT") if is_ethernet(p)), key=natural)
    addresses: dict[str, str] = {}
    for key in sorted(table(db, "INTERFACE")):
        port, _, prefix = key.partition("|")
        if prefix and port not in addresses:
            addresses[port] = prefix
    qos_map = table(db, "PORT_QOS_MAP")
    for port in ports:
        fields = table(db, "PORT")[port]
        enabled = str(qos_map.get(port, {}).get("pfc_enable", ""))
        priorities = sorted({int(p) for p in enabled.split(",") if p.strip()})
        out[f"interfaces/{port}/mtu"] = int(fields.get("mtu", DEFAULT_MTU))
        out[f"interfaces/{port}/address"] = addresses.get(port)
        out[f"interfaces/{port}/pfc_priorities"] = ",".join(map(str, priorities))
        out[f"interfaces/{port}/description"] = str(fields.get("description", ""))
    dscp = table(db, "DSCP_TO_TC_MAP").get(dscp_map_name(db), {})
    for number in range(64):
        out[f"qos/dscp/{number}"] = int(dscp[str(number)]) if str(number) in dscp else None
    per_port = list(_port_qos(db, ports).values())
    for queue in range(8):
        shared = common([p["ecn"].get(queue) for p in per_port])
        for index, field in enumerate(("kmin_kb", "kmax_kb", "pmax_percent")):
            out[f"qos/ecn/{queue}/{field}"] = None if shared is None else shared[index]
    out["qos/pfc_headroom_kb"] = common([common(p["headroom"]) for p in per_port])
    out["qos/pfc_xoff_kb"] = common([common(p["xoff"]) for p in per_port])
    out.update(_bgp(db))
    return out


def observed_state(version_text: str, db: Mapping[str, Any]) -> dict[str, Scalar]:
    state = parse_config_db(db)
    state.update(parse_version(version_text))
    return dict(sorted(state.items()))
