"""BGP sessions derived from the cabling: one per routed switch-to-switch link end.

RFC 7938 style: every leaf-spine cable carries an eBGP session between the /31
addresses of its two ends. The remote AS of a session is the peer's own ASN unless
``bgp.neighbors.<peer>.remote_as`` overrides it on this device (which policies then
check against the peer); the inbound filter is the device's ``bgp.inbound_filter``
unless ``bgp.neighbors.<peer>.inbound_filter`` overrides it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from intent.facts import PortAddress
from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.index import PortLink
from inventory.models import BGP_ROLES

__all__ = ["BGP_ROLES", "Session", "all_sessions", "sessions_of"]


@dataclass(frozen=True)
class Session:
    device: str
    port: str
    peer: str
    peer_port: str
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
    return Session(
        device=pl.local.device,
        port=pl.local.port,
        peer=pl.peer.device,
        peer_port=pl.peer.port,
        local_ip=fleet.addresses.address(pl.local.device, pl.local.port),
        peer_ip=fleet.addresses.address(pl.peer.device, pl.peer.port),
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
