"""Validated changes -> an RFC 6902 JSON patch of SONiC's config_db (pure).

:func:`edit_config_db` writes the changes into a copy of the running config_db (read
just before), :func:`json_patch` turns the difference into ``add`` / ``replace`` /
``remove`` operations at table, key or field level, and :func:`apply_json_patch`
applies such a patch locally so compare can parse what the candidate would hold.

Fleet-wide QoS uses shared profiles plumb owns: ``WRED_PROFILE|PLUMB_ECN_Q<q>`` for
every port's queue ``q`` and ``BUFFER_PROFILE|PLUMB_PG_LOSSLESS`` for every port's
lossless priority groups (existing ``BUFFER_PG`` keys, else the port's PFC
priorities), so one change moves all ports together. A table left empty is removed,
as config_db holds no empty tables.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.drivers.eos_parse import is_ethernet
from reconciler.drivers.safevalues import ECN_FIELDS, SafeValues, Setting
from reconciler.drivers.sonic_parse import ConfigDb, dscp_map_name, profile_name, table
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

ECN_PROFILE = "PLUMB_ECN_Q{queue}"
PG_PROFILE = "PLUMB_PG_LOSSLESS"
DEFAULT_XON = "18432"


def pointer(*tokens: str) -> str:
    """An RFC 6901 JSON pointer (``~`` and ``/`` escaped)."""
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


class Editor:
    """Edits one device's config_db copy from its before-state and the changes."""

    def __init__(self, device: str, db: Mapping[str, Any], before: Mapping[str, Scalar]) -> None:
        self.device = device
        self.values = SafeValues(device)
        self.db: ConfigDb = copy.deepcopy(dict(db))
        self.before = before
        self.ports = [p for p in table(db, "PORT") if is_ethernet(p)]

    def row(self, name: str, key: str) -> dict[str, Any]:
        rows: dict[str, Any] = self.db.setdefault(name, {})
        found: dict[str, Any] = rows.setdefault(key, {})
        return found

    def _after(self, path: str, changed: Mapping[str, Setting]) -> int | str | None:
        if path in changed:
            return changed[path].value
        return self.values.setting(path, self.before.get(path)).value

    def apply(self, settings: Sequence[Setting]) -> ConfigDb:
        changed = {s.path: s for s in settings}
        for setting in settings:
            self._one(setting)
        queues = sorted({int(s.subject) for s in settings if s.kind.startswith("ecn_")})
        for queue in queues:
            self._ecn(queue, changed)
        if {"qos/pfc_headroom_kb", "qos/pfc_xoff_kb"} & set(changed):
            self._buffers(changed)
        return {name: rows for name, rows in self.db.items() if rows}

    def _port(self, setting: Setting) -> str:
        if setting.subject not in self.ports:
            raise ConfigRejected(self.device, f"{setting.path}: no port {setting.subject} in PORT")
        return setting.subject

    def _one(self, s: Setting) -> None:
        value = s.value
        if s.kind == "mtu":
            self._field("PORT", self._port(s), "mtu", None if value is None else str(value))
        elif s.kind == "address":
            port = self._port(s)
            interfaces = self.db.setdefault("INTERFACE", {})
            for key in [k for k in interfaces if k.startswith(f"{port}|")]:
                del interfaces[key]
            if value is None:
                if interfaces.get(port) == {}:
                    del interfaces[port]
            else:
                interfaces.setdefault(port, {})
                interfaces[f"{port}|{value}"] = {}
        elif s.kind == "pfc_priorities":
            self._field("PORT_QOS_MAP", self._port(s), "pfc_enable", value or None)
        elif s.kind == "dscp":
            self._dscp(s)
        elif s.kind in ("asn", "router_id", "maximum_paths", "remote_as", "inbound_filter"):
            self._bgp(s)

    def _field(self, name: str, key: str, field: str, value: Any) -> None:
        """Set (or with None remove) one field; drop the key once it is empty."""
        rows = self.db.setdefault(name, {})
        if value is None:
            rows.get(key, {}).pop(field, None)
            if key in rows and not rows[key]:
                del rows[key]
        else:
            rows.setdefault(key, {})[field] = value

    def _dscp(self, s: Setting) -> None:
        name = dscp_map_name(self.db)
        created = name not in table(self.db, "DSCP_TO_TC_MAP")
        self._field("DSCP_TO_TC_MAP", name, s.subject, None if s.value is None else str(s.value))
        if created:
            for port in self.ports:
                self._field("PORT_QOS_MAP", port, "dscp_to_tc_map", name)

    def _ecn(self, queue: int, changed: Mapping[str, Setting]) -> None:
        kmin, kmax, pmax = (self._after(f"qos/ecn/{queue}/{f}", changed) for f in ECN_FIELDS)
        name = ECN_PROFILE.format(queue=queue)
        if kmin is None and kmax is None and pmax is None:
            for port in self.ports:
                self._field("QUEUE", f"{port}|{queue}", "wred_profile", None)
            return
        if not (isinstance(kmin, int) and isinstance(kmax, int) and isinstance(pmax, int)):
            raise ConfigRejected(
                self.device, f"qos/ecn/{queue}: kmin_kb, kmax_kb and pmax_percent are set together"
            )
        if kmin > kmax:
            raise ConfigRejected(self.device, f"qos/ecn/{queue}: kmin_kb {kmin} > kmax_kb")
        self.db.setdefault("WRED_PROFILE", {})[name] = {
            "ecn": "ecn_all",
            "wred_green_enable": "true",
            "green_min_threshold": str(kmin * 1024),
            "green_max_threshold": str(kmax * 1024),
            "green_drop_probability": str(pmax),
        }
        for port in self.ports:
            self._field("QUEUE", f"{port}|{queue}", "wred_profile", name)

    def _buffers(self, changed: Mapping[str, Setting]) -> None:
        headroom = self._after("qos/pfc_headroom_kb", changed)
        xoff = self._after("qos/pfc_xoff_kb", changed)
        groups = table(self.db, "BUFFER_PG")
        if headroom is None and xoff is None:
            for key in [k for k in groups if k.partition("|")[0] in self.ports]:
                del groups[key]
            return
        old = table(self.db, "BUFFER_PROFILE")
        xon = DEFAULT_XON
        for fields in groups.values():
            previous = old.get(profile_name(str(fields.get("profile", ""))), {})
            xon = str(previous.get("xon", xon))
        profile = {"pool": "ingress_lossless_pool", "xon": xon, "size": xon}
        if headroom is not None:
            profile["xoff"] = str(int(headroom) * 1024)
        if xoff is None:
            profile["dynamic_th"] = "0"
        else:
            profile["static_th"] = str(int(xoff) * 1024)
        self.db.setdefault("BUFFER_PROFILE", {})[PG_PROFILE] = profile
        for port in self.ports:
            keys = [k for k in groups if k.partition("|")[0] == port]
            for key in keys or [f"{port}|{self._lossless_groups(port, changed)}"]:
                self.row("BUFFER_PG", key)["profile"] = PG_PROFILE

    def _lossless_groups(self, port: str, changed: Mapping[str, Setting]) -> str:
        """A port's lossless priority groups: its PFC priorities (3 when it has none)."""
        path = f"interfaces/{port}/pfc_priorities"
        wanted = self.values.priorities(self._after(path, changed) or "3", path)
        low, high = min(wanted), max(wanted)
        return str(low) if low == high else f"{low}-{high}"

    def _bgp(self, s: Setting) -> None:
        running = self.values.setting("bgp/asn", self.before.get("bgp/asn")).value
        if s.kind == "asn" and s.value is None:
            for name in ("BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF"):
                self.db.pop(name, None)
            self._field("DEVICE_METADATA", "localhost", "bgp_asn", None)
        elif s.kind == "asn":
            if running is not None and s.value != running:
                raise ConfigRejected(
                    self.device,
                    f"bgp/asn: BGP runs as AS {running}; the AS is not changed in place",
                )
            self._field("BGP_GLOBALS", "default", "local_asn", str(s.value))
            self._field("DEVICE_METADATA", "localhost", "bgp_asn", str(s.value))
        elif s.kind == "router_id":
            self._field("BGP_GLOBALS", "default", "router_id", s.value)
        elif s.kind == "maximum_paths":
            paths = None if s.value is None else str(s.value)
            self._field("BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", paths)
        elif s.kind == "remote_as":
            peers = table(self.db, "BGP_NEIGHBOR")
            key = f"default|{s.subject}" if f"default|{s.subject}" in peers else s.subject
            if s.value is None:
                peers.pop(key, None)
                table(self.db, "BGP_NEIGHBOR_AF").pop(f"default|{s.subject}|ipv4_unicast", None)
            else:
                self.row("BGP_NEIGHBOR", key).update(asn=str(s.value), admin_status="up")
        elif s.kind == "inbound_filter":
            af = f"default|{s.subject}|ipv4_unicast"
            self._field("BGP_NEIGHBOR_AF", af, "route_map_in", [s.value] if s.value else None)


