"""Where the lossless class reaches, from both ends: the cables RoCE crosses, and the
priorities the DSCP map fills.

* **The path.** RoCE traffic leaves a GPU node's NIC on a host-leaf cable and, between
  rails, racks or pods, climbs leaf -> spine -> super-spine and back down. Every link
  class on that path must be lossless (``qos.lossless_link_classes``) on every device it
  touches; one lossy tier (often the spine to super-spine one, added with a third tier)
  drops RoCE under congestion while every port below it still pauses. The path is read
  from the cabling: the devices reached over fabric cables (host-leaf, leaf-spine,
  spine-superspine; never frontend) from any device with a lossless port, in one pass
  over their cabled ports.
* **The priorities.** A declared lossless priority that no DSCP maps to pauses and
  reserves headroom for traffic that never arrives, usually because its class's DSCP
  was mapped elsewhere; conversely, the DSCP the hosts mark RoCE with
  (``qos.roce_dscp``) must land on a lossless priority, or RoCE rides a lossy queue.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.models import LinkClass
from inventory.problems import Location
from policies.builtin.ports import lossless_ends
from policies.builtin.qos import entry_of, lossless_priorities
from policies.engine import Finding, policy
from policies.views import entry, where

FABRIC_CLASSES = frozenset({LinkClass.host_leaf, LinkClass.leaf_spine, LinkClass.spine_superspine})
"""The link classes a RoCE flow can cross between two GPU nodes."""


def on_lossless_path(fleet: Fleet) -> list[str]:
    """Every device a RoCE flow can cross: those with a lossless port, and every device
    reached from them over fabric cables (breadth first, seeds in inventory order)."""
    cabling = fleet.cabling
    classes, peer_of = cabling.link_class, cabling.end_device
    seen: dict[str, None] = {}
    queue: deque[str] = deque()
    for name in fleet.devices:
        if any(True for _ in lossless_ends(fleet, name)):
            seen[name] = None
            queue.append(name)
    while queue:
        for end in cabling.ends(queue.popleft()).values():
            if classes[end >> 1] not in FABRIC_CLASSES:
                continue
            peer = peer_of[end ^ 1]
            if peer not in seen:
                seen[peer] = None
                queue.append(peer)
    return list(seen)


@policy(
    "qos.lossless-path-classes",
    title="Every link class a lossless RoCE path crosses is lossless",
    rationale="RoCE between rails, racks or pods climbs leaf -> spine -> super-spine; a tier "
    "whose link class is not in qos.lossless_link_classes neither pauses nor reserves "
    "headroom, so RoCE drops there under congestion and go-back-N collapses throughput.",
    remediation="Add the link class to qos.lossless_link_classes (fleet-wide, or on the "
    "group of the devices named), with PFC, ECN and headroom for its ports.",
)
def lossless_path_classes(fleet: Fleet) -> Iterator[Finding]:
    cabling = fleet.cabling
    classes = cabling.link_class
    # one finding per (owner of the device's lossless_link_classes, class left out)
    missing: dict[tuple[Location, LinkClass], _Gap] = {}
    for name in on_lossless_path(fleet):
        intent = fleet.intent.get(name)
        if intent is None:
            continue
        declared = intent.get("qos", "lossless_link_classes")
        have = declared.value if declared is not None and declared.value is not None else ()
        for end in cabling.ends(name).values():
            link_class = classes[end >> 1]
            if link_class not in FABRIC_CLASSES or link_class in have:
                continue
            owner = declared.origin if declared is not None else fleet.where.devices[name]
            gap = missing.get((owner, link_class))
            if gap is None:
                gap = missing[(owner, link_class)] = _Gap(declared, end)
            gap.devices.setdefault(name, None)
            gap.end = min(gap.end, end)
    for (owner, link_class), gap in missing.items():
        yield _path_finding(fleet, owner, link_class, gap)


class _Gap:
    """The devices of one owner that leave one class out, and the first cable found."""

    def __init__(self, declared: Sourced[Any] | None, end: int) -> None:
        self.declared = declared
        self.end = end
        self.devices: dict[str, None] = {}


def _path_finding(fleet: Fleet, owner: Location, link_class: LinkClass, gap: _Gap) -> Finding:
    cabling = fleet.cabling
    local, peer = cabling.endpoint(gap.end), cabling.endpoint(gap.end ^ 1)
    devices = list(gap.devices)
    if gap.declared is None:
        said = f"{devices[0]} declares no qos.lossless_link_classes"
    else:
        shown = ", ".join(c.value for c in gap.declared.value or ())
        said = f"qos.lossless_link_classes [{shown}] leaves out {link_class.value}"
    others = len(devices) - 1
    more = f" and the cables of {others} more device{'s' if others != 1 else ''}" if others else ""
    return Finding(
        link_class.value,
        f"{said}, which the lossless RoCE path crosses ({local} <-> {peer}{more})",
        (owner, fleet.where.links[gap.end >> 1]),
        tuple(devices),
    )


@policy(
    "qos.lossless-priority-reached",
    title="Every declared lossless priority is reached by a DSCP, and the RoCE DSCP lands "
    "on a lossless one",
    rationale="A lossless priority no DSCP maps to is paused and reserves headroom for "
    "traffic that never arrives (its class's DSCP went elsewhere); a RoCE DSCP mapped to a "
    "lossy priority makes RoCE drop under congestion while PFC pauses an empty queue.",
    remediation="Map the class's DSCP to its lossless priority (or drop the priority from "
    "qos.lossless_priorities and qos.pfc_priorities), and map qos.roce_dscp to a lossless "
    "priority (qos.roce_priority).",
)
def lossless_priority_reached(fleet: Fleet) -> Iterator[Finding]:
    for name in fleet.devices:
        if not any(True for _ in lossless_ends(fleet, name)):
            continue
        intent = fleet.intent[name]
        dscp_map = intent.get("qos", "dscp_map")
        entries = dscp_map.value if dscp_map is not None and dscp_map.value is not None else ()
        reached = {e.priority for e in entries}
        declared = intent.get("qos", "lossless_priorities")
        roce = intent.value("qos", "roce_priority")
        for index, priority in enumerate(declared.value if declared and declared.value else ()):
            if priority in reached or priority == roce:  # RoCE's own: qos.dscp-roce-mapped
                continue
            yield Finding(
                name,
                f"{name}: lossless priority {priority} is reached by no DSCP in qos.dscp_map: "
                "it pauses and holds headroom for traffic that never arrives",
                where(entry(declared, index), dscp_map),
                (name,),
            )
        marked = intent.get("qos", "roce_dscp")
        lossless = lossless_priorities(fleet, name)
        if marked is None or marked.value is None or lossless is None:
            continue
        lands = next((e.priority for e in entries if e.dscp == marked.value), None)
        if lands in lossless.value:
            continue
        landing = "no priority (the default, lossy class)" if lands is None else f"priority {lands}"
        yield Finding(
            name,
            f"{name}: hosts mark RoCE traffic DSCP {marked.value}, which the map sends to "
            f"{landing}, not a lossless priority {list(lossless.value)}: RoCE drops under "
            "congestion",
            where(entry_of(dscp_map, marked.value), marked, lossless),
            (name,),
        )
