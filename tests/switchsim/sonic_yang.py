"""YANG-like validation of a whole config_db, for the tables the simulator models.

SONiC's generic config updater loads the patched config into libyang with the
sonic-* YANG models and refuses it if any leaf breaks its type, range or
pattern, or any leafref points nowhere.  This module checks the same
constraints for the tables in use (sonic-port, sonic-interface,
sonic-loopback-interface, sonic-device_metadata, sonic-bgp-neighbor,
sonic-port-qos-map, sonic-queue, sonic-buffer-pg/profile/pool,
sonic-wred-profile, sonic-dscp-tc-map ...) and words failures as libyang
does: ``Value "X" does not satisfy the constraint "R" (range, length, or
pattern)`` and ``Leafref "P" of value "X" points to a non-existing leaf``.
Tables without a model here pass unchecked.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

ConfigDb = dict[str, Any]


class YangError(ValueError):
    """The config breaks a YANG constraint; the message is libyang's wording."""


def _where(table: str, key: str, field: str) -> str:
    module = "sonic-" + table.lower().replace("_", "-")
    return f"/{module}:{module}/{table}/{table}_LIST[name='{key}']/{field}"


def _constraint(value: str, rule: str, table: str, key: str, field: str) -> YangError:
    return YangError(
        f'Value "{value}" does not satisfy the constraint "{rule}" (range, length, or pattern).'
        f" (path {_where(table, key, field)})"
    )


def _leafref(target: str, value: str) -> YangError:
    return YangError(f'Leafref "{target}" of value "{value}" points to a non-existing leaf.')


def _uint(value: Any, low: int, high: int, where: tuple[str, str, str]) -> int:
    text = str(value)
    if not re.fullmatch(r"-?\d+", text) or not low <= int(text) <= high:
        raise _constraint(text, f"{low}..{high}", *where)
    return int(text)


def _enum(value: Any, allowed: tuple[str, ...], where: tuple[str, str, str]) -> None:
    if value not in allowed:
        raise YangError(f'Invalid value "{value}" in "{where[2]}" element. (path {_where(*where)})')


def _index_range(text: str, where: tuple[str, str, str], high: int = 7) -> None:
    if not re.fullmatch(r"\d+(-\d+)?", text):
        raise _constraint(text, r"(\d+)|(\d+-\d+)", *where)
    low, _, top = text.partition("-")
    if int(low) > high or (top and not int(low) <= int(top) <= high):
        raise _constraint(text, f"0..{high}", *where)


def _ref(value: str) -> str:
    return value.strip("[]").rsplit("|", 1)[-1]


def _check_port(db: ConfigDb) -> None:
    for name, row in db.get("PORT", {}).items():
        if "lanes" not in row:
            where = _where("PORT", name, "lanes")
            raise YangError(f'Missing required element "lanes" in "PORT_LIST". (path {where})')
        for lane in str(row["lanes"]).split(","):
            _uint(lane.strip(), 0, 65535, ("PORT", name, "lanes"))
        if "mtu" in row:
            _uint(row["mtu"], 68, 9216, ("PORT", name, "mtu"))
        if "speed" in row:
            _uint(row["speed"], 1, 800000, ("PORT", name, "speed"))
        if "admin_status" in row:
            _enum(row["admin_status"], ("up", "down"), ("PORT", name, "admin_status"))
        if "fec" in row:
            _enum(row["fec"], ("rs", "fc", "none", "auto"), ("PORT", name, "fec"))
        if len(row.get("description", "")) > 255:
            raise _constraint(row["description"][:20], "0..255", "PORT", name, "description")


def _check_interfaces(db: ConfigDb, table: str, owners: set[str]) -> None:
    for key, row in db.get(table, {}).items():
        name, _, prefix = key.partition("|")
        if name not in owners:
            raise _leafref("/sonic-port:sonic-port/PORT/PORT_LIST/name", name)
        if "ipv6_use_link_local_only" in row:
            where = (table, key, "ipv6_use_link_local_only")
            _enum(row["ipv6_use_link_local_only"], ("enable", "disable"), where)
        if prefix:
            try:
                ipaddress.ip_interface(prefix)
            except ValueError:
                raise _constraint(prefix, "ip-prefix", table, key, "ip-prefix") from None
            if f"{name}" not in db[table]:
                raise YangError(
                    f"{table}|{key}: the interface has no {table}|{name} row for its address"
                )


