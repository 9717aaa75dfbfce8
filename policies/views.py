"""Small shared views for policies: locations of values, link speed, PFC headroom.

Pure functions of the fleet; the headroom formula is the one every lossless port
must satisfy:

    headroom >= 2 * MTU + 2 * r * L / v + r * t_resp + PFC_frame

with r the line rate in bytes/s, L the cable length, v ~ 2e8 m/s in fibre and
t_resp the peer's response time.
"""

from __future__ import annotations

from typing import Any

from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.index import PortLink
from inventory.models import Link
from inventory.problems import Location

FIBRE_M_PER_S = 2.0e8
ETHERNET_OVERHEAD = 22  # 14 B header + 4 B 802.1Q tag + 4 B FCS
RDMA_OVERHEAD = 64  # RoCEv2 headers (Eth, IP, UDP, BTH, ...) inside the host MTU
VERBS_MTUS = (256, 512, 1024, 2048, 4096)
DEFAULT_PFC_FRAME = 64


def where(*values: Sourced[Any] | None) -> tuple[Location, ...]:
    """Locations of the given values, most specific scope first, without repeats.

    The most specific owner (a device override over a group over the fleet value) is
    usually the line a change touched, so it leads and becomes the primary location.
    """
    present = sorted((v for v in values if v is not None), key=lambda v: -v.scope)
    seen: list[Location] = []
    for value in present:
        if value.origin not in seen:
            seen.append(value.origin)
    return tuple(seen)


def entry(value: Sourced[Any] | None, index: int) -> Sourced[Any] | None:
    """One entry of a list value, located at its own line when the loader kept it (the
    list's own location otherwise), with the list's owner scope.

    A finding about one ECN queue or one lossless priority then points at that entry,
    not at the list's first line."""
    if value is None:
        return None
    if not 0 <= index < len(value.items):
        return value
    return Sourced(value.value[index], value.items[index], value.scope)


def link_speed_gbps(fleet: Fleet, link: Link) -> int:
    """The cable's speed: declared on the link, else the host NIC's, else the fleet default."""
    if link.speed_gbps is not None:
        return link.speed_gbps
    host = fleet.devices.get(link.a)
    if host is not None:
        for nic in host.nics:
            if nic.name == link.a_port:
                return nic.speed_gbps
    return fleet.config.defaults.link_speed_gbps


def required_headroom_bytes(
    mtu: int, speed_gbps: int, length_m: float, response_ns: int, frame_bytes: int
) -> float:
    rate = speed_gbps * 1e9 / 8
    return 2 * mtu + 2 * rate * length_m / FIBRE_M_PER_S + rate * response_ns * 1e-9 + frame_bytes


def is_lossless(fleet: Fleet, device: str, pl: PortLink) -> bool:
    classes = fleet.intent[device].value("qos", "lossless_link_classes", default=())
    return pl.link_class in classes
