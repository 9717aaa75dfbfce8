"""A device's cabled ports read from the cabling index's columns, for the policies.

Policies ask per device "which link classes do its ports carry?" and "which of its
ports are lossless?"; both are answered from end codes
(:class:`~inventory.index.CablingIndex`) without building a view per port.
"""

from __future__ import annotations

from collections.abc import Iterator

from intent.fleet import Fleet
from inventory.models import LinkClass


def classes_of(fleet: Fleet, name: str) -> set[LinkClass]:
    """The link classes of the device's cabled ports."""
    classes = fleet.cabling.link_class
    return {classes[end >> 1] for end in fleet.cabling.ends(name).values()}


def lossless_classes(fleet: Fleet, name: str) -> tuple[LinkClass, ...]:
    """The device's ``qos.lossless_link_classes`` (none when unset)."""
    found: tuple[LinkClass, ...] = fleet.intent[name].value(
        "qos", "lossless_link_classes", default=()
    )
    return found


def lossless_ends(fleet: Fleet, name: str) -> Iterator[tuple[str, int]]:
    """(port, end code) of the device's ports on a lossless link class, in port order."""
    lossless = lossless_classes(fleet, name)
    if not lossless:
        return
    classes = fleet.cabling.link_class
    for port, end in fleet.cabling.ends(name).items():
        if classes[end >> 1] in lossless:
            yield port, end
