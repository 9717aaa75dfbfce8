"""BGP session addressing: both ends of a cable peer the same way (``bgp.peering``).

A cable between two BGP switches carries one session, so its ends must agree: both
numbered IPv4 (the /31 is ``bgp.p2p-31``'s), both numbered IPv6 on the two ends of one
/127 (RFC 6164), or both unnumbered (interface peers over IPv6 link-local, RFC 8950).
One pass over the cabling columns: linear in the fleet.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from intent.facts import ipv6_interface_text
from intent.fleet import Fleet
from intent.models import Peering
from intent.resolve import Sourced
from intent.sessions import DEFAULT_PEERING
from inventory.models import BGP_ROLES
from inventory.problems import Location
from policies.engine import Finding, policy
from policies.views import where


def _modes(fleet: Fleet) -> dict[str, tuple[Peering, Sourced[Any] | None]]:
    """Each BGP switch's peering and the value that set it (None: the default)."""
    out: dict[str, tuple[Peering, Sourced[Any] | None]] = {}
    for name, device in fleet.devices.items():
        if device.role in BGP_ROLES:
            found = fleet.intent[name].get("bgp", "peering")
            if found is None or found.value is None:
                out[name] = (DEFAULT_PEERING, None)
            else:
                out[name] = (found.value, found)
    return out


@policy(
    "bgp.peering-agree",
    title="Both ends of a cable peer the same way; numbered IPv6 ends share one /127",
    rationale="A session comes up only when both ends configure it alike: an unnumbered end "
    "waits for a link-local peer the numbered end never offers, and IPv6 ends in different "
    "/127s never reach each other.",
    remediation="Set the same bgp.peering on both switches (fleet-wide, or the same group), "
    "and give the link class an addressing.ipv6_pools entry when it is ipv6.",
)
def peering_agree(fleet: Fleet) -> Iterator[Finding]:
    modes = _modes(fleet)
    cabling, column = fleet.cabling, fleet.addresses.ipv6
    device_of, port_of = cabling.end_device, cabling.end_port
    for index in range(len(cabling)):
        lower, upper = 2 * index, 2 * index + 1
        a, b = device_of[lower], device_of[upper]
        if a not in modes or b not in modes:
            continue
        (mode_a, set_a), (mode_b, set_b) = modes[a], modes[b]
        subject = f"{a}:{port_of[lower]}"
        if mode_a != mode_b:
            yield Finding(
                subject,
                f"{a}:{port_of[lower]} peers {mode_a} but {b}:{port_of[upper]} peers {mode_b}: "
                "the session on this cable never comes up",
                where(set_a, set_b) or _devices(fleet, a, b),
                (a, b),
            )
        elif mode_a == "ipv6":
            problem = _pair_127(column.packed[lower], column.packed[upper], column.prefixlen, index)
            if problem is not None:
                ends = column.sourced_at(lower), column.sourced_at(upper)
                yield Finding(
                    subject,
                    f"{a}:{port_of[lower]} -> {b}:{port_of[upper]}: {problem}",
                    (*where(*ends, set_a, set_b), fleet.where.links[index]),
                    (a, b),
                )


def _devices(fleet: Fleet, *names: str) -> tuple[Location, ...]:
    return tuple(fleet.where.devices[name] for name in names)


def _pair_127(ip_a: int, ip_b: int, prefixlen: bytearray, index: int) -> str | None:
    """What keeps two IPv6 ends from being the two ends of one /127, or None."""
    if ip_a < 0 or ip_b < 0:
        return "ipv6 peering, but no IPv6 address (no addressing.ipv6_pools entry for the link)"
    len_a, len_b = prefixlen[2 * index], prefixlen[2 * index + 1]
    if len_a == len_b == 127 and ip_a >> 1 == ip_b >> 1 and ip_a != ip_b:
        return None
    a, b = ipv6_interface_text(ip_a, len_a), ipv6_interface_text(ip_b, len_b)
    return f"{a} and {b} are not the two ends of one /127"
