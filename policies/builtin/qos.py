"""RoCEv2 lossless-class policies: PFC, DSCP map, ECN thresholds, PFC headroom.

PFC must pause exactly the RoCE priority on every port of the lossless path and on
every host NIC; one extra or missing priority is a defect (head-of-line blocking,
storms, deadlock or loss). ECN must mark before PFC fires (Kmin below Xoff), and each
lossless port needs headroom for the bytes in flight while a pause takes effect.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.index import Endpoint
from inventory.models import Device, Link, LinkClass
from policies.builtin.ports import lossless_classes, lossless_ends
from policies.engine import Finding, policy
from policies.views import (
    DEFAULT_PFC_FRAME,
    entry,
    required_headroom_bytes,
    where,
)


def _on_lossless_path(fleet: Fleet) -> Iterator[str]:
    """Devices with at least one port of a lossless link class."""
    for name in fleet.devices:
        if any(True for _ in lossless_ends(fleet, name)):
            yield name


def lossless_priorities(fleet: Fleet, name: str) -> Sourced[Any] | None:
    """The device's lossless priorities: ``qos.lossless_priorities`` when declared, else
    ``[roce_priority]`` (with that value's owner)."""
    intent = fleet.intent[name]
    declared = intent.get("qos", "lossless_priorities")
    if declared is not None and declared.value is not None:
        return Sourced(tuple(sorted(set(declared.value))), declared.origin, declared.scope)
    roce = intent.get("qos", "roce_priority")
    if roce is None or roce.value is None:
        return None
    return Sourced((roce.value,), roce.origin, roce.scope)


@policy(
    "qos.pfc-exactly-roce",
    title="PFC is enabled on exactly the lossless priorities (the RoCE priority by default)",
    rationale="An extra no-drop priority steals headroom and spreads pauses to other traffic; "
    "a missing one makes RoCE lossy and go-back-N collapses throughput.",
    remediation="Set qos.pfc_priorities to [qos.roce_priority] (or to "
    "qos.lossless_priorities in a design with more than one lossless class).",
)
def pfc_exactly_roce(fleet: Fleet) -> Iterator[Finding]:
    for name in _on_lossless_path(fleet):
        intent = fleet.intent[name]
        roce = intent.get("qos", "roce_priority")
        pfc = intent.get("qos", "pfc_priorities")
        if roce is None or roce.value is None:
            yield Finding(
                name,
                f"{name} is on the lossless path but has no qos.roce_priority",
                (fleet.where.devices[name],),
                (name,),
            )
            continue
        lossless = lossless_priorities(fleet, name)
        wanted = lossless.value if lossless is not None else (roce.value,)
        if roce.value not in wanted:
            yield Finding(
                name,
                f"{name}: the RoCE priority {roce.value} is not one of the lossless "
                f"priorities {list(wanted)}",
                where(lossless, roce),
                (name,),
            )
        enabled = tuple(sorted(pfc.value)) if pfc is not None and pfc.value is not None else ()
        if enabled != tuple(wanted):
            yield Finding(
                name,
                f"{name}: PFC on priorities {list(enabled)}, the lossless priorities are "
                f"{list(wanted)}: PFC must be exactly {list(wanted)}",
                where(pfc, lossless, roce),
                (name,),
            )


@policy(
    "qos.lossless-path-agrees",
    title="Both ends of every lossless link use the same RoCE priority, PFC set and DSCP map",
    rationale="A pause on priority 3 means nothing to a peer that queues RoCE on 4, and a "
    "host marking DSCP 26 into a switch that maps 26 elsewhere loses the lossless class.",
    remediation="Change the QoS profile on both ends together (a fleet-wide or group value).",
)
def lossless_path_agrees(fleet: Fleet) -> Iterator[Finding]:
    reported: set[tuple[str, str, str]] = set()
    intents, cabling = fleet.intent, fleet.cabling
    lossless: dict[str, tuple[LinkClass, ...]] = {}
    profiles: dict[str, tuple[Sourced[Any] | None, ...]] = {}
    for index, link in enumerate(fleet.links):
        a, b = link.a, link.b
        if a not in intents or b not in intents:
            continue
        end = cabling.end(a, link.a_port)
        if end is None:
            continue
        classes = lossless.get(a)
        if classes is None:
            classes = lossless[a] = lossless_classes(fleet, a)
        if cabling.class_of(end) not in classes:
            continue
        profile_a, profile_b = _qos_profile(profiles, fleet, a), _qos_profile(profiles, fleet, b)
        if profile_a == profile_b:  # the same owned values (or equal ones) on both ends
            continue
        for field, va, vb in zip(_PROFILE, profile_a, profile_b, strict=True):
            value_a = None if va is None else va.value
            value_b = None if vb is None else vb.value
            if value_a == value_b or (a, b, field) in reported:
                continue
            reported.add((a, b, field))
            yield Finding(
                f"{a}:{link.a_port}",
                f"qos.{field} differs across {a}:{link.a_port} <-> {b}:{link.b_port}: "
                f"{_show(value_a)} vs {_show(value_b)}",
                (*where(va, vb), fleet.where.links[index]),
                (a, b),
            )


_PROFILE = ("roce_priority", "lossless_priorities", "pfc_priorities", "dscp_map")


def _qos_profile(
    cache: dict[str, tuple[Sourced[Any] | None, ...]], fleet: Fleet, name: str
) -> tuple[Sourced[Any] | None, ...]:
    """The device's values of the fields both ends of a lossless link must agree on."""
    found = cache.get(name)
    if found is None:
        intent = fleet.intent[name]
        found = cache[name] = tuple(intent.get("qos", field) for field in _PROFILE)
    return found


def _show(value: object) -> str:
    if isinstance(value, tuple) and value and hasattr(value[0], "dscp"):
        return "{" + ", ".join(f"{e.dscp}->{e.priority}" for e in value) + "}"
    return str(list(value) if isinstance(value, tuple) else value)


@policy(
    "qos.dscp-roce-mapped",
    title="The DSCP map sends RoCE and CNP traffic to their own priorities",
    rationale="DSCP selects the lossless class: if the DSCP the hosts mark for RoCE maps to "
    "a lossy queue, RoCE rides it even when another DSCP maps to the RoCE priority; CNPs on "
    "the RoCE priority get paused with the data they regulate.",
    remediation="Map the RoCE DSCP (qos.roce_dscp, 26) to qos.roce_priority and the CNP "
    "DSCP (qos.cnp_dscp, 48) to qos.cnp_priority, and keep the two priorities different.",
)
def dscp_roce_mapped(fleet: Fleet) -> Iterator[Finding]:
    for name in _on_lossless_path(fleet):
        intent = fleet.intent[name]
        roce, cnp = intent.get("qos", "roce_priority"), intent.get("qos", "cnp_priority")
        dscp_map = intent.get("qos", "dscp_map")
        mapped = {e.dscp: e.priority for e in (dscp_map.value or ())} if dscp_map else {}
        if roce is not None and roce.value is not None and roce.value not in mapped.values():
            yield Finding(
                name,
                f"{name}: no DSCP maps to the RoCE priority {roce.value}",
                where(dscp_map, roce),
                (name,),
            )
        if cnp is not None and roce is not None and cnp.value == roce.value:
            yield Finding(
                name,
                f"{name}: CNP priority {cnp.value} equals the RoCE priority",
                where(cnp, roce),
                (name,),
            )
        lossless = lossless_priorities(fleet, name)
        for field, target in (("roce_dscp", roce), ("cnp_dscp", cnp)):
            marked = intent.get("qos", field)
            if marked is None or marked.value is None or target is None or target.value is None:
                continue
            got = mapped.get(marked.value)
            if field == "roce_dscp" and (lossless is None or got not in lossless.value):
                continue  # RoCE on a lossy queue: qos.lossless-priority-reached says so
            if got != target.value:
                kind = "RoCE" if field == "roce_dscp" else "CNP"
                lands = (
                    "no priority (the default, lossy class)" if got is None else f"priority {got}"
                )
                yield Finding(
                    name,
                    f"{name}: hosts mark {kind} traffic DSCP {marked.value}, which the map "
                    f"sends to {lands}, not the {kind} priority {target.value}",
                    where(entry_of(dscp_map, marked.value), marked, target),
                    (name,),
                )


def entry_of(dscp_map: Sourced[Any] | None, dscp: int) -> Sourced[Any] | None:
    """The map's entry for ``dscp`` (at its own line), or the whole map when it has none."""
    entries = dscp_map.value if dscp_map is not None and dscp_map.value is not None else ()
    index = next((i for i, e in enumerate(entries) if e.dscp == dscp), None)
    return dscp_map if index is None else entry(dscp_map, index)


@policy(
    "qos.ecn-order",
    title="ECN Kmin < Kmax on every queue, and Kmin < PFC Xoff on the lossless queues",
    rationale="DCQCN must mark before PFC fires; if Kmin sits above Xoff, incast shows "
    "only sporadic marks and a storm of pauses.",
    remediation="Anchor Kmin on the bandwidth-delay product (~200 KB same-rail) below Xoff.",
)
def ecn_order(fleet: Fleet) -> Iterator[Finding]:
    for name in _on_lossless_path(fleet):
        intent = fleet.intent[name]
        ecn, xoff = intent.get("qos", "ecn"), intent.get("qos", "pfc_xoff_kb")
        roce = intent.value("qos", "roce_priority")
        queues = ecn.value if ecn is not None and ecn.value is not None else ()
        if (
            roce is not None
            and fleet.devices[name].role.is_switch
            and all(q.priority != roce for q in queues)
        ):
            yield Finding(
                name,
                f"{name}: no ECN thresholds on the RoCE queue {roce}",
                where(ecn) or (fleet.where.devices[name],),
                (name,),
            )
        for index, queue in enumerate(queues):
            own = entry(ecn, index)  # the queue's own line, not the list's first
            if queue.kmin_kb >= queue.kmax_kb:
                yield Finding(
                    name,
                    f"{name} queue {queue.priority}: kmin {queue.kmin_kb} KB >= "
                    f"kmax {queue.kmax_kb} KB",
                    where(own),
                    (name,),
                )
            lossless = lossless_priorities(fleet, name)
            paused = lossless is not None and queue.priority in lossless.value
            if (
                paused
                and xoff is not None
                and xoff.value is not None
                and queue.kmin_kb >= xoff.value
            ):
                yield Finding(
                    name,
                    f"{name} queue {queue.priority}: kmin {queue.kmin_kb} KB >= "
                    f"PFC xoff {xoff.value} KB: ECN would mark after PFC fires",
                    where(own, xoff),
                    (name,),
                )


@policy(
    "qos.headroom-port",
    title="PFC headroom per lossless port covers 2*MTU + 2*r*L/v + r*t_resp + PFC frame",
    rationale="After a pause is sent, bytes already on the wire and in the peer's pipeline "
    "keep arriving; without headroom for them the lossless class drops.",
    remediation="Raise qos.pfc_headroom_kb (or shorten the cable); the message gives the need.",
)
def headroom_port(fleet: Fleet) -> Iterator[Finding]:
    cabling = fleet.cabling
    links, classes = cabling.links, cabling.link_class
    speeds = _CableSpeeds(fleet)
    for name, device in fleet.devices.items():
        if not device.role.is_switch:
            continue
        intent = fleet.intent[name]
        headroom = intent.get("qos", "pfc_headroom_kb")
        response = intent.value("qos", "peer_response_ns", default=0)
        frame = intent.value("qos", "pfc_frame_bytes", default=DEFAULT_PFC_FRAME)
        have = (headroom.value if headroom and headroom.value else 0) * 1024
        lossless = lossless_classes(fleet, name)
        if not lossless:
            continue
        mtus: dict[LinkClass, Sourced[Any] | None] = {}
        for port, end in cabling.ends(name).items():
            link_class = classes[end >> 1]
            if link_class not in lossless:
                continue
            if link_class in mtus:
                mtu = mtus[link_class]
            else:
                mtu = mtus[link_class] = intent.get("mtu", link_class.value, "switch_port")
            if mtu is None or mtu.value is None:
                continue
            link = links[end >> 1]
            speed = link.speed_gbps
            if speed is None:
                speed = speeds.of(link)
            need = required_headroom_bytes(mtu.value, speed, link.length_m, response, frame)
            if have < need:
                local = Endpoint(name, port)
                yield Finding(
                    f"{local}",
                    f"{local}: headroom {have / 1024:.0f} KB < needed {need / 1024:.1f} KB "
                    f"({speed} Gb/s, {link.length_m} m, MTU {mtu.value})",
                    (*where(headroom, mtu), fleet.where.links[end >> 1]),
                    (str(local),),
                )


class _CableSpeeds:
    """:func:`~policies.views.link_speed_gbps` with each host's NIC speeds read once."""

    def __init__(self, fleet: Fleet) -> None:
        self.devices = fleet.devices
        self.default = fleet.config.defaults.link_speed_gbps
        self._nics: dict[str, dict[str, int]] = {}

    def of(self, link: Link) -> int:
        if link.speed_gbps is not None:
            return link.speed_gbps
        nics = self._nics.get(link.a)
        if nics is None:
            host = self.devices.get(link.a)
            nics = self._nics[link.a] = {} if host is None else _first_by_name(host)
        return nics.get(link.a_port, self.default)


def _first_by_name(device: Device) -> dict[str, int]:
    speeds: dict[str, int] = {}
    for nic in device.nics:
        speeds.setdefault(nic.name, nic.speed_gbps)
    return speeds


@policy(
    "qos.headroom-buffer",
    title="Total PFC headroom of a switch fits its buffer",
    rationale="Headroom is reserved per port and per lossless priority; the static worst case "
    "(ORION: ~6.8 MB per leaf) must fit the shared buffer, and doubles per extra priority.",
    remediation="Remove extra lossless priorities, or lower per-port headroom where cables "
    "are short.",
)
def headroom_buffer(fleet: Fleet) -> Iterator[Finding]:
    for name, device in fleet.devices.items():
        if not device.role.is_switch:
            continue
        intent = fleet.intent[name]
        buffer, headroom = (
            intent.get("qos", "switch_buffer_kb"),
            intent.get("qos", "pfc_headroom_kb"),
        )
        if buffer is None or buffer.value is None or headroom is None or headroom.value is None:
            continue
        pfc = intent.get("qos", "pfc_priorities")
        priorities = len(intent.value("qos", "pfc_priorities", default=()) or ())
        ports = sum(1 for _ in lossless_ends(fleet, name))
        total = ports * priorities * headroom.value
        if total > buffer.value:
            yield Finding(
                name,
                f"{name}: {ports} ports x {priorities} priorities x "
                f"{headroom.value} KB = {total} KB > buffer {buffer.value} KB",
                where(headroom, buffer, pfc),
                (name,),
            )
