"""SONiC config_db <-> `SwitchState`: rendering an initial config and projecting any config back.

The SONiC dialect keeps config_db itself as its running configuration (so a
patch may use any table name and keeps its own profile names); `project`
reads the tables below into a `SwitchState` and raises ValueError for any
value the model rejects, which is how ``config apply-patch`` validates.

| model value              | config_db                                                    |
|--------------------------|--------------------------------------------------------------|
| hostname, model          | DEVICE_METADATA|localhost: hostname, hwsku                    |
| mtu, description         | PORT|<port>: mtu, description                                 |
| ipv4                     | INTERFACE|<port>|<a.b.c.d/len>                               |
| pfc_priorities           | PORT_QOS_MAP|<port>: pfc_enable ("3,4")                       |
| ecn per queue            | QUEUE|<port>|<q>: wred_profile -> WRED_PROFILE green_* (bytes) |
| pfc_headroom_kb          | BUFFER_PG|<port>|<pgs>: profile -> BUFFER_PROFILE xoff (bytes) |
| pfc_xoff_kb              | the same BUFFER_PROFILE: static_th (bytes)                   |
| (fixed)                  | PORT speed 100000, CABLE_LENGTH 5m, a shared headroom pool   |
| dscp_to_tc               | DSCP_TO_TC_MAP|AZURE (or PORT_QOS_MAP|global's map)           |
| bgp asn                  | BGP_GLOBALS|default local_asn, else DEVICE_METADATA bgp_asn    |
| router_id                | BGP_GLOBALS|default: router_id                               |
| maximum_paths            | BGP_GLOBALS_AF|default|ipv4_unicast: max_ebgp_paths           |
| neighbors                | BGP_NEIGHBOR|<ip> (or default|<ip>): asn                    |
| route_map_in             | BGP_NEIGHBOR_AF|default|<ip>|ipv4_unicast: route_map_in[0]   |
"""

from __future__ import annotations

import ipaddress
from typing import Any

from .model import (
    BgpNeighbor,
    BgpState,
    EcnQueue,
    InterfaceState,
    SwitchState,
    check_asn,
    check_ecn,
    check_hostname,
    check_ipv4,
    check_ipv4_interface,
    check_mtu,
    check_range,
    natural_key,
)

ConfigDb = dict[str, Any]
DSCP_MAP = "AZURE"
LOSSLESS_XON = 18432


def _pg_range(priorities: list[int]) -> str:
    if not priorities:
        return "3"
    low, high = min(priorities), max(priorities)
    return str(low) if low == high else f"{low}-{high}"


def _buffer_profile(headroom_kb: int | None, xoff_kb: int | None) -> tuple[str, dict[str, str]]:
    """A lossless buffer profile: ``xoff`` is the headroom, ``static_th`` the pause threshold."""
    fields = {"pool": "ingress_lossless_pool", "xon": str(LOSSLESS_XON), "size": str(LOSSLESS_XON)}
    name = "pg_lossless"
    if headroom_kb is not None:
        fields["xoff"] = str(headroom_kb * 1024)
        name += f"_{headroom_kb}K"
    if xoff_kb is None:
        fields["dynamic_th"] = "0"
    else:
        fields["static_th"] = str(xoff_kb * 1024)
        name += f"_xoff{xoff_kb}K"
    return name + "_profile", fields


