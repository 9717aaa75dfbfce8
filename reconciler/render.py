"""Render (pure): a loaded fleet -> the desired settings of every device, each value
with its owner (the intent file and line it came from).

Setting paths (one flat namespace for desired, observed and before-state):

=================================================  ==========================================
switch                                             host (GPU node)
=================================================  ==========================================
``system/nos_version``                             ``firmware/<component>`` (bundle pins)
``interfaces/<port>/mtu``                          ``nics/<nic>/mtu``
``interfaces/<port>/address`` (/31)                ``nics/<nic>/address`` (/31)
``interfaces/<port>/ipv6_address`` (/127)
``interfaces/<port>/pfc_priorities`` ("3" / "")    ``nics/<nic>/pfc_priorities``
``qos/dscp/<dscp>`` -> priority                    ``nics/<nic>/rdma_mtu``
``qos/ecn/<prio>/{kmin_kb,kmax_kb,pmax_percent}``  ``qos/dscp/<dscp>`` -> priority
``qos/pfc_xoff_kb``, ``qos/pfc_headroom_kb``
``bgp/{asn,router_id,maximum_paths}``
``bgp/neighbors/<neighbor>/{remote_as,inbound_filter}``
=================================================  ==========================================

A BGP neighbour is keyed as the switch configures it (its ``bgp.peering``): the peer's
/31 address (``ipv4``), the peer's /127 address (``ipv6``, compressed as the NOSes print
it: ``fc00::1``), or the switch's own port (``unnumbered``: ``bgp/neighbors/Ethernet1/...``).
A switch peering ``ipv6`` or ``unnumbered`` also renders the other keys of each session
as absent (``None``, owned by its ``bgp.peering`` line), so moving a fleet off numbered
IPv4 removes the neighbours it replaces.
"""

from __future__ import annotations

import functools
from ipaddress import IPv6Address
from typing import Any

from intent.facts import AddressColumn, AddressPlan
from intent.fleet import Fleet
from intent.resolve import DeviceIntent, Sourced
from intent.sessions import peering_of
from inventory.gcpause import gc_paused
from inventory.ipv4 import interface_text, ipv4_text
from inventory.models import BGP_ROLES, Device, LinkClass, Role
from inventory.problems import UNKNOWN, Location
from reconciler.settings import Owned, Scalar

DesiredFleet = dict[str, dict[str, Owned]]


def _owner(value: Sourced[Any] | None) -> Location:
    return value.origin if value is not None else UNKNOWN


def _put(out: dict[str, Owned], path: str, value: Sourced[Any] | None, convert: Any = None) -> None:
    """Render one intent value (skipped when intent does not set it)."""
    if value is None or value.value is None:
        return
    scalar: Scalar = convert(value.value) if convert is not None else value.value
    out[path] = Owned(scalar, value.origin)


class _PortValues:
    """One device's per-port values by link class, each rendered once per device: every
    port of a class carries the same MTU and PFC values with the same owner."""

    def __init__(self, intent: DeviceIntent, layers: tuple[str, ...]) -> None:
        self.intent = intent
        self.layers = layers
        self._by_class: dict[LinkClass, tuple[tuple[Owned | None, ...], Owned]] = {}

    def of(self, link_class: LinkClass) -> tuple[tuple[Owned | None, ...], Owned]:
        """(the MTU layers' values, None where intent sets none; the PFC priorities)."""
        found = self._by_class.get(link_class)
        if found is None:
            intent = self.intent
            layers = tuple(
                _owned(intent.get("mtu", link_class.value, layer)) for layer in self.layers
            )
            found = self._by_class[link_class] = (layers, _pfc(intent, link_class))
        return found


def _owned(value: Sourced[Any] | None) -> Owned | None:
    if value is None or value.value is None:
        return None
    return Owned(value.value, value.origin)


def _pfc(intent: DeviceIntent, link_class: LinkClass) -> Owned:
    classes = intent.get("qos", "lossless_link_classes")
    pfc = intent.get("qos", "pfc_priorities")
    lossless = classes is not None and classes.value is not None and link_class in classes.value
    if lossless and pfc is not None and pfc.value is not None:
        return Owned(",".join(str(p) for p in sorted(pfc.value)), pfc.origin)
    return Owned("", _owner(classes))


