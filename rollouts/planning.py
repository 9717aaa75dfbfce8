"""A whole rollout plan (pure): from a reconcile :class:`~reconciler.plan.Plan` and a
spec to strata, waves, coverage, bake and price.

The targets are the devices ``targets.select`` matches that have at least one pending
change on the carried ``targets.paths``. Selected devices already at their intent are
listed, not planned; devices the plan could not observe are listed as unknown (their
current versions, and so their strata, are not known).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from inventory.gcpause import gc_paused
from reconciler.plan import Plan
from reconciler.select import select_devices
from reconciler.settings import Change
from rollouts.bake import BakeSizing, size_bake
from rollouts.caps import PlanError
from rollouts.detection import Coverage, coverage
from rollouts.price import Stall, cap_bound, lower_bound, total_stall, wave_stall
from rollouts.spec import RolloutSpec
from rollouts.strata import Stratification, carried, stratify
from rollouts.topology import Domain, FleetShape, seats
from rollouts.waves import Wave, WavePlan, plan_waves


class NothingToRollOut(PlanError):
    """No selected device has a change plumb can write on the carried paths; those
    that still differ from intent (``unreachable``, by name) never will by this rollout."""

    def __init__(
        self, message: str, field: tuple[str, ...] = (), unreachable: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, field)
        self.unreachable = unreachable


@dataclass(frozen=True)
class WaveReport:
    """One wave with where it lands, what it stalls and how long it bakes."""

    wave: Wave
    racks: tuple[str, ...]
    dp_replicas: tuple[str, ...]
    strata: tuple[str, ...]
    stall: Stall
    bake: BakeSizing


@dataclass(frozen=True)
class RolloutPlan:
    spec: RolloutSpec
    strata: Stratification
    waves: WavePlan
    reports: tuple[WaveReport, ...]
    coverage: tuple[Coverage, ...]
    total: Stall
    lower_bound: Stall
    cap_bound: Stall
    selected: tuple[str, ...] = ()
    at_intent: tuple[str, ...] = ()
    unknown: Mapping[str, str] = field(default_factory=dict)
    unreachable: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Selected devices that cannot reach intent on the rollout's paths: device -> the
    paths plumb cannot write there while the device holds another value."""

    @property
    def targets(self) -> tuple[str, ...]:
        return self.strata.targets

    def bake_minutes(self) -> float:
        return sum(r.bake.minutes for r in self.reports)


def rollout_changes(
    plan: Plan, selected: Sequence[str], paths: Sequence[str]
) -> dict[str, tuple[Change, ...]]:
    """The carried changes of every selected device that has any."""
    found: dict[str, tuple[Change, ...]] = {}
    for name in selected:
        device_plan = plan.devices.get(name)
        if device_plan is None:
            continue
        changes = carried(device_plan.changes, paths)
        if changes:
            found[name] = changes
    return found


def plan_rollout(fleet: FleetShape, spec: RolloutSpec, plan: Plan) -> RolloutPlan:
    """The rollout plan of ``spec`` for the pending changes in ``plan``."""
    selected = select_devices(fleet.devices.values(), spec.targets.select)
    if not selected:
        raise PlanError(
            f"targets.select {spec.targets.select!r} matches no device", ("targets", "select")
        )
    unknown = {n: e for n, e in plan.unknown().items() if n in set(selected)}
    changes = rollout_changes(plan, selected, spec.targets.paths)
    unreachable = rollout_unreachable(plan, selected, spec.targets.paths)
    at_intent = tuple(
        n for n in selected if n not in changes and n not in unknown and n not in unreachable
    )
    if not changes:
        stuck = (
            f"; {len(unreachable)} of them cannot reach intent (plumb cannot write "
            f"{', '.join(sorted({p for paths in unreachable.values() for p in paths})[:3])}"
            f" there: see `plumb plan`)"
            if unreachable
            else ""
        )
        raise NothingToRollOut(
            f"nothing to roll out: none of the {len(selected)} selected devices has a pending "
            "change" + (" on targets.paths" if spec.targets.paths else "") + stuck,
            ("targets",),
            tuple(sorted(unreachable)),
        )
    planned = plan_changes(fleet, spec, changes, selected, at_intent, unknown)
    return replace(planned, unreachable=unreachable)


def rollout_unreachable(
    plan: Plan, selected: Sequence[str], paths: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Selected devices holding a value of a rollout path that plumb cannot write."""
    found: dict[str, tuple[str, ...]] = {}
    for name in selected:
        device_plan = plan.devices.get(name)
        if device_plan is None:
            continue
        stuck = tuple(
            i.path
            for i in device_plan.inexpressible
            if i.unreachable() and (not paths or any(fnmatch.fnmatchcase(i.path, p) for p in paths))
        )
        if stuck:
            found[name] = stuck
    return found


@gc_paused()
def plan_changes(
    fleet: FleetShape,
    spec: RolloutSpec,
    changes: Mapping[str, Sequence[Change]],
    selected: Sequence[str] = (),
    at_intent: Sequence[str] = (),
    unknown: Mapping[str, str] | None = None,
) -> RolloutPlan:
    """The rollout plan of ``spec`` for per-target change lists (the pure core)."""
    strata = stratify(fleet, changes, spec.strata.extra_attributes)
    waves = plan_waves(fleet, spec, strata)
    seat_of = seats(fleet, strata.targets)
    stratum_of = {t: i for i, s in enumerate(strata.strata) for t in s.members}
    bakes: dict[int, BakeSizing] = {}  # a wave's bake depends on its size alone
    reports = []
    for wave in waves.waves:
        places = [seat_of[t].domains for t in wave.targets]
        count = len(wave.targets)
        if count not in bakes:
            bakes[count] = size_bake(spec.bake, count)
        met = sorted({stratum_of[t] for t in wave.targets if t in stratum_of})
        reports.append(
            WaveReport(
                wave=wave,
                racks=tuple(sorted({p[Domain.rack] for p in places})),
                dp_replicas=tuple(
                    sorted({p[Domain.dp_replica] for p in places if Domain.dp_replica in p})
                ),
                strata=tuple(strata.strata[i].id for i in met),
                stall=wave_stall(wave.targets, seat_of, spec.price, drain=spec.drains),
                bake=bakes[count],
            )
        )
    targets = strata.targets
    return RolloutPlan(
        spec=spec,
        strata=strata,
        waves=waves,
        reports=tuple(reports),
        coverage=coverage(strata, waves.canary),
        total=total_stall((w.targets for w in waves.waves), seat_of, spec.price, drain=spec.drains),
        lower_bound=lower_bound(targets, seat_of, spec.price, drain=spec.drains),
        cap_bound=cap_bound(targets, seat_of, waves.limits, spec.price, drain=spec.drains),
        selected=tuple(selected),
        at_intent=tuple(at_intent),
        unknown=dict(unknown or {}),
    )
