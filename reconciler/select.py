"""``--select EXPR``: which devices a plan or apply covers (pure).

Grammar: comma-separated terms, all of which must hold; each term is ``key=value``
where the value is a glob and ``|`` separates alternatives. Keys: ``name``, ``role``,
``rack``, ``model``, ``vendor``, ``platform``, ``rail``, ``label.<key>``. A bare term
without ``=`` is a name glob. Examples: ``role=leaf,rack=net-01``, ``gpu-n0*``,
``label.nic_revision=B0``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from inventory.models import Device

if TYPE_CHECKING:
    from intent.fleet import Fleet

_FIELDS: dict[str, Callable[[Device], str]] = {
    "name": lambda d: d.name,
    "role": lambda d: d.role.value,
    "rack": lambda d: d.rack,
    "model": lambda d: d.model,
    "vendor": lambda d: d.vendor,
    "platform": lambda d: d.platform.value,
    "rail": lambda d: "" if d.rail is None else str(d.rail),
}


def _label_getter(label: str) -> Callable[[Device], str]:
    def get(device: Device) -> str:
        return device.labels.get(label, "")

    return get


class SelectError(ValueError):
    """The selection expression is malformed."""


def parse_select(expr: str) -> Callable[[Device], bool]:
    """Compile an expression into a predicate; raise SelectError naming the bad term."""
    terms: list[tuple[Callable[[Device], str], list[str]]] = []
    for raw in expr.split(","):
        term = raw.strip()
        if not term:
            raise SelectError(f"empty term in {expr!r}")
        key, _, value = term.partition("=") if "=" in term else ("name", "", term)
        key = key.strip()
        if key.startswith("label."):
            getter: Callable[[Device], str] = _label_getter(key[len("label.") :])
        elif key in _FIELDS:
            getter = _FIELDS[key]
        else:
            known = ", ".join([*_FIELDS, "label.<key>"])
            raise SelectError(f"unknown key {key!r} in {expr!r} (known: {known})")
        patterns = [p.strip() for p in value.split("|") if p.strip()]
        if not patterns:
            raise SelectError(f"no value for {key!r} in {expr!r}")
        terms.append((getter, patterns))

    def matches(device: Device) -> bool:
        return all(any(fnmatch.fnmatchcase(get(device), p) for p in pats) for get, pats in terms)

    return matches


def select_devices(devices: Iterable[Device], expr: str | None) -> list[str]:
    """Names of the devices the expression selects (all when ``expr`` is None)."""
    if not expr:
        return [d.name for d in devices]
    predicate = parse_select(expr)
    return [d.name for d in devices if predicate(d)]


def neighbours(fleet: Fleet, names: Iterable[str]) -> list[str]:
    """Devices cabled to the selection but outside it: observed for the safety proof."""
    chosen = set(names)
    cabling = fleet.cabling
    peer_of = cabling.end_device
    found = {peer_of[end ^ 1] for n in chosen for end in cabling.ends(n).values()}
    return sorted(found - chosen)