def _qos_common(out: dict[str, Owned], intent: DeviceIntent) -> None:
    dscp_map = intent.get("qos", "dscp_map")
    if dscp_map is not None and dscp_map.value is not None:
        for index, entry in enumerate(dscp_map.value):
            out[f"qos/dscp/{entry.dscp}"] = Owned(entry.priority, _entry_owner(dscp_map, index))


def _entry_owner(value: Sourced[Any], index: int) -> Location:
    """Where one entry of a list value sits (its own line), else the list's."""
    return value.items[index] if index < len(value.items) else value.origin


def firmware_bundle(fleet: Fleet, intent: DeviceIntent) -> tuple[dict[str, str], Location] | None:
    """The components of the bundle a device's intent names, and where it is named."""
    chosen = intent.get("firmware", "bundle")
    if chosen is None or chosen.value is None or chosen.value not in fleet.bundles:
        return None
    return dict(fleet.bundles[chosen.value].components), chosen.origin


def render_switch(fleet: Fleet, device: Device) -> dict[str, Owned]:
    intent = fleet.intent[device.name]
    out: dict[str, Owned] = {}
    bundle = firmware_bundle(fleet, intent)
    if bundle is not None and "nos" in bundle[0]:
        out["system/nos_version"] = Owned(bundle[0]["nos"], bundle[1])
    _render_ports(fleet, device.name, "interfaces", _PortValues(intent, ("switch_port",)), out)
    _qos_common(out, intent)
    ecn = intent.get("qos", "ecn")
    if ecn is not None and ecn.value is not None:
        for index, queue in enumerate(ecn.value):
            owner = _entry_owner(ecn, index)
            for name in ("kmin_kb", "kmax_kb", "pmax_percent"):
                out[f"qos/ecn/{queue.priority}/{name}"] = Owned(getattr(queue, name), owner)
    _put(out, "qos/pfc_xoff_kb", intent.get("qos", "pfc_xoff_kb"))
    _put(out, "qos/pfc_headroom_kb", intent.get("qos", "pfc_headroom_kb"))
    if device.role in BGP_ROLES:
        _render_bgp(fleet, device, intent, out)
    return out


def _render_bgp(fleet: Fleet, device: Device, intent: DeviceIntent, out: dict[str, Owned]) -> None:
    _put(out, "bgp/asn", intent.get("bgp", "asn"))
    _put(out, "bgp/router_id", fleet.addresses.router_ids.get(device.name), str)
    _put(out, "bgp/maximum_paths", intent.get("bgp", "maximum_paths"))
    cabling, plan, devices = fleet.cabling, fleet.addresses, fleet.devices
    peer_intent = fleet.intent
    inbound_default = intent.get("bgp", "inbound_filter")
    # Sessions share their owned values (the peer's ASN, the fleet's filter): one Owned
    # per value rendered, not one per session.
    remote_as_of: dict[int, Owned] = {}
    inbound_of: dict[int, Owned] = {}
    mode = peering_of(intent)
    gone = None if mode == "ipv4" else _removed(intent)
    packed = plan.packed
    for port, end in cabling.ends(device.name).items():
        peer_end = end ^ 1
        peer = cabling.end_device[peer_end]
        if devices[peer].role not in BGP_ROLES:
            continue
        if gone is None:  # ipv4, the common case: no other keys to look at
            peer_ip = packed[peer_end]
            if peer_ip < 0:
                continue
            neighbor = f"bgp/neighbors/{ipv4_text(peer_ip)}"
        else:
            key, stale = _neighbor_keys(plan, mode, port, peer_end)
            for other in stale:
                out[f"bgp/neighbors/{other}/remote_as"] = gone
                out[f"bgp/neighbors/{other}/inbound_filter"] = gone
            if key is None:
                continue
            neighbor = f"bgp/neighbors/{key}"
        remote_as = intent.get("bgp", "neighbors", peer, "remote_as") or peer_intent[peer].get(
            "bgp", "asn"
        )
        if remote_as is not None and remote_as.value is not None:
            owned = remote_as_of.get(id(remote_as))
            if owned is None:
                owned = remote_as_of[id(remote_as)] = Owned(remote_as.value, remote_as.origin)
            out[f"{neighbor}/remote_as"] = owned
        inbound = intent.get("bgp", "neighbors", peer, "inbound_filter") or inbound_default
        if inbound is not None:
            owned = inbound_of.get(id(inbound))
            if owned is None:
                owned = inbound_of[id(inbound)] = Owned(inbound.value or "", inbound.origin)
            out[f"{neighbor}/inbound_filter"] = owned


