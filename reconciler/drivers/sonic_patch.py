"""Validated changes -> the SONiC running configuration that holds them (pure), and
from it the JSON patches ``config apply-patch`` takes (:mod:`.sonic_jsonpatch`).

What ``config apply-patch`` accepts shapes every edit: its generic config updater
validates the whole resulting config_db and, for buffer and WRED tables, allows only a
few field replacements on known platforms (:mod:`.sonic_caps`). So plumb creates no
profiles of its own:

- ECN of queue ``q``: the ``green_{min,max}_threshold`` (bytes) and
  ``green_drop_probability`` of the ``WRED_PROFILE`` each active port's ``QUEUE|<p>|q``
  already references; yellow and red thresholds are left alone. A profile shared by
  queues that are meant to differ is refused.
- PFC headroom: the ``xoff`` of the ``BUFFER_PROFILE`` the lossless priority groups
  already reference (static buffer model only; lossy group 0 is never touched).
- Addresses: only the port's IPv4 ``INTERFACE`` key moves for ``address``, only its
  global IPv6 key for ``ipv6_address``; the other keys (link-local ones too) stay.
- BGP (:mod:`.sonic_bgp`): bgpcfgd mode writes ``DEVICE_METADATA|localhost``
  ``bgp_asn`` and ``BGP_NEIGHBOR|<ip>``; frrcfgd mode the ``BGP_GLOBALS*`` and
  ``BGP_NEIGHBOR*`` tables, an IPv6 peer activated in ``ipv6_unicast``
  (``BGP_NEIGHBOR_AF`` ``admin_status``) and an unnumbered one keyed by its port
  (``BGP_NEIGHBOR|default|Ethernet0``, FRR's ``neighbor Ethernet0 interface``), whose
  ``INTERFACE|Ethernet0`` row gets ``ipv6_use_link_local_only: enable`` (the session
  runs over the port's IPv6 link-local address). A peer whose AS changes is deleted
  and re-added (bgpcfgd never updates a live peer's AS), keeping the fields plumb does
  not own (``name``, ``local_addr``, ``holdtime``...): :func:`patch_steps` returns the
  removal and the re-add as two patches applied in turn.

Every change is first checked against :func:`.sonic_caps.sonic_inexpressible` with the
before-state (the plan refuses the same paths), then written in the namespace of the
port (or of the peer's connected interface) it belongs to.
"""

from __future__ import annotations

import copy
import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.drivers.safevalues import ECN_FIELDS, SafeValues, Setting
from reconciler.drivers.sonic_bgp import FRRCFGD, af_of, bgp_mode, is_address, peer_of
from reconciler.drivers.sonic_buffers import (
    SIZING,
    floor_of,
    parse_lookup,
    resized,
    shared_pool,
)
from reconciler.drivers.sonic_caps import sonic_inexpressible, vendor_of
from reconciler.drivers.sonic_jsonpatch import Patch, json_patch
from reconciler.drivers.sonic_parse import (
    active,
    buffer_model,
    dscp_map_name,
    front_ports,
    headroom_profiles,
    lossless_groups,
    port_key,
    port_row,
    port_speed_cable,
    profile_name,
    rows_of,
)
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

_NAMESPACE = re.compile(r"^(?:localhost|asic[0-9]+)$")
_PG_PROFILE = re.compile(r"^pg_lossless_([0-9]+)_([0-9]+m)_profile$")
GREEN = ("green_min_threshold", "green_max_threshold", "green_drop_probability")
Lookups = str | Mapping[str, str | None] | None


