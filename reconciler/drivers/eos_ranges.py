"""EOS interface names and ranges as the running config prints them (pure).

``neighbor interface Et1-4,7 peer-group G remote-as N`` names its ports as a range:
items separated by commas, each ``Et``/``Ethernet`` (the first item must say which)
followed by a port (``1``, ``49/1``) or a span of ports that differ in one number
(``1-4``, ``1/1-4``, ``49/1-52/1``). :func:`expand` gives the full port names;
:func:`scoped` reads a link-local peer's zone (``fe80::1%Et1``) the same way.
"""

from __future__ import annotations

import re

_ITEM = re.compile(r"^(Ethernet|Et)?(\d+(?:/\d+)*)(?:-(\d+(?:/\d+)*))?$")
MAX_PORTS = 4096  # no switch has more: a wider range is not one plumb reads


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.split("/")]


def _span(first: list[int], last: list[int]) -> list[list[int]] | None:
    """The ports from ``first`` to ``last`` (which differ in at most one number)."""
    if len(last) == 1 and len(first) > 1:  # "1/1-4": the last number only
        last = [*first[:-1], last[0]]
    if len(first) != len(last):
        return None
    differ = [i for i, (a, b) in enumerate(zip(first, last, strict=True)) if a != b]
    if not differ:
        return [first]
    index = differ[0]
    if len(differ) > 1 or last[index] < first[index] or last[index] - first[index] > MAX_PORTS:
        return None
    return [[*first[:index], n, *first[index + 1 :]] for n in range(first[index], last[index] + 1)]


def expand(text: str) -> list[str]:
    """``Et1-2,Et5`` -> ``["Ethernet1", "Ethernet2", "Ethernet5"]``; [] when ``text`` is
    not an Ethernet range."""
    out: list[str] = []
    named = False
    for item in text.split(","):
        match = _ITEM.match(item)
        if match is None:
            return []
        named = named or match.group(1) is not None
        if not named:
            return []
        first = _numbers(match.group(2))
        ports = _span(first, _numbers(match.group(3))) if match.group(3) else [first]
        if ports is None:
            return []
        out += ["Ethernet" + "/".join(map(str, port)) for port in ports]
    return out


def scoped(peer: str) -> str:
    """A link-local peer with its zone spelled out (``fe80::1%Et1`` -> ``fe80::1%Ethernet1``);
    any other peer as given."""
    address, percent, zone = peer.partition("%")
    if not percent:
        return peer
    ports = expand(zone)
    return f"{address}%{ports[0]}" if len(ports) == 1 else peer
