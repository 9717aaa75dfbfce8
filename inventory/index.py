"""Cabling index: every (device, port) endpoint to its cable and peer, built once in O(links).

Policies and diffs ask "what is this NIC cabled to?" and "which links does this leaf
have?" thousands of times; both are dictionary look-ups here, never a scan of pairs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from inventory.models import Device, Link, LinkClass
from inventory.problems import Location, Problem

_DIGITS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=8192)
def port_sort_key(port: str) -> tuple[object, ...]:
    """Natural order of interface names: Ethernet2 before Ethernet10 (names repeat on every
    device, so the key is cached)."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(port))


class Endpoint(NamedTuple):
    """One end of a cable; a named tuple so that 100,000+ of them hash at C speed."""

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


@dataclass(frozen=True, slots=True)
class PortLink:
    """One end of a cable as seen from a device: my port, the peer, the cable."""

    index: int
    link: Link
    local: Endpoint
    peer: Endpoint

    @property
    def link_class(self) -> LinkClass:
        return self.link.link_class


class CablingIndex:
    """Endpoint -> cable, and device -> its cabled ports, in natural port order."""

    def __init__(
        self,
        links: Sequence[Link],
        link_locations: Sequence[Location],
        devices: Mapping[str, Device],
    ) -> None:
        self.links = links
        self.problems: list[Problem] = []
        self._by_endpoint: dict[Endpoint, PortLink] = {}
        self._by_device: dict[str, list[PortLink]] = {}
        seen_at: dict[Endpoint, Location] = {}
        for index, link in enumerate(links):
            where = link_locations[index]
            a, b = Endpoint(link.a, link.a_port), Endpoint(link.b, link.b_port)
            if not self._check_ends(link, a, b, where, devices, seen_at):
                continue
            for local, peer in ((a, b), (b, a)):
                port_link = PortLink(index, link, local, peer)
                self._by_endpoint[local] = port_link
                self._by_device.setdefault(local.device, []).append(port_link)
                seen_at[local] = where
        for port_links in self._by_device.values():
            port_links.sort(key=lambda pl: port_sort_key(pl.local.port))

    def _check_ends(
        self,
        link: Link,
        a: Endpoint,
        b: Endpoint,
        where: Location,
        devices: Mapping[str, Device],
        seen_at: dict[Endpoint, Location],
    ) -> bool:
        ok = True
        for end in (a, b):
            if end.device not in devices:
                self.problems.append(Problem(where, f"link end {end}: no device {end.device!r}"))
                ok = False
            elif end in seen_at:
                self.problems.append(
                    Problem(where, f"port {end} is already cabled at {seen_at[end]}")
                )
                ok = False
        if a == b:
            self.problems.append(Problem(where, f"link connects {a} to itself"))
            ok = False
        return ok

    def at(self, device: str, port: str) -> PortLink | None:
        return self._by_endpoint.get(Endpoint(device, port))

    def ports(self, device: str) -> Sequence[PortLink]:
        return self._by_device.get(device, ())

    def ports_of_class(self, device: str, link_class: LinkClass) -> Iterator[PortLink]:
        return (pl for pl in self.ports(device) if pl.link_class is link_class)

    def __len__(self) -> int:
        return len(self.links)