def views(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The namespaces of a running configuration, as live references into ``doc``."""
    if doc and "localhost" in doc and all(_NAMESPACE.match(k) for k in doc):
        return {name: db for name, db in doc.items()}
    return {"": doc}


class Editor:
    """Edits a copy of one device's running configuration from its before-state."""

    def __init__(
        self,
        device: str,
        data: Mapping[str, Any],
        before: Mapping[str, Scalar],
        lookups: Lookups = None,
    ) -> None:
        self.device = device
        self.lookups = {"": lookups} if isinstance(lookups, str) else dict(lookups or {})
        self.values = SafeValues(device)
        self.doc: dict[str, Any] = copy.deepcopy(dict(data))
        self.spaces = views(self.doc)
        self.before = before
        self.ports = front_ports(self.spaces)
        self.mode = bgp_mode(self.spaces)
        self.readd: dict[tuple[str, str], dict[str, Any]] = {}

    def refuse(self, path: str, why: str) -> ConfigRejected:
        return ConfigRejected(self.device, f"{path}: {why}")

    def _after(self, path: str, changed: Mapping[str, Setting]) -> int | str | None:
        if path in changed:
            return changed[path].value
        return self.values.setting(path, self.before.get(path)).value

    def _live(self) -> dict[str, str]:
        return {p: s for p, s in self.ports.items() if active(self.spaces[s], p)}

    def apply(self, settings: Sequence[Setting]) -> dict[str, Any]:
        for setting in settings:
            reason = sonic_inexpressible(setting.path, self.before)
            if reason is not None:
                raise self.refuse(setting.path, reason)
        changed = {s.path: s for s in settings}
        for setting in settings:
            self._one(setting)
        for queue in sorted({int(s.subject) for s in settings if s.kind.startswith("ecn_")}):
            self._ecn(queue, changed)
        if "qos/pfc_headroom_kb" in changed:
            self._headroom(changed["qos/pfc_headroom_kb"])
        for db in self.spaces.values():
            for name in [n for n, rows in db.items() if rows == {}]:
                del db[name]
        return self.doc

    def _port(self, s: Setting) -> dict[str, Any]:
        if s.subject not in self.ports:
            raise self.refuse(s.path, f"no front-panel port {s.subject} in PORT")
        return self.spaces[self.ports[s.subject]]

    def _one(self, s: Setting) -> None:
        if s.kind == "mtu":
            value = None if s.value is None else str(s.value)
            set_field(self._port(s), "PORT", s.subject, "mtu", value)
        elif s.kind in ("address", "ipv6_address"):
            self._address(s)
        elif s.kind == "pfc_priorities":
            db = self._port(s)
            shared = port_key(db, "PORT_QOS_MAP", s.subject)
            if shared not in (None, s.subject):
                raise self.refuse(
                    s.path,
                    f"{s.subject}'s PORT_QOS_MAP row is shared (key {shared}): orchagent "
                    "applies it to every port it lists, and plumb does not split a shared "
                    "row; give the port a row of its own first",
                )
            set_field(db, "PORT_QOS_MAP", s.subject, "pfc_enable", s.value or None)
            self._lossless_buffers(s, db)
        elif s.kind == "dscp":
            self._dscp(s)
        elif s.kind in ("asn", "router_id", "maximum_paths", "remote_as", "inbound_filter"):
            self._bgp(s)
        elif s.kind not in ("nos_version", "pfc_headroom_kb") and not s.kind.startswith("ecn_"):
            raise self.refuse(s.path, "not writable on SONiC")

    def _lossless_buffers(self, s: Setting, db: dict[str, Any]) -> None:
        """On the static buffer model a priority PFC pauses needs its priority group on a
        lossless profile (one with ``xoff`` headroom): pausing into a lossy buffer drops
        the frames in flight. plumb does not carve buffers, so such a change is refused;
        the dynamic model's buffer manager creates lossless groups itself."""
        if buffer_model(self.spaces) == "dynamic" or not active(db, s.subject):
            return
        groups = rows_of(db, "BUFFER_PG", s.subject)
        profiles = db.get("BUFFER_PROFILE", {})
        for group in lossless_groups(db, s.subject):
            name = profile_name(str(groups.get(group, {}).get("profile", "")))
            if "xoff" not in profiles.get(name, {}):
                raise self.refuse(
                    s.path,
                    f"PFC on {s.value} maps to priority group {group} of {s.subject}, which has "
                    "no lossless buffer profile (BUFFER_PG with xoff headroom); plumb does not "
                    "carve buffers: give the group a lossless profile first",
                )

    def _address(self, s: Setting) -> None:
        """Replace the port's IPv4 address (``address``) or its global IPv6 address
        (``ipv6_address``); its other addresses stay."""
        interfaces = self._port(s).setdefault("INTERFACE", {})
        keys = [k for k in interfaces if k.startswith(f"{s.subject}|")]
        for key in keys:
            prefix = key.partition("|")[2]
            ipv6 = ":" in prefix
            if ipv6 == (s.kind == "ipv6_address") and not prefix.lower().startswith("fe80:"):
                del interfaces[key]
        if s.value is not None:
            interfaces.setdefault(s.subject, {})
            interfaces[f"{s.subject}|{s.value}"] = {}
        elif interfaces.get(s.subject) == {} and not any(
            k.startswith(f"{s.subject}|") for k in interfaces
        ):
            del interfaces[s.subject]

    def _dscp(self, s: Setting) -> None:
        """Edit the DSCP_TO_TC_MAP the ports carrying QoS use (their QUEUE or BUFFER_PG
        rows say so), binding it only on such a port that names none. Where no port
        carries QoS, the switch's own map (the global one, else ``AZURE``) is edited if it
        exists, bound nowhere new; a switch with no DSCP map at all is refused: plumb edits
        the QoS the platform set up, it does not turn QoS on (that would bind a new map to
        every port, LAG members and ports without queues included)."""
        live = self._live()
        value = None if s.value is None else str(s.value)
        if not live:  # the switch's own map (global, else AZURE), as observe reads it
            host = next(iter(self.spaces))
            db = self.spaces[host]
            name = dscp_map_name(db)
            if name not in db.get("DSCP_TO_TC_MAP", {}):
                raise self.refuse(
                    s.path,
                    "no port carries QoS here (no QUEUE or BUFFER_PG rows) and there is no "
                    f"DSCP_TO_TC_MAP {name}: plumb edits the platform's QoS, it does not turn "
                    "it on; load it first (`config qos reload`), then run plumb again",
                )
            set_field(db, "DSCP_TO_TC_MAP", name, s.subject, value)
            return
        for port, space in live.items():
            db = self.spaces[space]
            name = dscp_map_name(db, port)
            if "dscp_to_tc_map" not in port_row(db, "PORT_QOS_MAP", port):
                set_field(db, "PORT_QOS_MAP", port, "dscp_to_tc_map", name)
            set_field(db, "DSCP_TO_TC_MAP", name, s.subject, value)

    def _ecn(self, queue: int, changed: Mapping[str, Setting]) -> None:
        path = f"qos/ecn/{queue}"
        want = [self._after(f"{path}/{f}", changed) for f in ECN_FIELDS]
        if not all(isinstance(v, int) for v in want):
            raise self.refuse(
                path,
                "kmin_kb, kmax_kb and pmax_percent are set together; SONiC keeps ECN "
                "in the queue's WRED profile, which plumb edits but never removes",
            )
        kmin, kmax, pmax = (int(v) for v in want if isinstance(v, int))
        if kmin > kmax:
            raise self.refuse(path, f"kmin_kb {kmin} > kmax_kb {kmax}")
        profiles = self._wred_profiles(queue, path)
        for (space, name), queues in profiles.items():
            for other in sorted(queues - {queue}):
                theirs = [self._after(f"qos/ecn/{other}/{f}", changed) for f in ECN_FIELDS]
                if theirs != want:
                    shown = "/".join(map(str, theirs))
                    meant = (
                        f"set by this plan to {shown} (Kmin KB/Kmax KB/Pmax %)"
                        if any(f"qos/ecn/{other}/{f}" in changed for f in ECN_FIELDS)
                        else f"which this plan leaves at {shown} (Kmin KB/Kmax KB/Pmax %)"
                    )
                    raise self.refuse(
                        path,
                        f"WRED profile {name} also serves queue {other}, {meant}: replacing "
                        f"its thresholds would move queue {other} too. plumb edits the "
                        f"profiles in use and creates none: give queue {other} the same ECN "
                        f"in qos.ecn, or bind queue {queue} to a WRED profile of its own "
                        f"(a copy of {name} named in QUEUE|<port>|{queue}) and run plumb again",
                    )
            fields = dict(zip(GREEN, (str(kmin * 1024), str(kmax * 1024), str(pmax)), strict=True))
            self.spaces[space]["WRED_PROFILE"][name].update(fields)

    def _wred_profiles(self, queue: int, path: str) -> dict[tuple[str, str], set[int]]:
        """The WRED profiles queue ``queue`` of the active ports uses -> every queue
        (of any port) that uses each of them."""
        found: dict[tuple[str, str], set[int]] = {}
        live = self._live()
        for port, space in live.items():
            reference = (
                rows_of(self.spaces[space], "QUEUE", port).get(queue, {}).get("wred_profile")
            )
            if reference is None:
                raise self.refuse(
                    path, f"queue {queue} of {port} has no WRED profile; plumb creates none"
                )
            found[(space, profile_name(str(reference)))] = set()
        for port, space in live.items():
            for number, row in rows_of(self.spaces[space], "QUEUE", port).items():
                key = (space, profile_name(str(row.get("wred_profile", ""))))
                if key in found:
                    found[key].add(number)
        if not found:
            raise self.refuse(path, "no active port (with QUEUE rows) to carry it")
        return found

    def _headroom(self, s: Setting) -> None:
        """Each lossless profile in use gets the headroom, sized by the platform's rule
        and never below what the platform computes for its ports' speeds and cables
        (:mod:`.sonic_buffers`)."""
        if s.value is None:
            raise self.refuse(s.path, "a lossless priority group always has headroom")
        users: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for port, space in self._live().items():
            db = self.spaces[space]
            if not lossless_groups(db, port):
                continue
            for name in headroom_profiles(db, port):
                if name is None:
                    raise self.refuse(s.path, f"a lossless priority group of {port} has no profile")
                users.setdefault((space, name), []).append(profile_speed_cable(name, db, port))
        if not users:
            raise self.refuse(s.path, "no port has lossless priority groups")
        vendor = vendor_of(self.before)
        if vendor not in SIZING:
            raise self.refuse(s.path, f"plumb knows no lossless profile sizing for {vendor}")
        xoff = int(s.value) * 1024
        for (space, name), pairs in sorted(users.items()):
            text = self.lookups.get(space, self.lookups.get(""))
            floor = floor_of(None if text is None else parse_lookup(text), sorted(set(pairs)))
            if isinstance(floor, str):
                raise self.refuse(s.path, f"{floor}: plumb cannot check {name} against it")
            if xoff < floor[0]:
                raise self.refuse(
                    s.path,
                    f"{s.value} KB is below the {-(-floor[0] // 1024)} KB of headroom the "
                    f"platform computes for {floor[1]} ({name})",
                )
            db = self.spaces[space]
            profile = db["BUFFER_PROFILE"][name]
            profile.update(resized(vendor, profile, xoff, shared_pool(db, profile)))

    # -- BGP ---------------------------------------------------------------------------

    def _bgp_spaces(self) -> list[str]:
        return [s for s in self.spaces if s != "localhost" or len(self.spaces) == 1]

    def _peer_space(self, peer: str, path: str) -> str:
        for space in self._bgp_spaces():
            for key in self.spaces[space].get("BGP_NEIGHBOR", {}):
                if peer_of(key)[1] == peer:
                    return space
        if not is_address(peer):  # unnumbered: the namespace of its port
            if peer not in self.ports:
                raise self.refuse(path, f"no front-panel port {peer} in PORT")
            return self.ports[peer]
        address = ipaddress.ip_address(peer)
        for space in self._bgp_spaces():
            for key in self.spaces[space].get("INTERFACE", {}):
                prefix = key.partition("|")[2]
                if prefix and address in ipaddress.ip_interface(prefix).network:
                    return space
        if len(self._bgp_spaces()) == 1:
            return self._bgp_spaces()[0]
        raise self.refuse(path, f"no interface of this switch reaches {peer}")

    def _bgp(self, s: Setting) -> None:
        running = self.values.setting("bgp/asn", self.before.get("bgp/asn")).value
        if s.kind == "asn":
            if running is not None and s.value is not None and s.value != running:
                raise self.refuse(s.path, f"BGP runs as AS {running}; not changed in place")
            for space in self._bgp_spaces():
                self._asn(self.spaces[space], s.value)
        elif s.kind == "remote_as":
            self._neighbor(s)
        elif s.kind == "inbound_filter":  # frrcfgd only (sonic_caps refuses it otherwise)
            db = self.spaces[self._peer_space(s.subject, s.path)]
            key = f"default|{s.subject}|{af_of(s.subject)}"
            set_field(db, "BGP_NEIGHBOR_AF", key, "route_map_in", [s.value] if s.value else None)
        else:  # router_id, maximum_paths: frrcfgd only
            db = self.spaces[self._bgp_spaces()[0]]
            value = None if s.value is None else str(s.value)
            if s.kind == "router_id":
                set_field(db, "BGP_GLOBALS", "default", "router_id", value)
            else:
                set_field(db, "BGP_GLOBALS_AF", "default|ipv4_unicast", "max_ebgp_paths", value)

    def _asn(self, db: dict[str, Any], asn: int | str | None) -> None:
        value = None if asn is None else str(asn)
        if asn is None:
            for name in ("BGP_GLOBALS", "BGP_GLOBALS_AF", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF"):
                db.pop(name, None)
        if self.mode == FRRCFGD:
            set_field(db, "BGP_GLOBALS", "default", "local_asn", value)
        else:
            set_field(db, "DEVICE_METADATA", "localhost", "bgp_asn", value)

    def _neighbor(self, s: Setting) -> None:
        space = self._peer_space(s.subject, s.path)
        peers = self.spaces[space].setdefault("BGP_NEIGHBOR", {})
        key = next((k for k in peers if peer_of(k)[1] == s.subject), None)
        if s.value is None:
            if key is not None:
                del peers[key]
            for family in ("ipv4_unicast", "ipv6_unicast"):
                self.spaces[space].get("BGP_NEIGHBOR_AF", {}).pop(
                    f"default|{s.subject}|{family}", None
                )
            return
        if key is not None:
            row = dict(peers[key]) | {"asn": str(s.value)}
            self.readd[(space, key)] = row
            peers[key] = row
            return
        key = f"default|{s.subject}" if self.mode == FRRCFGD else s.subject
        row = {"asn": str(s.value), "admin_status": "up"}
        local = self._local_address(space, s.subject) if is_address(s.subject) else None
        if local is not None and self.mode != FRRCFGD:
            row |= {"local_addr": local, "name": s.subject}
        peers[key] = row
        if not is_address(s.subject):  # unnumbered: the port needs its IPv6 link-local
            interfaces = self.spaces[space].setdefault("INTERFACE", {})
            interfaces.setdefault(s.subject, {}).setdefault("ipv6_use_link_local_only", "enable")
        if self.mode == FRRCFGD and af_of(s.subject) == "ipv6_unicast":
            # FRR activates only IPv4 unicast by default: an IPv6 peer is activated there
            set_field(
                self.spaces[space],
                "BGP_NEIGHBOR_AF",
                f"default|{s.subject}|ipv6_unicast",
                "admin_status",
                "up",
            )

    def _local_address(self, space: str, peer: str) -> str | None:
        address = ipaddress.ip_address(peer)
        for key in self.spaces[space].get("INTERFACE", {}):
            prefix = key.partition("|")[2]
            if prefix and address in ipaddress.ip_interface(prefix).network:
                return str(ipaddress.ip_interface(prefix).ip)
        return None


def profile_speed_cable(name: str, db: Mapping[str, Any], port: str) -> tuple[str, str]:
    """The speed and cable a lossless profile was made for: its name
    (``pg_lossless_<speed>_<cable>_profile``, as buffermgrd names it), else the port's."""
    found = _PG_PROFILE.match(name)
    return (found.group(1), found.group(2)) if found else port_speed_cable(db, port)


def set_field(db: dict[str, Any], name: str, key: str, field: str, value: Any) -> None:
    """Set (or with None remove) one field; drop the key once it is empty."""
    rows = db.setdefault(name, {})
    if value is None:
        rows.get(key, {}).pop(field, None)
        if key in rows and not rows[key]:
            del rows[key]
    else:
        rows.setdefault(key, {})[field] = value


def patch_steps(
    device: str,
    data: Mapping[str, Any],
    before: Mapping[str, Scalar],
    settings: Sequence[Setting],
    lookups: Lookups = None,
) -> list[Patch]:
    """The patches taking the running configuration ``data`` to one that holds
    ``settings``: one, or two when a peer is deleted and re-added (empty ones dropped).
    ``lookups`` is the HwSKU's ``pg_profile_lookup.ini`` (per namespace on a multi-ASIC
    switch, ``""`` for one table for all), for a headroom write."""
    editor = Editor(device, data, before, lookups)
    after = editor.apply(settings)
    if not editor.readd:
        return [p for p in [json_patch(data, after)] if p]
    middle = copy.deepcopy(after)
    spaces = views(middle)
    for space, key in editor.readd:
        spaces[space]["BGP_NEIGHBOR"].pop(key)
    return [p for p in (json_patch(data, middle), json_patch(middle, after)) if p]


def edit_running(
    device: str, data: Mapping[str, Any], before: Mapping[str, Scalar], settings: Sequence[Setting]
) -> dict[str, Any]:
    """The running configuration that holds ``before`` plus ``settings``."""
    return Editor(device, data, before).apply(settings)
