"""Build a plan (pure): desired vs observed for the fields plumb owns, per device, in a
proven-safe order.

Level-triggered: the plan is a function of the whole desired state and the whole
observed state, nothing else. For each device it records the changes (field, from,
to, owner), the fields it observed but does not own (reported, never written), the
fields another writer owns (conflicts: reported, never fought over), changes an
active or approved rollout owns (claimed: the rollout writes them in its waves),
fields held by a rollback pin, fields the device's platform cannot express (refused with the
platform's reason, never sent: :mod:`reconciler.capabilities`), and devices that could
not be observed (unknown: nothing planned).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from intent.fleet import Fleet
from intent.models import ExternalOwner
from inventory.gcpause import gc_paused
from inventory.problems import Location
from reconciler.capabilities import DESIGN_INPUTS, RULES, running_platform
from reconciler.order import Step, UnsafePlan, order_changes, prove_order, unprovable_links
from reconciler.render import DesiredFleet
from reconciler.settings import Change, Owned, Scalar, State, diff


@dataclass(frozen=True)
class Conflict:
    device: str
    path: str
    owner: str
    intended: Scalar
    observed: Scalar


@dataclass(frozen=True)
class Held:
    device: str
    path: str
    value: Scalar
    reason: str


@dataclass(frozen=True)
class Claimed:
    """A field an active or approved rollout owns: its change is the rollout's to
    write, in its wave; a one-shot apply reports it and never writes it."""

    device: str
    path: str
    owner: str  # e.g. "rollout qos-1 (wave 2)"
    intended: Scalar
    observed: Scalar


OwnerOf = Callable[[str, str], str | None]
"""(device, path) -> who owns that field's change, or None: plumb's plan writes it."""


@dataclass(frozen=True)
class Inexpressible:
    """An intended value the device's platform has no way to express: never sent.

    A *design input* (``design``) is a value no device of the platform holds (a PFC
    pause threshold EOS derives itself): it only feeds policies, and is never drift.
    Any other is a value the device does hold but plumb cannot write there (a HwSKU
    the config updater refuses, thresholds in units plumb cannot compare): while the
    ``observed`` value differs from the intended one, the device **cannot reach its
    intent** (:meth:`unreachable`), and nothing may report it converged."""

    device: str
    path: str
    value: Scalar
    owner: Location
    reason: str
    observed: Scalar | None = None
    design: bool = False

    def unreachable(self) -> bool:
        return not self.design and self.observed != self.value


@dataclass(frozen=True)
class DevicePlan:
    device: str
    changes: tuple[Change, ...] = ()
    unmanaged: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    held: tuple[Held, ...] = ()
    unknown: str | None = None
    inexpressible: tuple[Inexpressible, ...] = ()
    claimed: tuple[Claimed, ...] = ()


@dataclass(frozen=True)
class Plan:
    devices: Mapping[str, DevicePlan]
    steps: tuple[Step, ...] = ()
    refused: str | None = None
    notes: tuple[str, ...] = field(default=())

    def changes(self) -> dict[str, tuple[Change, ...]]:
        return {name: dp.changes for name, dp in self.devices.items() if dp.changes}

    def change_count(self) -> int:
        return sum(len(dp.changes) for dp in self.devices.values())

    def claimed(self) -> list[Claimed]:
        return [c for dp in self.devices.values() for c in dp.claimed]

    def inexpressible(self) -> list[Inexpressible]:
        return [i for dp in self.devices.values() for i in dp.inexpressible]

    def unreachable(self) -> list[Inexpressible]:
        """Intended values that differ from the device's and that plumb cannot write:
        the fleet is not at its intent while any is left (see :class:`Inexpressible`)."""
        return [i for i in self.inexpressible() if i.unreachable()]

    def unknown(self) -> dict[str, str]:
        return {n: dp.unknown for n, dp in self.devices.items() if dp.unknown is not None}

    def is_empty(self) -> bool:
        """No change pending and nothing unknown: nothing left for plumb to write (the
        fleet is at its intent unless :meth:`unreachable` says otherwise)."""
        return self.change_count() == 0 and not self.unknown()

    def at_intent(self) -> bool:
        """Nothing to write, nothing unknown, and nothing plumb cannot write that differs."""
        return self.is_empty() and not self.unreachable()


Holds = Mapping[str, Mapping[str, tuple[Scalar, str]]]
"""device -> path -> (pinned value, reason): fields a rollback pinned."""


def external_owner(claims: Sequence[ExternalOwner], device: str, path: str) -> str | None:
    for claim in claims:
        if any(fnmatch.fnmatchcase(device, d) for d in claim.devices) and any(
            fnmatch.fnmatchcase(path, p) for p in claim.paths
        ):
            return claim.owner
    return None


def plan_device(
    device: str,
    desired: Mapping[str, Owned],
    observed: State,
    claims: Sequence[ExternalOwner],
    holds: Mapping[str, tuple[Scalar, str]],
    platform: str = "",
    owner_of: OwnerOf | None = None,
) -> DevicePlan:
    """Diff one device; split off conflicts, held fields, what its platform cannot
    express, and changes a rollout owns (``owner_of``)."""
    conflicts: list[Conflict] = []
    held: list[Held] = []
    platform = running_platform(platform, observed)
    prepare = RULES.get(platform)
    rule = None if prepare is None else prepare(observed)
    design = DESIGN_INPUTS.get(platform, frozenset())
    reasons: dict[str, str] = (
        {}
        if rule is None
        else {path: reason for path in desired if (reason := rule(path)) is not None}
    )
    refused = [
        Inexpressible(
            device,
            path,
            desired[path].value,
            desired[path].owner,
            reason,
            observed.get(path),
            path in design,
        )
        for path, reason in reasons.items()
    ]
    if not claims and not holds:
        # None claimed or held (every device but the few a rollback pinned): all that
        # its platform expresses is wanted.
        wanted = (
            {p: o for p, o in desired.items() if p not in reasons} if reasons else dict(desired)
        )
    else:
        wanted = {}
        for path, owned in desired.items():
            if path in reasons:
                continue
            owner = external_owner(claims, device, path) if claims else None
            if owner is not None:
                if observed.get(path) != owned.value:
                    conflicts.append(Conflict(device, path, owner, owned.value, observed.get(path)))
                continue
            if path in holds:
                value, reason = holds[path]
                held.append(Held(device, path, value, reason))
                wanted[path] = Owned(value, owned.owner)
                continue
            wanted[path] = owned
    unmanaged = tuple(sorted(observed.keys() - desired.keys()))
    changes = diff(wanted, observed)
    claimed: list[Claimed] = []
    if owner_of is not None and changes:
        mine = []
        for change in changes:
            owner = owner_of(device, change.path)
            if owner is None:
                mine.append(change)
            else:
                claimed.append(Claimed(device, change.path, owner, change.after, change.before))
        changes = mine
    return DevicePlan(
        device,
        tuple(changes),
        unmanaged,
        tuple(conflicts),
        tuple(held),
        inexpressible=tuple(refused),
        claimed=tuple(claimed),
    )


@gc_paused()
def build_plan(
    fleet: Fleet,
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    *,
    errors: Mapping[str, str] | None = None,
    holds: Holds | None = None,
    owner_of: OwnerOf | None = None,
) -> Plan:
    """The plan for every device in ``desired``; devices whose observation failed are
    ``unknown`` and get no changes. The step order is proved safe or the plan refused,
    also when a pairwise change faces a device whose observation failed (``None``).

    ``observed`` may hold devices outside ``desired`` (neighbours of a selection): they
    take part in the safety proof but are not planned. Changes ``owner_of`` names an
    owner for are reported as claimed and left out of the steps."""
    plans = plan_devices(fleet, desired, observed, errors=errors, holds=holds, owner_of=owner_of)
    return ordered_plan(fleet, plans, observed)


@gc_paused()
def plan_devices(
    fleet: Fleet,
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    *,
    errors: Mapping[str, str] | None = None,
    holds: Holds | None = None,
    owner_of: OwnerOf | None = None,
) -> dict[str, DevicePlan]:
    """:func:`build_plan`'s first half: each device's plan, not yet ordered."""
    errors = errors or {}
    holds = holds or {}
    claims = fleet.config.ownership
    plans: dict[str, DevicePlan] = {}
    for device, wanted in desired.items():
        state = observed.get(device)
        if state is None:
            plans[device] = DevicePlan(device, unknown=errors.get(device, "not observed"))
            continue
        known = fleet.devices.get(device)
        platform = known.platform.value if known is not None else ""
        plans[device] = plan_device(
            device, wanted, state, claims, holds.get(device, {}), platform, owner_of
        )
    return plans


@gc_paused()
def ordered_plan(
    fleet: Fleet, plans: Mapping[str, DevicePlan], observed: Mapping[str, State | None]
) -> Plan:
    """:func:`build_plan`'s second half: the devices' changes in steps whose order is
    proved safe against ``observed``, or the plan refused. Of the devices outside
    ``plans`` the proof reads only those its changes face
    (:func:`reconciler.order.faced`)."""
    changes = {n: dp.changes for n, dp in plans.items() if dp.changes}
    steps = order_changes(fleet, changes)
    unobserved = {n for n, dp in plans.items() if dp.unknown is not None}
    blind = unprovable_links(
        fleet, steps, unobserved | {n for n, s in observed.items() if s is None}
    )
    if blind:
        more = f" (and {len(blind) - 1} more)" if len(blind) > 1 else ""
        return Plan(
            plans,
            tuple(steps),
            f"no safe order can be proved: {blind[0]}{more}. Observe it again once it is "
            "reachable, or leave the changes that face it out of the plan.",
        )
    context = {n: s for n, s in observed.items() if s is not None}
    try:
        prove_order(fleet, context, steps)
    except UnsafePlan as exc:
        return Plan(plans, tuple(steps), str(exc))
    return Plan(plans, tuple(steps))
