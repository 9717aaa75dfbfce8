"""Fabric-shape policies: each cable's class fits the roles at its ends, leaf-spine cables
stay inside their pod and every pod named is one (three tiers), a NIC reaches
the leaf of its own rail, no two routed ports share an address or a /31 with a port of
another cable, and the nodes of one training gang run one firmware bundle.

Every check is one pass over the cables, the address plan or the gangs (dictionary
look-ups, never a scan of pairs).
"""

from __future__ import annotations

from collections.abc import Iterator

from intent.fleet import Fleet
from inventory.models import LinkClass, Role
from policies.engine import Finding, policy
from policies.views import where

ROLES_OF_CLASS: dict[LinkClass, tuple[frozenset[Role], ...]] = {
    LinkClass.host_leaf: (frozenset({Role.gpu_node, Role.leaf}),),
    LinkClass.leaf_spine: (frozenset({Role.leaf, Role.spine}),),
    LinkClass.spine_superspine: (frozenset({Role.spine, Role.super_spine}),),
    LinkClass.frontend: (
        frozenset({Role.gpu_node, Role.frontend}),
        frozenset({Role.frontend}),
    ),
}
"""The role pairs a cable of each class may join (a set of one role: both ends)."""


def _pairs(link_class: LinkClass) -> str:
    """``gpu-node - leaf``; a set of one role joins two devices of that role."""
    shown = []
    for pair in ROLES_OF_CLASS[link_class]:
        roles = sorted(r.value for r in pair)
        shown.append(" - ".join(roles if len(roles) == 2 else roles * 2))
    return " or ".join(shown)


@policy(
    "cabling.class-fits-roles",
    title="Each cable's class fits the roles of the devices at its ends",
    rationale="The class decides MTU, addressing pool, lossless treatment and BGP sessions; a "
    "leaf-spine cable between two leaves gets a spine's settings on neither end.",
    remediation="Fix the cable's class, or the device it names at one end.",
)
def class_fits_roles(fleet: Fleet) -> Iterator[Finding]:
    devices = fleet.devices
    fits: dict[tuple[Role, Role, LinkClass], bool] = {}
    for index, link in enumerate(fleet.links):
        a, b = devices.get(link.a), devices.get(link.b)
        if a is None or b is None:
            continue  # an input error, reported at load
        key = (a.role, b.role, link.link_class)
        fit = fits.get(key)
        if fit is None:
            fit = fits[key] = frozenset({a.role, b.role}) in ROLES_OF_CLASS[link.link_class]
        if fit:
            continue
        yield Finding(
            f"{link.a}:{link.a_port}",
            f"{link.link_class.value} cable {link.a}:{link.a_port} ({a.role.value}) <-> "
            f"{link.b}:{link.b_port} ({b.role.value}): a {link.link_class.value} cable joins "
            f"{_pairs(link.link_class)}",
            (fleet.where.links[index],),
            (link.a, link.b),
        )


@policy(
    "cabling.same-pod",
    title="A leaf-spine cable stays inside one pod, and every pod named is a pod",
    rationale="In a three-tier fabric a pod's leaves reach other pods only through the "
    "super-spines; a leaf cabled to another pod's spine makes that spine a transit between "
    "pods with the wrong ASN path, and breaks the pod as a failure and rollout domain.",
    remediation="Re-cable the leaf to a spine of its own pod (or fix the device's pod).",
)
def same_pod(fleet: Fleet) -> Iterator[Finding]:
    known = known_pods(fleet)
    for name, device in fleet.devices.items():
        if device.pod is None or device.pod in known or device.role not in _POD_ROLES:
            continue
        other = "spine" if device.role is Role.leaf else "leaf"
        yield Finding(
            name,
            f"{name}: unknown pod {device.pod}: no {other} is in it and bgp.pod_spine_asns "
            f"does not name it (pods: {', '.join(sorted(known)) or 'none'})",
            (fleet.where.devices[name],),
            (name,),
        )
    for index, link in enumerate(fleet.links):
        if link.link_class is not LinkClass.leaf_spine:
            continue
        a, b = fleet.devices.get(link.a), fleet.devices.get(link.b)
        if a is None or b is None or a.pod is None or b.pod is None or a.pod == b.pod:
            continue
        if a.pod not in known or b.pod not in known:
            continue  # the unknown pod is the defect, reported once at its device
        yield Finding(
            f"{link.a}:{link.a_port}",
            f"{link.a}:{link.a_port} (pod {a.pod}) is cabled to {link.b}:{link.b_port} "
            f"(pod {b.pod}): a leaf-spine cable stays inside its pod",
            (fleet.where.links[index], fleet.where.devices[link.a]),
            (link.a, link.b),
        )


_POD_ROLES = (Role.leaf, Role.spine)


def known_pods(fleet: Fleet) -> set[str]:
    """The pods of the fabric: each holds at least one leaf and one spine, or has its own
    ``bgp.pod_spine_asns`` entry. A pod only one side names (a typo on one device) is
    not a pod."""
    leaves = {d.pod for d in fleet.devices.values() if d.role is Role.leaf}
    spines = {d.pod for d in fleet.devices.values() if d.role is Role.spine}
    known = {pod for pod in leaves & spines if pod is not None}
    for doc in fleet.where.docs.values():
        if not doc.path.startswith("intent/"):
            continue  # only intent files set bgp (and inventory files are kept without data)
        data = doc.data
        bgp = data.get("bgp") if isinstance(data, dict) else None
        declared = bgp.get("pod_spine_asns") if isinstance(bgp, dict) else None
        if isinstance(declared, dict):
            known.update(str(pod) for pod in declared)
    return known


