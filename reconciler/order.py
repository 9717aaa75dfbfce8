"""Cut a plan into ordered steps so that every intermediate fleet state stays safe.

Phases, in order (each phase is one step; all devices of a step change together):

1. ``device-local``   settings with no cross-device coupling (ECN, Xoff, headroom,
                      maximum-paths, filters, router id)
2. ``qos-pairs``      PFC priorities and DSCP maps: both ends of a lossless link at once
3. ``bgp-pairs``      ASNs, remote-as, /31 and /127 addresses: both ends of a session at once
                      (and the inbound filter of a neighbour created or removed: it
                      lives with the neighbour, and FRR takes no filter without one)
4. ``mtu-raise-switch``  switch ports whose MTU goes up (fabric links: both ends)
5. ``rdma-lower``     RDMA path MTUs that go down (before the host MTU under them)
6. ``mtu-host``       host NIC MTUs
7. ``rdma-raise``     RDMA path MTUs that go up (after the host MTU under them)
8. ``mtu-lower-switch``  switch ports whose MTU goes down (after the hosts)
9. ``firmware``       NOS and host firmware versions

The order is then *proved* for this plan: starting from the observed states, each
step is applied in simulation and :func:`~reconciler.invariants.breaches_on_ports`
must find no breach that was not already there. Only links whose ends change in the
step are checked (:func:`ports_changed`): a link whose two ends hold what they held
cannot break. If one appears (typically because
the other end of a pair is not in the plan: unselected, unreachable or held), the
plan is refused with the breach that makes it unsafe. A pairwise change towards a
device that could not be observed cannot be proved at all
(:func:`unprovable_links`), so it is refused too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from intent.fleet import Fleet
from inventory.index import Endpoint
from inventory.models import Role
from reconciler.invariants import Breach, DscpMaps, breaches_on_ports
from reconciler.settings import Change, State, apply_changes

PHASES = (
    "device-local",
    "qos-pairs",
    "bgp-pairs",
    "mtu-raise-switch",
    "rdma-lower",
    "mtu-host",
    "rdma-raise",
    "mtu-lower-switch",
    "firmware",
)

WHY: dict[str, str] = {
    "device-local": "no setting couples two devices: each is safe alone",
    "qos-pairs": "both ends of a lossless link at once: PFC and DSCP maps agree",
    "bgp-pairs": "both ends of a session at once: AS numbers and /31s agree",
    "mtu-raise-switch": "switch ports grow first: host MTU + 22 <= port MTU holds",
    "rdma-lower": "RDMA MTU shrinks before the host MTU under it: RDMA + 64 <= host",
    "mtu-host": "hosts move between the switch raise and the switch lower",
    "rdma-raise": "RDMA MTU grows after the host MTU under it",
    "mtu-lower-switch": "switch ports shrink last, after their hosts",
    "firmware": "versions last, after every setting they may rely on",
}
"""Why each phase sits where it does (for people: pictures and reviews)."""


@dataclass(frozen=True)
class Step:
    index: int
    phase: str
    changes: Mapping[str, tuple[Change, ...]]

    def devices(self) -> list[str]:
        return sorted(self.changes)


class UnsafePlan(Exception):
    """No order of this plan keeps every intermediate state safe."""

    def __init__(self, phase: str, breaches: Sequence[Breach]) -> None:
        shown = "; ".join(b.detail for b in breaches[:3])
        more = f" (and {len(breaches) - 3} more)" if len(breaches) > 3 else ""
        super().__init__(
            f"no safe order: after the {phase} step {shown}{more}. The other end of each pair "
            "must change in the same plan (select it, make it reachable, or release its hold)."
        )
        self.phase = phase
        self.breaches = tuple(breaches)


def _is_up(change: Change) -> bool:
    before, after = change.before, change.after
    if not isinstance(after, int):
        return True
    return not isinstance(before, int) or after > before


def phase_of(fleet: Fleet, device: str, change: Change) -> str:
    """Which phase a change belongs to, from its path and direction."""
    path = change.path
    role = fleet.devices[device].role
    if path.startswith(("firmware/", "system/nos_version")):
        return "firmware"
    if path.startswith("qos/dscp/") or path.endswith("/pfc_priorities"):
        return "qos-pairs"
    if path == "bgp/asn" or path.endswith(("/remote_as", "/address", "/ipv6_address")):
        return "bgp-pairs"
    if path.endswith("/inbound_filter") and None in (change.before, change.after):
        return "bgp-pairs"  # the neighbour comes or goes in this step
    if role is Role.gpu_node and path.endswith("/rdma_mtu"):
        return "rdma-raise" if _is_up(change) else "rdma-lower"
    if path.endswith("/mtu"):
        if role is Role.gpu_node:
            return "mtu-host"
        return "mtu-raise-switch" if _is_up(change) else "mtu-lower-switch"
    return "device-local"


def order_changes(fleet: Fleet, changes: Mapping[str, Sequence[Change]]) -> list[Step]:
    """Group every device's changes into the phase steps (empty phases dropped)."""
    by_phase: dict[str, dict[str, list[Change]]] = {phase: {} for phase in PHASES}
    for device, device_changes in changes.items():
        for change in device_changes:
            by_phase[phase_of(fleet, device, change)].setdefault(device, []).append(change)
    steps: list[Step] = []
    for phase in PHASES:
        if by_phase[phase]:
            frozen = {d: tuple(cs) for d, cs in sorted(by_phase[phase].items())}
            steps.append(Step(len(steps) + 1, phase, frozen))
    return steps