def render_config_db(state: SwitchState) -> ConfigDb:
    """A plausible config_db holding exactly `state`."""
    metadata: dict[str, str] = {
        "hostname": state.hostname,
        "hwsku": state.model,
        "type": "LeafRouter",
    }
    db: ConfigDb = {"DEVICE_METADATA": {"localhost": metadata}}
    ports: ConfigDb = {}
    interfaces: ConfigDb = {}
    qos: ConfigDb = {}
    queues: ConfigDb = {}
    wred: ConfigDb = {}
    pgs: ConfigDb = {}
    buffers: ConfigDb = {}
    for index, name in enumerate(sorted(state.interfaces, key=natural_key)):
        port = state.interfaces[name]
        ports[name] = {
            "admin_status": "up",
            "alias": f"etp{index + 1}",
            "index": str(index + 1),
            "speed": "100000",
            "mtu": str(port.mtu),
            "description": port.description,
        }
        if port.ipv4:
            interfaces[name] = {}
            interfaces[f"{name}|{port.ipv4}"] = {}
        port_qos: dict[str, str] = {}
        if port.pfc_priorities:
            port_qos["pfc_enable"] = ",".join(map(str, port.pfc_priorities))
        if state.dscp_to_tc:
            port_qos["dscp_to_tc_map"] = DSCP_MAP
        if port_qos:
            qos[name] = port_qos
        for queue, ecn in sorted(port.ecn.items()):
            profile = f"ECN_{ecn.kmin_kb}K_{ecn.kmax_kb}K_{ecn.pmax_percent}P"
            wred[profile] = {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(ecn.kmin_kb * 1024),
                "green_max_threshold": str(ecn.kmax_kb * 1024),
                "green_drop_probability": str(ecn.pmax_percent),
            }
            queues[f"{name}|{queue}"] = {"wred_profile": profile}
        if port.pfc_headroom_kb is not None or port.pfc_xoff_kb is not None:
            profile, fields = _buffer_profile(port.pfc_headroom_kb, port.pfc_xoff_kb)
            buffers[profile] = fields
            pgs[f"{name}|{_pg_range(port.pfc_priorities)}"] = {"profile": profile}
    if buffers:
        # traditional buffers with a shared headroom pool (the lossless size is xon)
        db["BUFFER_POOL"] = {
            "ingress_lossless_pool": {
                "mode": "dynamic",
                "size": "24219648",
                "type": "ingress",
                "xoff": "4399104",
            }
        }
        db["CABLE_LENGTH"] = {"AZURE": {name: "5m" for name in ports}}
    db.update(
        PORT=ports,
        INTERFACE=interfaces,
        PORT_QOS_MAP=qos,
        QUEUE=queues,
        WRED_PROFILE=wred,
        BUFFER_PG=pgs,
        BUFFER_PROFILE=buffers,
    )
    if state.dscp_to_tc:
        db["DSCP_TO_TC_MAP"] = {
            DSCP_MAP: {str(d): str(t) for d, t in sorted(state.dscp_to_tc.items())}
        }
    if state.bgp is not None:
        bgp = state.bgp
        metadata["bgp_asn"] = str(bgp.asn)
        db["BGP_GLOBALS"] = {"default": {"local_asn": str(bgp.asn)}}
        if bgp.router_id:
            db["BGP_GLOBALS"]["default"]["router_id"] = bgp.router_id
        db["BGP_GLOBALS_AF"] = {"default|ipv4_unicast": {"max_ebgp_paths": str(bgp.maximum_paths)}}
        db["BGP_NEIGHBOR"] = {
            ip: {"asn": str(n.remote_as), "name": f"peer-{ip}", "admin_status": "up"}
            for ip, n in sorted(bgp.neighbors.items())
        }
        db["BGP_NEIGHBOR_AF"] = {
            f"default|{ip}|ipv4_unicast": {"route_map_in": [n.route_map_in]}
            for ip, n in sorted(bgp.neighbors.items())
            if n.route_map_in
        }
    return {table: rows for table, rows in db.items() if rows}


def check_shape(db: Any) -> ConfigDb:
    """Validate the config_db shape: table -> key -> field -> string or list of strings."""
    if not isinstance(db, dict):
        raise ValueError("config_db must be a JSON object")
    for table, rows in db.items():
        if not isinstance(rows, dict):
            raise ValueError(f"table {table} must be an object")
        if not rows:
            raise ValueError(f"table {table} is empty, which is not allowed in ConfigDb")
        for key, fields in rows.items():
            if not isinstance(fields, dict):
                raise ValueError(f"{table}|{key} must be an object")
            for name, value in fields.items():
                ok = isinstance(value, str) or (
                    isinstance(value, list) and all(isinstance(v, str) for v in value)
                )
                if not ok:
                    raise ValueError(f"{table}|{key}|{name} must be a string or a list of strings")
    return db


def _int(text: Any, what: str) -> int:
    if not isinstance(text, str) or not text.strip().isdigit():
        raise ValueError(f"{what} must be a decimal string, not {text!r}")
    return int(text)