def _removed(intent: DeviceIntent) -> Owned:
    """A neighbour the switch no longer peers with, owned by its ``bgp.peering`` line."""
    return Owned(None, _owner(intent.get("bgp", "peering")))


def _neighbor_keys(
    plan: AddressPlan, mode: str, port: str, peer_end: int
) -> tuple[str | None, list[str]]:
    """The key an ``ipv6`` or ``unnumbered`` switch configures a session under (None: the
    peer has no /127), and the keys of the other modes it drops: a switch moved off
    numbered IPv4 (or between the two) removes the neighbours it peered with before."""
    v4, v6 = plan.packed[peer_end], plan.ipv6.packed[peer_end]
    keys = {
        "ipv4": ipv4_text(v4) if v4 >= 0 else None,
        "ipv6": str(IPv6Address(v6)) if v6 >= 0 else None,
        "unnumbered": port,
    }
    mine = keys.pop(mode)
    return mine, [key for key in keys.values() if key is not None]


def _render_ports(
    fleet: Fleet, name: str, kind: str, values: _PortValues, out: dict[str, Owned]
) -> None:
    """Per cabled port, in natural port order: the MTU layers, the /31, the PFC set
    (``interfaces/<port>/...`` on a switch, ``nics/<nic>/...`` on a host), and on a
    switch the /127 where an IPv6 pool gives one."""
    cabling, plan = fleet.cabling, fleet.addresses
    classes, packed, prefixlen, owner = (
        cabling.link_class,
        plan.packed,
        plan.prefixlen,
        plan.owner,
    )
    suffixes = tuple(_SUFFIX[layer] for layer in values.layers)
    ipv6 = plan.ipv6.packed
    for port, end in cabling.ends(name).items():
        layers, pfc = values.of(classes[end >> 1])
        layer_paths, address_path, pfc_path = _port_paths(kind, port, suffixes)
        for path, layer in zip(layer_paths, layers, strict=True):
            if layer is not None:
                out[path] = layer
        address, owned_by = packed[end], owner[end]
        if address >= 0 and owned_by is not None:
            out[address_path] = Owned(interface_text(address, prefixlen[end]), owned_by[0])
        out[pfc_path] = pfc
        if ipv6[end] >= 0 and kind == "interfaces":
            _put_ipv6(plan.ipv6, kind, port, end, out)


def _put_ipv6(column: AddressColumn, kind: str, port: str, end: int, out: dict[str, Owned]) -> None:
    """A switch port's /127 (``addressing.ipv6_pools``): hosts keep their IPv4 /31."""
    text, owned_by = column.text_at(end), column.owner[end]
    if text is not None and owned_by is not None:
        out[f"{kind}/{port}/ipv6_address"] = Owned(text, owned_by[0])


_SUFFIX = {"switch_port": "mtu", "host": "mtu", "rdma": "rdma_mtu"}


@functools.lru_cache(maxsize=16384)
def _port_paths(
    kind: str, port: str, suffixes: tuple[str, ...]
) -> tuple[tuple[str, ...], str, str]:
    """A port's setting paths: one per MTU layer, the address, the PFC set. Port names
    repeat on every device of a model, so each path is written (and kept) once."""
    prefix = f"{kind}/{port}"
    layers = tuple(f"{prefix}/{suffix}" for suffix in suffixes)
    return layers, f"{prefix}/address", f"{prefix}/pfc_priorities"


def render_host(fleet: Fleet, device: Device) -> dict[str, Owned]:
    intent = fleet.intent[device.name]
    out: dict[str, Owned] = {}
    bundle = firmware_bundle(fleet, intent)
    if bundle is not None:
        components, origin = bundle
        for component, version in sorted(components.items()):
            out[f"firmware/{component}"] = Owned(version, origin)
    _render_ports(fleet, device.name, "nics", _PortValues(intent, ("host", "rdma")), out)
    _qos_common(out, intent)
    return out


def render_device(fleet: Fleet, name: str) -> dict[str, Owned]:
    device = fleet.devices[name]
    return (
        render_host(fleet, device) if device.role is Role.gpu_node else render_switch(fleet, device)
    )


@gc_paused()
def render_desired(fleet: Fleet, names: list[str] | None = None) -> DesiredFleet:
    """Desired state of every device (or of ``names``), in inventory order."""
    chosen = names if names is not None else list(fleet.devices)
    return {name: render_device(fleet, name) for name in chosen}