def _check_metadata(db: ConfigDb) -> None:
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    where = ("DEVICE_METADATA", "localhost")
    if "bgp_asn" in meta:
        _uint(meta["bgp_asn"], 1, 4294967295, (*where, "bgp_asn"))
    if "buffer_model" in meta:
        _enum(meta["buffer_model"], ("traditional", "dynamic"), (*where, "buffer_model"))
    if "docker_routing_config_mode" in meta:
        _enum(
            meta["docker_routing_config_mode"],
            ("separated", "unified", "split", "split-unified"),
            (*where, "docker_routing_config_mode"),
        )
    if "hostname" in meta and not re.fullmatch(
        r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}", meta["hostname"]
    ):
        raise _constraint(meta["hostname"], "1..63", *where, "hostname")


def _check_bgp(db: ConfigDb) -> None:
    """sonic-bgp-neighbor: a ``<ip>`` key (the bgpcfgd list) is an address; a
    ``<vrf>|<neighbor>`` key (the frrcfgd list) an address or an existing port, VLAN or
    PortChannel (BGP unnumbered), with ``asn`` or ``peer_type``."""
    interfaces = {*db.get("PORT", {}), *db.get("VLAN", {}), *db.get("PORTCHANNEL", {})}
    for address, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, _, peer = address.rpartition("|")
        where = ("BGP_NEIGHBOR", address)
        try:
            ipaddress.ip_address(peer)
        except ValueError:
            if not vrf or peer not in interfaces:
                raise _constraint(peer, "ip-address", *where, "neighbor") from None
        if "peer_type" in row:
            _enum(row["peer_type"], ("internal", "external"), (*where, "peer_type"))
        elif "asn" not in row:
            raise YangError(f'Missing required element "asn" (path {_where(*where, "asn")})')
        if "asn" in row:
            _uint(row["asn"], 1, 4294967295, (*where, "asn"))
        if "local_addr" in row:
            try:
                ipaddress.ip_address(row["local_addr"])
            except ValueError:
                raise _constraint(row["local_addr"], "ip-address", *where, "local_addr") from None
        if "admin_status" in row:
            _enum(row["admin_status"], ("up", "down"), (*where, "admin_status"))
        for flag in ("nhopself", "rrclient"):
            if flag in row:
                _enum(row[flag], ("0", "1"), (*where, flag))
        for timer in ("holdtime", "keepalive"):
            if timer in row:
                _uint(row[timer], 0, 65535, (*where, timer))


_QOS_MAPS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
}


def _check_qos(db: ConfigDb, ports: set[str]) -> None:
    for name, row in db.get("PORT_QOS_MAP", {}).items():
        if name != "global" and name not in ports:
            raise _leafref("/sonic-port:sonic-port/PORT/PORT_LIST/name", name)
        for field, table in _QOS_MAPS.items():
            if field in row and _ref(row[field]) not in db.get(table, {}):
                raise _leafref(f"/sonic-{table.lower()}:{table}/{table}_LIST/name", row[field])
        for item in str(row.get("pfc_enable", "")).split(","):
            if item:
                _uint(item, 0, 7, ("PORT_QOS_MAP", name, "pfc_enable"))
    for name, mapping in db.get("DSCP_TO_TC_MAP", {}).items():
        for dscp, tc in mapping.items():
            _uint(dscp, 0, 63, ("DSCP_TO_TC_MAP", name, "dscp"))
            _uint(tc, 0, 15, ("DSCP_TO_TC_MAP", name, "tc"))
    for key, row in db.get("QUEUE", {}).items():
        port, _, queues = key.partition("|")
        if port not in ports:
            raise _leafref("/sonic-port:sonic-port/PORT/PORT_LIST/name", port)
        _index_range(queues, ("QUEUE", key, "qindex"), high=15)
        if "wred_profile" in row and _ref(row["wred_profile"]) not in db.get("WRED_PROFILE", {}):
            raise _leafref(
                "/sonic-wred-profile:sonic-wred-profile/WRED_PROFILE/WRED_PROFILE_LIST/name",
                row["wred_profile"],
            )
        if "scheduler" in row and _ref(row["scheduler"]) not in db.get("SCHEDULER", {}):
            raise _leafref(
                "/sonic-scheduler:sonic-scheduler/SCHEDULER/SCHEDULER_LIST/name", row["scheduler"]
            )
    for name, row in db.get("WRED_PROFILE", {}).items():
        for colour in ("green", "yellow", "red"):
            low = row.get(f"{colour}_min_threshold")
            high = row.get(f"{colour}_max_threshold")
            where = ("WRED_PROFILE", name)
            if (
                low is not None
                and high is not None
                and _uint(low, 0, 2**64 - 1, (*where, f"{colour}_min_threshold"))
                > _uint(high, 0, 2**64 - 1, (*where, f"{colour}_max_threshold"))
            ):
                raise YangError(
                    f'Must condition "{colour}_min_threshold <= {colour}_max_threshold"'
                    f" not satisfied. (path {_where(*where, f'{colour}_min_threshold')})"
                )
            if f"{colour}_drop_probability" in row:
                _uint(
                    row[f"{colour}_drop_probability"],
                    0,
                    100,
                    (*where, f"{colour}_drop_probability"),
                )
            if f"wred_{colour}_enable" in row:
                _enum(
                    row[f"wred_{colour}_enable"],
                    ("true", "false"),
                    (*where, f"wred_{colour}_enable"),
                )
        if "ecn" in row:
            _enum(
                row["ecn"],
                (
                    "ecn_none",
                    "ecn_green",
                    "ecn_yellow",
                    "ecn_red",
                    "ecn_green_yellow",
                    "ecn_green_red",
                    "ecn_yellow_red",
                    "ecn_all",
                ),
                ("WRED_PROFILE", name, "ecn"),
            )


