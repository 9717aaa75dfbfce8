"""BGP sessions derived from the cabling: one per routed switch-to-switch link end.

RFC 7938 style: every leaf-spine cable carries an eBGP session. How it is addressed is
the device's ``bgp.peering`` (:func:`peering_of`):

* ``ipv4`` (the default): between the /31 addresses of the cable's two ends;
* ``ipv6``: between the /127 addresses of the two ends (``addressing.ipv6_pools``);
* ``unnumbered``: on the interface itself (IPv6 link-local, IPv4 routes with IPv6 next
  hops): the session is keyed by the local port, and has no addresses.

:attr:`Session.neighbor` is what the device configures the session under: the peer's
address, or the local port of an unnumbered session. The remote AS of a session is the
peer's own ASN unless ``bgp.neighbors.<peer>.remote_as`` overrides it on this device
(which policies then check against the peer); the inbound filter is the device's
``bgp.inbound_filter`` unless ``bgp.neighbors.<peer>.inbound_filter`` overrides it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from intent.facts import PortAddress
from intent.fleet import Fleet
from intent.models import Peering
from intent.resolve import DeviceIntent, Sourced
from inventory.index import PortLink
from inventory.models import BGP_ROLES

__all__ = [
    "BGP_ROLES",
    "DEFAULT_PEERING",
    "Session",
    "all_sessions",
    "peering_of",
    "sessions_of",
]

DEFAULT_PEERING: Peering = "ipv4"


def peering_of(intent: DeviceIntent) -> Peering:
    """How a switch addresses its sessions: its ``bgp.peering``, else ``ipv4``."""
    found = intent.get("bgp", "peering")
    return DEFAULT_PEERING if found is None or found.value is None else found.value


@dataclass(frozen=True)
class Session:
    """One end of a cable's session. ``mode`` is the device's peering; ``local_ip`` and
    ``peer_ip`` the two ends' addresses in that mode (/31 or /127; None when
    unnumbered or unallocated); ``neighbor`` the key the device configures the session
    under: ``peer_ip``'s address, or ``port`` when unnumbered (None: no address)."""

    device: str
    port: str
    peer: str
    peer_port: str
    mode: Peering
    neighbor: str | None
    local_ip: Sourced[PortAddress] | None
    peer_ip: Sourced[PortAddress] | None
    local_as: Sourced[Any] | None
    remote_as: Sourced[Any] | None
    inbound_filter: Sourced[Any] | None


def _session(fleet: Fleet, pl: PortLink) -> Session:
    local = fleet.intent[pl.local.device]
    peer = fleet.intent[pl.peer.device]
    remote_as = local.get("bgp", "neighbors", pl.peer.device, "remote_as") or peer.get("bgp", "asn")
    inbound = local.get("bgp", "neighbors", pl.peer.device, "inbound_filter") or local.get(
        "bgp", "inbound_filter"
    )
    mode = peering_of(local)
    plan = fleet.addresses
    address = plan.address if mode == "ipv4" else plan.ipv6_address
    local_ip = peer_ip = None
    if mode != "unnumbered":
        local_ip = address(pl.local.device, pl.local.port)
        peer_ip = address(pl.peer.device, pl.peer.port)
    neighbor = pl.local.port if mode == "unnumbered" else None
    if peer_ip is not None:
        neighbor = str(peer_ip.value.ip)
    return Session(
        device=pl.local.device,
        port=pl.local.port,
        peer=pl.peer.device,
        peer_port=pl.peer.port,
        mode=mode,
        neighbor=neighbor,
        local_ip=local_ip,
        peer_ip=peer_ip,
        local_as=local.get("bgp", "asn"),
        remote_as=remote_as,
        inbound_filter=inbound,
    )


def sessions_of(fleet: Fleet, device: str) -> Iterator[Session]:
    """Every BGP session of one switch, in port order."""
    if fleet.devices[device].role not in BGP_ROLES:
        return
    for pl in fleet.cabling.ports(device):
        if fleet.devices[pl.peer.device].role in BGP_ROLES:
            yield _session(fleet, pl)


# Loaded fleet (by id, while it lives) -> its sessions: several policies walk them all.
_SESSIONS: dict[int, tuple[weakref.ref[Fleet], tuple[Session, ...]]] = {}


def all_sessions(fleet: Fleet) -> Iterator[Session]:
    """Every BGP session of the fleet, switch by switch; derived once per fleet."""
    key = id(fleet)
    kept = _SESSIONS.get(key)
    if kept is None or kept[0]() is not fleet:

        def forget(ref: weakref.ref[Fleet]) -> None:
            if _SESSIONS.get(key, (None,))[0] is ref:
                del _SESSIONS[key]

        sessions = tuple(
            session
            for name, device in fleet.devices.items()
            if device.role in BGP_ROLES
            for session in sessions_of(fleet, name)
        )
        kept = _SESSIONS[key] = (weakref.ref(fleet, forget), sessions)
    return iter(kept[1])