def project(db: ConfigDb, nos_version: str, boot_image: str, bgpcfgd: bool = False) -> SwitchState:
    """The `SwitchState` that config_db `db` describes; ValueError if any value is invalid.

    With `bgpcfgd` (SONiC's default routing config mode) BGP follows what
    bgpcfgd renders into FRR: the AS number from DEVICE_METADATA ``bgp_asn``,
    the router id from Loopback0's IPv4 address, ``maximum-paths 64`` from
    its template, and BGP_GLOBALS* ignored unless ``frr_mgmt_framework_config``
    is ``true``.  IPv6 interface addresses and peers are outside the model.
    """
    check_shape(db)

    def table(name: str) -> ConfigDb:
        rows: ConfigDb = db.get(name, {})
        return rows

    meta = table("DEVICE_METADATA").get("localhost", {})
    ports: dict[str, InterfaceState] = {}
    for name, fields in table("PORT").items():
        ports[name] = InterfaceState(
            mtu=check_mtu(_int(fields.get("mtu", "9100"), f"PORT|{name}|mtu")),
            description=fields.get("description", ""),
        )

    def port_of(key: str, what: str) -> tuple[InterfaceState, str]:
        name, _, rest = key.partition("|")
        if name not in ports:
            raise ValueError(f"{what}|{key}: port {name} is not in PORT")
        return ports[name], rest

    for key in sorted(table("INTERFACE")):
        if "|" in key:
            port, prefix = port_of(key, "INTERFACE")
            if ":" in prefix:
                ipaddress.IPv6Interface(prefix)
                continue
            port.ipv4 = port.ipv4 or check_ipv4_interface(prefix)
    for name, fields in table("PORT_QOS_MAP").items():
        if name != "global" and fields.get("pfc_enable"):
            port, _ = port_of(name, "PORT_QOS_MAP")
            values = {
                check_range("priority", _int(p, "pfc_enable"), 0, 7)
                for p in fields["pfc_enable"].split(",")
            }
            port.pfc_priorities = sorted(values)
    for key, fields in table("QUEUE").items():
        port, queues = port_of(key, "QUEUE")
        if "wred_profile" in fields:
            port.ecn.update({q: _wred(db, fields["wred_profile"], key) for q in _expand(queues)})
    for key, fields in table("BUFFER_PG").items():
        port, _ = port_of(key, "BUFFER_PG")
        if fields.get("profile", "NULL") == "NULL":
            continue
        profile = table("BUFFER_PROFILE").get(_ref(fields.get("profile", "")))
        if profile is None:
            raise ValueError(f"BUFFER_PG|{key}: profile {fields.get('profile')!r} does not exist")
        if "xoff" in profile:
            port.pfc_headroom_kb = check_range(
                "headroom", -(-_int(profile["xoff"], "xoff") // 1024), 1, 1_048_576
            )
        if "static_th" in profile:
            port.pfc_xoff_kb = check_range(
                "xoff-threshold", -(-_int(profile["static_th"], "static_th") // 1024), 1, 1_048_576
            )
    map_name = table("PORT_QOS_MAP").get("global", {}).get("dscp_to_tc_map", DSCP_MAP)
    dscp = {
        check_range("dscp", _int(d, "dscp"), 0, 63): check_range(
            "traffic-class", _int(t, "tc"), 0, 7
        )
        for d, t in table("DSCP_TO_TC_MAP").get(map_name, {}).items()
    }
    return SwitchState(
        hostname=check_hostname(meta.get("hostname", "sonic")),
        model=meta.get("hwsku", ""),
        nos_version=nos_version,
        boot_image=boot_image,
        interfaces=ports,
        dscp_to_tc=dscp,
        bgp=_bgpcfgd(db, meta)
        if bgpcfgd and meta.get("frr_mgmt_framework_config") != "true"
        else _bgp(db, meta),
    )


def _ref(name: str) -> str:
    """Profile references may be bare or in the older ``[TABLE|name]`` form."""
    return name.strip("[]").rsplit("|", 1)[-1]


def _expand(queues: str) -> list[int]:
    low, _, high = queues.partition("-")
    first = check_range("queue", _int(low, "queue"), 0, 7)
    last = check_range("queue", _int(high, "queue"), 0, 7) if high else first
    return list(range(first, last + 1))


def _wred(db: ConfigDb, reference: str, key: str) -> EcnQueue:
    profile = db.get("WRED_PROFILE", {}).get(_ref(reference))
    if profile is None:
        raise ValueError(f"QUEUE|{key}: WRED profile {reference!r} does not exist")
    kmin = -(-_int(profile.get("green_min_threshold"), "green_min_threshold") // 1024)
    kmax = -(-_int(profile.get("green_max_threshold"), "green_max_threshold") // 1024)
    return check_ecn(
        kmin, kmax, _int(profile.get("green_drop_probability", "100"), "green_drop_probability")
    )


def _bgp(db: ConfigDb, meta: dict[str, Any]) -> BgpState | None:
    globals_ = db.get("BGP_GLOBALS", {}).get("default", {})
    asn_text = globals_.get("local_asn", meta.get("bgp_asn"))
    neighbors: dict[str, BgpNeighbor] = {}
    for key, fields in db.get("BGP_NEIGHBOR", {}).items():
        vrf, _, address = key.rpartition("|")
        if vrf not in ("", "default") or ":" in address:
            continue
        neighbors[check_ipv4(address)] = BgpNeighbor(
            remote_as=check_asn(_int(fields.get("asn"), f"{key}|asn"))
        )
    for key, fields in db.get("BGP_NEIGHBOR_AF", {}).items():
        parts = key.split("|")
        if (
            len(parts) == 3
            and parts[0] == "default"
            and parts[2] == "ipv4_unicast"
            and parts[1] in neighbors
        ):
            maps = fields.get("route_map_in")
            first = maps[0] if isinstance(maps, list) and maps else maps
            neighbors[parts[1]].route_map_in = first or None
    if asn_text is None:
        if neighbors:
            raise ValueError("BGP neighbors are configured but no local AS number is")
        return None
    paths = db.get("BGP_GLOBALS_AF", {}).get("default|ipv4_unicast", {}).get("max_ebgp_paths", "1")
    router_id = globals_.get("router_id")
    return BgpState(
        asn=check_asn(_int(asn_text, "local_asn")),
        router_id=None if router_id is None else check_ipv4(router_id),
        maximum_paths=check_range("max_ebgp_paths", _int(paths, "max_ebgp_paths"), 1, 512),
        neighbors=neighbors,
    )


def loopback_ipv4(db: ConfigDb) -> str | None:
    """Loopback0's IPv4 address, which bgpcfgd makes the BGP router id."""
    for key in sorted(db.get("LOOPBACK_INTERFACE", {})):
        name, _, prefix = key.partition("|")
        if name == "Loopback0" and prefix and ":" not in prefix:
            return str(ipaddress.IPv4Interface(prefix).ip)
    return None


BGPCFGD_MAXIMUM_PATHS = 64


def _bgpcfgd(db: ConfigDb, meta: dict[str, Any]) -> BgpState | None:
    neighbors: dict[str, BgpNeighbor] = {}
    for address, fields in db.get("BGP_NEIGHBOR", {}).items():
        if ":" in address or "|" in address:
            continue
        neighbors[check_ipv4(address)] = BgpNeighbor(
            remote_as=check_asn(_int(fields.get("asn"), f"BGP_NEIGHBOR|{address}|asn"))
        )
    asn_text = meta.get("bgp_asn")
    if asn_text is None:
        return None
    return BgpState(
        asn=check_asn(_int(asn_text, "bgp_asn")),
        router_id=loopback_ipv4(db),
        maximum_paths=BGPCFGD_MAXIMUM_PATHS,
        neighbors=neighbors,
    )


def merge_namespaces(dbs: dict[str, ConfigDb]) -> ConfigDb:
    """One config_db holding every namespace's rows (the host's DEVICE_METADATA wins)."""
    merged: ConfigDb = {}
    for namespace in sorted(dbs, key=lambda n: (n != "localhost", n)):
        for table, rows in dbs[namespace].items():
            if not isinstance(rows, dict):
                continue
            target = merged.setdefault(table, {})
            for key, fields in rows.items():
                target.setdefault(key, fields)
    return merged