def pool_types(release: str) -> tuple[str, ...]:
    """sonic-buffer-pool.yang ``type``: a pool shared by both directions (``both``, as
    Jericho2 line cards have) from 202405."""
    both = release == "master" or release >= "202405"
    return ("ingress", "egress", "both") if both else ("ingress", "egress")


def _check_buffers(db: ConfigDb, ports: set[str], dynamic: bool, release: str) -> None:
    pools = db.get("BUFFER_POOL", {})
    for name, row in pools.items():
        _enum(row.get("type"), pool_types(release), ("BUFFER_POOL", name, "type"))
        _enum(row.get("mode"), ("static", "dynamic"), ("BUFFER_POOL", name, "mode"))
        for field in ("size", "xoff"):
            if field in row:
                _uint(row[field], 0, 2**64 - 1, ("BUFFER_POOL", name, field))
    profiles = db.get("BUFFER_PROFILE", {})
    for name, row in profiles.items():
        where = ("BUFFER_PROFILE", name)
        if _ref(row.get("pool", "")) not in pools:
            raise _leafref(
                "/sonic-buffer-pool:sonic-buffer-pool/BUFFER_POOL/BUFFER_POOL_LIST/name",
                row.get("pool", ""),
            )
        if "size" not in row:
            raise YangError(f'Missing required element "size" (path {_where(*where, "size")})')
        for field in ("size", "xon", "xoff", "xon_offset", "static_th"):
            if field in row:
                _uint(row[field], 0, 2**64 - 1, (*where, field))
        if "dynamic_th" in row:
            _uint(row["dynamic_th"], -8, 8, (*where, "dynamic_th"))
        if ("dynamic_th" in row) == ("static_th" in row):
            raise YangError(
                f"BUFFER_PROFILE|{name}: exactly one of dynamic_th and static_th is required"
                f" (path {_where(*where, 'dynamic_th')})"
            )
    for key, row in db.get("BUFFER_PG", {}).items():
        port, _, pgs = key.partition("|")
        if port not in ports:
            raise _leafref("/sonic-port:sonic-port/PORT/PORT_LIST/name", port)
        _index_range(pgs, ("BUFFER_PG", key, "pg_num"))
        profile = row.get("profile")
        if profile == "NULL" and dynamic:
            continue
        if profile is None or _ref(profile) not in profiles:
            raise _leafref(
                "/sonic-buffer-profile:sonic-buffer-profile/BUFFER_PROFILE/BUFFER_PROFILE_LIST/name",
                str(profile),
            )


def validate_config(db: ConfigDb, release: str = "master") -> None:
    """Raise `YangError` for the first constraint `db` breaks (the models of `release`)."""
    ports = set(db.get("PORT", {}))
    loopbacks = {
        key.split("|")[0]
        for key in db.get("LOOPBACK_INTERFACE", {})
        if re.fullmatch(r"Loopback\d+", key.split("|")[0])
    }
    checks: list[Callable[[], None]] = [
        lambda: _check_port(db),
        lambda: _check_interfaces(db, "INTERFACE", ports),
        lambda: _check_interfaces(db, "LOOPBACK_INTERFACE", loopbacks),
        lambda: _check_metadata(db),
        lambda: _check_bgp(db),
        lambda: _check_qos(db, ports),
        lambda: _check_buffers(
            db,
            ports,
            db.get("DEVICE_METADATA", {}).get("localhost", {}).get("buffer_model") == "dynamic",
            release,
        ),
    ]
    for check in checks:
        check()
