"""Cabling index: every (device, port) endpoint to its cable and peer, built once in O(links).

Policies, render and diffs ask "what is this NIC cabled to?" and "which links does this
leaf have?" hundreds of thousands of times at fleet scale; both are dictionary look-ups
here, never a scan of pairs.

The index keeps no object per cable or per port. A cable end is an *end code*, an
integer: ``2 * i`` is the ``a`` end of link ``i``, ``2 * i + 1`` its ``b`` end, so the
peer of end ``e`` is ``e ^ 1`` and its cable ``e >> 1``. Columns hold each end's device
and port (interned strings) and each cable's class; ``device -> {port: end}`` lists a
device's cabled ports in natural port order. :class:`PortLink` views are built only
for callers that ask for them (:meth:`CablingIndex.ports`, :meth:`CablingIndex.at`).
"""

from __future__ import annotations

import functools
import operator
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from inventory.models import Device, Link, LinkClass
from inventory.problems import Location, Problem

_DIGITS = re.compile(r"(\d+)")
_NO_PORTS: Mapping[str, int] = {}


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
    """One end of a cable as seen from a device: my port, the peer, the cable (a view
    built on request from the index's columns)."""

    index: int
    link: Link
    local: Endpoint
    peer: Endpoint
    link_class: LinkClass


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
        intern = sys.intern
        count = len(links)
        self.end_device: list[str] = [""] * (2 * count)
        self.end_port: list[str] = [""] * (2 * count)
        self.link_class: list[LinkClass] = [LinkClass.frontend] * count
        """Per end code (device, port) and per cable (class); cables refused below keep
        empty ends and are in no device's ports."""
        by_device: dict[str, dict[str, int]] = {}
        self._ports = by_device  # in cable order while building (read by _refuse)
        for index, link in enumerate(links):
            a, a_port, b, b_port = link.a, link.a_port, link.b, link.b_port
            mine, theirs = by_device.get(a), by_device.get(b)
            if (
                a not in devices
                or b not in devices
                or (mine is not None and a_port in mine)
                or (theirs is not None and b_port in theirs)
                or (a == b and a_port == b_port)
            ):
                self._refuse(link, link_locations, index, devices)
                continue
            a, a_port, b, b_port = intern(a), intern(a_port), intern(b), intern(b_port)
            end = 2 * index
            self.end_device[end], self.end_port[end] = a, a_port
            self.end_device[end + 1], self.end_port[end + 1] = b, b_port
            self.link_class[index] = link.link_class
            if mine is None:
                mine = by_device[a] = {}
            mine[a_port] = end
            theirs = by_device.get(b)  # a link between two ports of one device
            if theirs is None:
                theirs = by_device[b] = {}
            theirs[b_port] = end + 1
        self.ties: set[str] = set()
        """Devices with two port names of one natural-order key (``Ethernet1`` and
        ``Ethernet01``): their order among themselves is the cables' order."""
        self._ports = {
            device: self._in_port_order(device, ports) for device, ports in by_device.items()
        }

    def _in_port_order(self, device: str, ports: dict[str, int]) -> dict[str, int]:
        if len(ports) < 2:
            return ports
        names = sorted(ports, key=port_sort_key)  # stable: ties keep the cables' order
        keys = list(map(port_sort_key, names))
        if any(map(operator.eq, keys, keys[1:])):
            self.ties.add(device)
        return {name: ports[name] for name in names}

    def _refuse(
        self,
        link: Link,
        link_locations: Sequence[Location],
        index: int,
        devices: Mapping[str, Device],
    ) -> None:
        """Report why a cable cannot be indexed (each reason once, in end order)."""
        where = link_locations[index]
        a, b = Endpoint(link.a, link.a_port), Endpoint(link.b, link.b_port)
        for end in (a, b):
            if end.device not in devices:
                self.problems.append(Problem(where, f"link end {end}: no device {end.device!r}"))
                continue
            first = self.end(end.device, end.port)
            if first is not None:
                self.problems.append(
                    Problem(where, f"port {end} is already cabled at {link_locations[first >> 1]}")
                )
        if a == b:
            self.problems.append(Problem(where, f"link connects {a} to itself"))

    # -- columns: end codes --------------------------------------------------------

    def end(self, device: str, port: str) -> int | None:
        """The end code of a cabled port, or None."""
        return self._ports.get(device, _NO_PORTS).get(port)

    def ends(self, device: str) -> Mapping[str, int]:
        """A device's cabled ports -> end code, in natural port order."""
        return self._ports.get(device, _NO_PORTS)

    def endpoint(self, end: int) -> Endpoint:
        return Endpoint(self.end_device[end], self.end_port[end])

    def class_of(self, end: int) -> LinkClass:
        return self.link_class[end >> 1]

    def devices(self) -> Iterator[str]:
        """Every device with at least one cabled port."""
        return iter(self._ports)

    # -- views ---------------------------------------------------------------------

    def _view(self, end: int) -> PortLink:
        index = end >> 1
        peer = end ^ 1
        return PortLink(
            index,
            self.links[index],
            Endpoint(self.end_device[end], self.end_port[end]),
            Endpoint(self.end_device[peer], self.end_port[peer]),
            self.link_class[index],
        )

    def at(self, device: str, port: str) -> PortLink | None:
        end = self.end(device, port)
        return None if end is None else self._view(end)

    def ports(self, device: str) -> Sequence[PortLink]:
        return [self._view(end) for end in self.ends(device).values()]

    def ports_of_class(self, device: str, link_class: LinkClass) -> Iterator[PortLink]:
        return (pl for pl in self.ports(device) if pl.link_class is link_class)

    def __len__(self) -> int:
        return len(self.links)
