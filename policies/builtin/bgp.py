"""BGP policies for an RFC 7938 eBGP fabric.

Two tiers: all spines share one ASN, every leaf has its own. Three tiers (RFC 7938's
five-stage Clos): the spines of one pod share an ASN, each pod's differs from every other
pod's (a route from pod A reaching pod B through a super-spine would otherwise carry
pod B's own ASN and be dropped), and the super-spines share one ASN of their own. ASNs
are private; every session's remote AS is the peer's ASN; maximum-paths covers every
equal-cost path; every session filters inbound; router ids are unique (and set: also,
and above all, on IPv6 and unnumbered sessions); both ends of a routed link sit in the
same /31. Sessions are counted from the cabling, so each holds whatever the switch's
``bgp.peering`` (see :mod:`policies.builtin.peering`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.models import BGP_ROLES, Role
from policies.engine import Finding, policy
from policies.views import where

PRIVATE_16 = range(64512, 65535)
PRIVATE_32 = range(4_200_000_000, 4_294_967_295)


def _asns(fleet: Fleet, role: Role) -> dict[str, Sourced[Any]]:
    out: dict[str, Sourced[Any]] = {}
    for device in fleet.of_role(role):
        asn = fleet.intent[device.name].get("bgp", "asn")
        if asn is not None and asn.value is not None:
            out[device.name] = asn
    return out


@policy(
    "bgp.asn-defined",
    title="Every leaf, spine and super-spine has an ASN",
    rationale="A switch without an ASN cannot form its sessions; its uplinks carry nothing.",
    remediation="Add the leaf to bgp.leaf_asns; set bgp.spine_asn (or bgp.pod_spine_asns per "
    "pod) for spines and bgp.super_spine_asn for super-spines.",
)
def asn_defined(fleet: Fleet) -> Iterator[Finding]:
    for role in BGP_ROLES:
        have = _asns(fleet, role)
        for device in fleet.of_role(role):
            if device.name not in have:
                yield Finding(
                    device.name,
                    f"{role.value} {device.name} has no bgp.asn",
                    (fleet.where.devices[device.name],),
                    (device.name,),
                )


def _by_pod(fleet: Fleet) -> dict[str | None, dict[str, Sourced[Any]]]:
    """Spine ASNs per pod (None: a two-tier fabric's spines, which have no pod)."""
    pods: dict[str | None, dict[str, Sourced[Any]]] = {}
    for name, asn in _asns(fleet, Role.spine).items():
        pods.setdefault(fleet.devices[name].pod, {})[name] = asn
    return pods


def _shared(
    asns: dict[str, Sourced[Any]], what: str, others: str
) -> tuple[int | None, Iterator[Finding]]:
    """The ASN most of ``asns`` share, and a finding for each device that differs."""
    common = Counter(a.value for a in asns.values()).most_common(1)[0][0] if asns else None

    def findings() -> Iterator[Finding]:
        for name, asn in sorted(asns.items()):
            if asn.value != common:
                yield Finding(
                    name,
                    f"{what} {name} has ASN {asn.value}, {others} {common}",
                    where(asn),
                    (name,),
                )

    return common, findings()


@policy(
    "bgp.spine-asn-shared",
    title="Spines share one ASN (per pod in a three-tier fabric; pods differ)",
    rationale="RFC 7938: a shared spine ASN makes AS-path loop prevention stop leaf-spine-leaf "
    "valleys; a spine with its own ASN becomes a transit path. Across pods the spine ASNs must "
    "differ, or routes between pods arrive carrying the receiving pod's own ASN and are "
    "dropped.",
    remediation="Set bgp.spine_asn once (two tiers), or one bgp.pod_spine_asns entry per pod, "
    "each different (three tiers).",
)
def spine_asn_shared(fleet: Fleet) -> Iterator[Finding]:
    first_pod: dict[int, tuple[str, str, Sourced[Any]]] = {}
    for pod, asns in sorted(_by_pod(fleet).items(), key=lambda item: str(item[0])):
        others = "the other spines" if pod is None else f"the other spines of pod {pod}"
        common, findings = _shared(asns, "spine", others)
        yield from findings
        if pod is None or common is None:
            continue
        name, asn = next((n, a) for n, a in sorted(asns.items()) if a.value == common)
        if common in first_pod:
            other_pod, other_name, other_asn = first_pod[common]
            yield Finding(
                f"pod {pod}",
                f"the spines of pod {pod} and of pod {other_pod} share ASN {common}: routes "
                f"between the pods pass a super-spine and arrive carrying the receiving pod's own "
                "ASN, so AS-path loop detection drops them",
                where(asn, other_asn),
                (name, other_name),
            )
        else:
            first_pod[common] = (pod, name, asn)


@policy(
    "bgp.super-spine-asn",
    title="Super-spines share one ASN, used by no spine or leaf",
    rationale="The top tier of a five-stage Clos is one AS, so a path never climbs back up "
    "through a second super-spine; an ASN it shares with a pod or a leaf makes that pod's "
    "or leaf's routes loop-dropped at the super-spines.",
    remediation="Set bgp.super_spine_asn once, to an ASN no pod and no leaf uses.",
)
def super_spine_asn(fleet: Fleet) -> Iterator[Finding]:
    asns = _asns(fleet, Role.super_spine)
    common, findings = _shared(asns, "super-spine", "the other super-spines")
    yield from findings
    if common is None:
        return
    below = {**_asns(fleet, Role.spine), **_asns(fleet, Role.leaf)}
    name, asn = next((n, a) for n, a in sorted(asns.items()) if a.value == common)
    for other, other_asn in sorted(below.items()):
        if other_asn.value == common:
            yield Finding(
                other,
                f"{fleet.devices[other].role.value} {other} uses the super-spine ASN {common}",
                where(other_asn, asn),
                (other, name),
            )


@policy(
    "bgp.leaf-asn-unique",
    title="Every leaf has a unique ASN, different from the spines'",
    rationale="Two leaves with one ASN drop each other's routes (AS-path loop detection).",
    remediation="Give each leaf its own private ASN in bgp.leaf_asns.",
)
def leaf_asn_unique(fleet: Fleet) -> Iterator[Finding]:
    spine_asns = {
        a.value for role in (Role.spine, Role.super_spine) for a in _asns(fleet, role).values()
    }
    first: dict[int, tuple[str, Sourced[Any]]] = {}
    for name, asn in sorted(_asns(fleet, Role.leaf).items()):
        if asn.value in spine_asns:
            yield Finding(name, f"leaf {name} uses the spine ASN {asn.value}", where(asn), (name,))
        elif asn.value in first:
            other, other_asn = first[asn.value]
            yield Finding(
                name,
                f"leaf {name} and leaf {other} share ASN {asn.value}",
                where(asn, other_asn),
                (name, other),
            )
        else:
            first[asn.value] = (name, asn)


@policy(
    "bgp.asn-private",
    title="Fabric ASNs are private (64512-65534 or 4200000000-4294967294)",
    rationale="Public ASNs inside the fabric leak into, or collide with, real Internet routing.",
    remediation="Renumber into the private ranges.",
)
def asn_private(fleet: Fleet) -> Iterator[Finding]:
    for role in BGP_ROLES:
        for name, asn in sorted(_asns(fleet, role).items()):
            if asn.value not in PRIVATE_16 and asn.value not in PRIVATE_32:
                yield Finding(name, f"{name} ASN {asn.value} is not private", where(asn), (name,))


@policy(
    "bgp.remote-as-match",
    title="Every session's remote-as equals the peer's own ASN",
    rationale="A wrong remote-as keeps the session down on that link; the fabric loses "
    "one ECMP path silently.",
    remediation="Remove the bgp.neighbors.<peer>.remote_as override or fix the peer's ASN.",
)
def remote_as_match(fleet: Fleet) -> Iterator[Finding]:
    for device, port, peer in _sessions(fleet):
        peer_asn = fleet.intent[peer].get("bgp", "asn")
        remote_as = fleet.intent[device].get("bgp", "neighbors", peer, "remote_as") or peer_asn
        if remote_as is None or peer_asn is None:
            continue
        if remote_as.value != peer_asn.value:
            yield Finding(
                f"{device}:{port}",
                f"{device} -> {peer}: remote-as {remote_as.value}, "
                f"but {peer} is AS {peer_asn.value}",
                where(remote_as, peer_asn),
                (device, peer),
            )


def _sessions(fleet: Fleet) -> Iterator[tuple[str, str, str]]:
    """(device, port, peer) of every BGP session, switch by switch in inventory order and
    port by port (the order of :func:`intent.sessions.all_sessions`), from the cabling
    columns alone."""
    devices, cabling = fleet.devices, fleet.cabling
    peer_of = cabling.end_device
    for name, device in devices.items():
        if device.role not in BGP_ROLES:
            continue
        for port, end in cabling.ends(name).items():
            peer = peer_of[end ^ 1]
            if devices[peer].role in BGP_ROLES:
                yield name, port, peer


@policy(
    "bgp.maximum-paths",
    title="maximum-paths covers every equal-cost path",
    rationale="A leaf with 32 uplinks and maximum-paths 8 installs 8 paths: a quarter of the "
    "uplink bandwidth carries all the traffic.",
    remediation="Set bgp.maximum_paths to at least the number of equal-cost uplinks.",
)
def maximum_paths(fleet: Fleet) -> Iterator[Finding]:
    devices, cabling = fleet.devices, fleet.cabling
    peer_of = cabling.end_device
    for role in BGP_ROLES:
        for device in fleet.of_role(role):
            per_peer: Counter[str] = Counter()
            for end in cabling.ends(device.name).values():
                peer = peer_of[end ^ 1]
                if devices[peer].role in BGP_ROLES:
                    per_peer[peer] += 1
            if not per_peer:
                continue
            need = _equal_cost_paths(fleet, role, per_peer)
            setting = fleet.intent[device.name].get("bgp", "maximum_paths")
            have = setting.value if setting is not None and setting.value is not None else 1
            if have < need:
                yield Finding(
                    device.name,
                    f"{device.name}: maximum-paths {have} < {need} equal-cost paths",
                    where(setting) or (fleet.where.devices[device.name],),
                    (device.name,),
                )


def _equal_cost_paths(fleet: Fleet, role: Role, per_peer: Counter[str]) -> int:
    """How many equal-cost paths the switch must install for its widest prefix: a leaf
    reaches everything through all its uplinks; a spine reaches a leaf over the links to
    it, and (three tiers) other pods over all its super-spine uplinks; a super-spine
    reaches a pod over all its links into that pod."""
    if role is Role.leaf:
        return sum(per_peer.values())
    if role is Role.spine:
        up = sum(n for peer, n in per_peer.items() if fleet.devices[peer].role is Role.super_spine)
        down = [n for peer, n in per_peer.items() if fleet.devices[peer].role is Role.leaf]
        return max([up, *down])
    into_pod: Counter[str | None] = Counter()
    for peer, n in per_peer.items():
        into_pod[fleet.devices[peer].pod] += n
    return max(into_pod.values())


@policy(
    "bgp.inbound-filter",
    title="Every eBGP session has an inbound filter",
    rationale="Without an inbound filter one misconfigured peer can announce a default or a "
    "host route and pull the fabric's traffic.",
    remediation="Set bgp.inbound_filter (fleet-wide) and do not null it per neighbor.",
)
def inbound_filter(fleet: Fleet) -> Iterator[Finding]:
    for device, port, peer in _sessions(fleet):
        intent = fleet.intent[device]
        inbound = intent.get("bgp", "neighbors", peer, "inbound_filter") or intent.get(
            "bgp", "inbound_filter"
        )
        if inbound is None or not inbound.value:
            yield Finding(
                f"{device}:{port}",
                f"{device} -> {peer} ({port}) has no inbound filter",
                where(inbound) or (fleet.where.devices[device],),
                (device,),
            )


@policy(
    "bgp.router-id-unique",
    title="Every BGP switch has a router id, and no two share one",
    rationale="Duplicate router ids make peers reject updates as their own or flap sessions.",
    remediation="Set addressing.loopbacks or give each switch its own bgp.router_ids entry.",
)
def router_id_unique(fleet: Fleet) -> Iterator[Finding]:
    seen: dict[Any, tuple[str, Sourced[Any]]] = {}
    for role in BGP_ROLES:
        for device in fleet.of_role(role):
            rid = fleet.addresses.router_ids.get(device.name)
            if rid is None:
                yield _no_router_id(fleet, device.name)
            elif rid.value in seen:
                other, other_rid = seen[rid.value]
                yield Finding(
                    device.name,
                    f"{device.name} and {other} share router id {rid.value}",
                    where(rid, other_rid),
                    (device.name, other),
                )
            else:
                seen[rid.value] = (device.name, rid)


def _no_router_id(fleet: Fleet, name: str) -> Finding:
    """A missing router id; on IPv6 or unnumbered sessions there is no IPv4 address the
    switch could take one from, so the finding points at the ``bgp.peering`` line."""
    peering = fleet.intent[name].get("bgp", "peering")
    if peering is None or peering.value in (None, "ipv4"):
        return Finding(name, f"{name} has no router id", (fleet.where.devices[name],), (name,))
    return Finding(
        name,
        f"{name} has no router id: its {peering.value} sessions carry no IPv4 address, and the "
        "BGP identifier is a 32-bit dotted quad",
        (peering.origin, fleet.where.devices[name]),
        (name,),
    )


@policy(
    "bgp.p2p-31",
    title="Both ends of every routed link are in the same /31",
    rationale="Routed to the host: each link is its own /31; ends in different subnets never "
    "come up, and a regular plan is what makes validation automatic.",
    remediation="Fix or remove the addressing.overrides entry for that port.",
)
def p2p_31(fleet: Fleet) -> Iterator[Finding]:
    plan, cabling = fleet.addresses, fleet.cabling
    packed, prefixlen = plan.packed, plan.prefixlen
    for index in range(len(cabling)):
        lower, upper = 2 * index, 2 * index + 1
        ip_a, ip_b = packed[lower], packed[upper]
        if ip_a < 0 and ip_b < 0:
            continue
        if ip_a >= 0 and ip_b >= 0:
            len_a, len_b = prefixlen[lower], prefixlen[upper]
            if len_a == 31 and len_b == 31 and ip_a >> 1 == ip_b >> 1 and ip_a != ip_b:
                continue
        link = fleet.links[index]
        a, b = plan.sourced_at(lower), plan.sourced_at(upper)
        subject = f"{link.a}:{link.a_port}"
        if a is None or b is None:
            missing = f"{link.a}:{link.a_port}" if a is None else f"{link.b}:{link.b_port}"
            yield Finding(
                subject,
                f"{missing} has no address but its peer does",
                (*where(a, b), fleet.where.links[index]),
                (subject,),
            )
        else:
            yield Finding(
                subject,
                f"{link.a}:{link.a_port} {a.value} and {link.b}:{link.b_port} "
                f"{b.value} are not the two ends of one /31",
                (*where(a, b), fleet.where.links[index]),
                (subject,),
            )