# Phases whose changes must agree with the other end of a link or session.
PAIR_PHASES = frozenset(
    {"qos-pairs", "bgp-pairs", "mtu-raise-switch", "mtu-host", "mtu-lower-switch"}
)


def _faces(change: Change, prefix: str) -> bool:
    """Whether a pairwise change faces the cable of the port under ``prefix``: it sits
    under that port, or is device-wide."""
    return change.path.startswith(prefix) or not change.path.startswith(("nics/", "interfaces/"))


def unprovable_links(fleet: Fleet, steps: Sequence[Step], unobserved: Collection[str]) -> list[str]:
    """Links where a pairwise change faces a device that could not be observed: no
    simulation can tell whether the two ends still agree. A change under another
    port's prefix does not face this link; a device-wide one (DSCP map, ASN,
    remote-as) faces every link."""
    found: list[str] = []
    if not unobserved:
        return found
    cabling = fleet.cabling
    for step in steps:
        if step.phase not in PAIR_PHASES:
            continue
        for device, changes in step.changes.items():
            host = fleet.devices[device].role is Role.gpu_node
            for port, end in cabling.ends(device).items():
                peer = cabling.end_device[end ^ 1]
                if peer not in unobserved:
                    continue
                prefix = f"{'nics' if host else 'interfaces'}/{port}/"
                if any(_faces(c, prefix) for c in changes):
                    found.append(
                        f"{Endpoint(device, port)} changes in the {step.phase} step but its peer "
                        f"{peer} could not be observed"
                    )
    return found


# Settings an invariant reads (reconciler.invariants), by where they sit: under one
# port (``interfaces/<port>/`` or ``nics/<port>/``) or device-wide.
_PORT_SETTINGS = ("/mtu", "/rdma_mtu", "/pfc_priorities", "/address", "/ipv6_address")
_DEVICE_SETTINGS = ("bgp/asn", "qos/dscp/", "bgp/neighbors/")


def ports_changed(changes: Iterable[Change]) -> frozenset[str] | None:
    """The ports whose invariants ``changes`` can move: ``None`` for all of the device's
    (a device-wide setting), empty when no invariant reads what changes."""
    ports: set[str] = set()
    for change in changes:
        path = change.path
        if path.startswith(_DEVICE_SETTINGS):
            return None
        head, _, rest = path.partition("/")
        if head in ("interfaces", "nics") and rest.endswith(_PORT_SETTINGS):
            ports.add(rest.rsplit("/", 1)[0])
    return frozenset(ports)


def faced(fleet: Fleet, changes: Mapping[str, Iterable[Change]]) -> set[str]:
    """The devices across the cables ``changes`` face: all the order proof reads of the
    fleet besides the changing devices (:func:`prove_order` the peers of the ports
    whose invariants move, :func:`unprovable_links` those of the ports a pairwise
    change sits under; a device-wide change faces every cable of its device)."""
    cabling = fleet.cabling
    found: set[str] = set()
    for device, device_changes in changes.items():
        mine = list(device_changes)
        ends = cabling.ends(device)
        moved = ports_changed(mine)
        facing = set(ends.values()) if moved is None else {ends[p] for p in moved if p in ends}
        pairs = [c for c in mine if phase_of(fleet, device, c) in PAIR_PHASES]
        if pairs:
            kind = "nics" if fleet.devices[device].role is Role.gpu_node else "interfaces"
            facing.update(
                end
                for port, end in ends.items()
                if any(_faces(c, f"{kind}/{port}/") for c in pairs)
            )
        found.update(cabling.end_device[end ^ 1] for end in facing)
    return found


def prove_order(fleet: Fleet, observed: Mapping[str, State], steps: Sequence[Step]) -> None:
    """Simulate the steps from ``observed``; raise UnsafePlan at the first new breach."""
    states: dict[str, State] = dict(observed)  # a device's state is replaced, never edited
    dscp: DscpMaps = {}
    for step in steps:
        touched: dict[str, frozenset[str] | None] = {}
        for device, device_changes in step.changes.items():
            ports = ports_changed(device_changes)
            if ports is None or ports:
                touched[device] = ports
        before = breaches_on_ports(fleet, states, touched, dscp)
        for device, device_changes in step.changes.items():
            states[device] = apply_changes(states.get(device, {}), device_changes)
        after = breaches_on_ports(fleet, states, touched, dscp)
        new = sorted(after - before)
        if new:
            raise UnsafePlan(step.phase, new)