def edit_config_db(
    device: str, db: Mapping[str, Any], before: Mapping[str, Scalar], settings: Sequence[Setting]
) -> ConfigDb:
    """The config_db that holds ``before`` plus ``settings`` (NOS versions excluded)."""
    return Editor(device, db, before).apply([s for s in settings if s.kind != "nos_version"])


def json_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """add/replace/remove operations taking ``old`` to ``new`` (table/key/field level)."""
    ops: list[dict[str, Any]] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            ops.append({"op": "remove", "path": pointer(name)})
        elif name not in old:
            ops.append({"op": "add", "path": pointer(name), "value": new[name]})
        else:
            for key in sorted(set(old[name]) | set(new[name])):
                was, now = old[name].get(key), new[name].get(key)
                if now is None:
                    ops.append({"op": "remove", "path": pointer(name, key)})
                elif was is None:
                    ops.append({"op": "add", "path": pointer(name, key), "value": now})
                else:
                    for field in sorted(set(was) | set(now)):
                        path = pointer(name, key, field)
                        if field not in now:
                            ops.append({"op": "remove", "path": path})
                        elif field not in was:
                            ops.append({"op": "add", "path": path, "value": now[field]})
                        elif was[field] != now[field]:
                            ops.append({"op": "replace", "path": path, "value": now[field]})
    return ops


def apply_json_patch(db: Mapping[str, Any], patch: Sequence[Mapping[str, Any]]) -> ConfigDb:
    """``db`` with add/replace/remove operations on object members applied."""
    result: ConfigDb = copy.deepcopy(dict(db))
    for op in patch:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        parent: Any = result
        for token in tokens[:-1]:
            parent = parent[token]
        if op["op"] == "remove":
            del parent[tokens[-1]]
        elif op["op"] in ("add", "replace"):
            if op["op"] == "replace" and tokens[-1] not in parent:
                raise KeyError(op["path"])
            parent[tokens[-1]] = copy.deepcopy(op["value"])
        else:
            raise ValueError(f"unsupported patch operation {op['op']!r}")
    return result