@policy(
    "cabling.rail-match",
    title="Each GPU NIC is cabled to the leaf of its own rail",
    rationale="Rail-optimised collectives send NIC r's traffic through leaf r in one hop; a "
    "NIC on another rail's leaf turns that traffic into spine traffic and breaks the rail "
    "alignment NCCL expects.",
    remediation="Re-cable the NIC to its rail's leaf (or fix the NIC's or the leaf's rail).",
)
def rail_match(fleet: Fleet) -> Iterator[Finding]:
    devices = fleet.devices
    rails: dict[str, dict[str, int | None]] = {}  # host -> NIC -> rail (the first NIC named)
    for index, link in enumerate(fleet.links):
        if link.link_class is not LinkClass.host_leaf:
            continue
        a, b = devices.get(link.a), devices.get(link.b)
        if a is None or b is None:
            continue
        if a.role is Role.gpu_node and b.role is Role.leaf:
            host, host_port, leaf, leaf_port, leaf_rail = (
                link.a,
                link.a_port,
                link.b,
                link.b_port,
                b.rail,
            )
        elif b.role is Role.gpu_node and a.role is Role.leaf:
            host, host_port, leaf, leaf_port, leaf_rail = (
                link.b,
                link.b_port,
                link.a,
                link.a_port,
                a.rail,
            )
        else:
            continue  # cabling.class-fits-roles reports it
        nics = rails.get(host)
        if nics is None:
            nics = rails[host] = {}
            for nic in devices[host].nics:
                nics.setdefault(nic.name, nic.rail)
        if host_port not in nics:
            continue
        rail = nics[host_port]
        if rail is None or leaf_rail is None or rail == leaf_rail:
            continue
        yield Finding(
            f"{host}:{host_port}",
            f"{host}:{host_port} is on rail {rail} but cabled to {leaf}:{leaf_port} "
            f"of rail {leaf_rail}",
            (fleet.where.links[index], fleet.where.devices[host]),
            (host, leaf),
        )


@policy(
    "addressing.unique",
    title="No two routed ports share an address, and a /31 belongs to one cable",
    rationale="Overlapping pools or overrides hand the same /31 to two links: traffic for one "
    "peer lands on another, and BGP sessions flap between them.",
    remediation="Give each link class a pool of its own that overlaps no other, or fix the "
    "override that reuses an address.",
)
def addressing_unique(fleet: Fleet) -> Iterator[Finding]:
    plan, cabling = fleet.addresses, fleet.cabling
    packed, prefixlen = plan.packed, plan.prefixlen
    by_address: dict[int, int] = {}  # address -> the first end that has it
    by_subnet: dict[int, int] = {}  # network number * 64 + prefix length -> first end
    for end in plan.order:
        address = packed[end]
        other = by_address.get(address)
        if other is not None:
            mine, theirs = cabling.endpoint(end), cabling.endpoint(other)
            yield Finding(
                f"{mine}",
                f"{mine} has {plan.text_at(end)}, already the address of {theirs}",
                where(plan.sourced_at(end), plan.sourced_at(other)),
                (mine.device, theirs.device),
            )
            continue
        by_address[address] = end
        length = prefixlen[end]
        first = by_subnet.setdefault(((address >> (32 - length)) << 6) | length, end)
        if first == end or first == end ^ 1:  # its own /31, or its cable's other end
            continue
        mine, theirs = cabling.endpoint(end), cabling.endpoint(first)
        yield Finding(
            f"{mine}",
            f"{mine} has {plan.text_at(end)}, in the same /{length} as {theirs} on another cable",
            where(plan.sourced_at(end), plan.sourced_at(first)),
            (mine.device, theirs.device),
        )


@policy(
    "firmware.gang-uniform",
    title="The nodes of one training gang run one firmware bundle",
    rationale="A gang's ranks run one collective library over one driver stack; mixed "
    "driver, NIC firmware or NCCL versions within a gang hang or slow its all-reduce.",
    remediation="Put every node of the gang in the same bundle (one group covering the gang), "
    "or move the gang's nodes together in one rollout wave.",
)
def gang_uniform(fleet: Fleet) -> Iterator[Finding]:
    for gang in fleet.gangs.values():
        bundles: dict[str, list[str]] = {}
        for node in gang.nodes:
            intent = fleet.intent.get(node)
            chosen = intent.get("firmware", "bundle") if intent is not None else None
            if chosen is not None and chosen.value is not None:
                bundles.setdefault(chosen.value, []).append(node)
        if len(bundles) < 2:
            continue
        split = "; ".join(
            f"{bundle}: {len(nodes)} node(s) ({', '.join(nodes[:3])}"
            f"{' ...' if len(nodes) > 3 else ''})"
            for bundle, nodes in sorted(bundles.items())
        )
        owners = [fleet.intent[nodes[0]].get("firmware", "bundle") for nodes in bundles.values()]
        yield Finding(
            gang.name,
            f"gang {gang.name} spans {len(bundles)} firmware bundles: {split}",
            (*where(*owners), fleet.where.gangs[gang.name]),
            tuple(gang.nodes),
        )
