"""The rollout a change needs (pure): planned from each rollout spec the change adds or
edits, else from the repo's specs that carry what it moves, or else from the default
spec below, against the change's reconcile plan.

A spec from the change is planned exactly as ``plumb rollout plan`` plans it (its
``targets`` say what it carries). The default spec carries the plan's changes of the
settings the change moves, on the devices it moves them on:

* targets: every device the change moves; strata: automatic, one canary per stratum,
  the canary spread over up to 4 waves;
* waves grow x2; caps: per_wave one eighth of the fleet's devices (at least 2),
  per_rack 2, per_dp_replica 1;
* bake: a fixed hour per wave (without a spec there is no declared failure rate
  to size it from); price and abort conditions: the spec defaults (docs/rollouts.md);
* drain: true when the change forces a drain (lossless-class settings or GPU node
  firmware, see :mod:`ci.review.blast`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from ci.review.model import RolloutReview
from intent.fleet import Fleet
from reconciler.plan import Plan
from reconciler.select import SelectError, select_devices
from reconciler.settings import Change
from rollouts.caps import PlanError
from rollouts.load import LoadedSpec
from rollouts.planning import NothingToRollOut, plan_changes, plan_rollout
from rollouts.spec import Bake, BakeMode, Caps, RolloutSpec, Strata, Targets, Waves

DEFAULT_SOURCE = "default"
DEFAULT_NAME = "review-default"


def default_spec(fleet: Fleet, *, drain: bool) -> RolloutSpec:
    """The spec a change without one of its own is planned with (module docstring)."""
    return RolloutSpec(
        name=DEFAULT_NAME,
        description="plumb review's default rollout for a change that declares none",
        targets=Targets(select="*"),
        strata=Strata(canary_per_stratum=1, canary_waves=4),
        waves=Waves(growth=2.0),
        bake=Bake(mode=BakeMode.fixed, fixed_minutes=60.0),
        caps=Caps(per_wave=max(2, math.ceil(len(fleet.devices) / 8)), per_rack=2, per_dp_replica=1),
        drain=drain,
    )


def carried_changes(
    plan: Plan, moved: Mapping[str, Sequence[Change]]
) -> dict[str, tuple[Change, ...]]:
    """The plan's changes of the (device, setting) pairs the change moves."""
    found: dict[str, tuple[Change, ...]] = {}
    for name, changes in moved.items():
        device_plan = plan.devices.get(name)
        if device_plan is None:
            continue
        paths = {c.path for c in changes}
        carried = tuple(c for c in device_plan.changes if c.path in paths)
        if carried:
            found[name] = carried
    return found


def review_default(
    fleet: Fleet, plan: Plan, moved: Mapping[str, Sequence[Change]], *, drain: bool
) -> RolloutReview:
    spec = default_spec(fleet, drain=drain)
    changes = carried_changes(plan, moved)
    if not changes:
        return RolloutReview(
            DEFAULT_SOURCE, spec, note="nothing to roll out: the plan changes no moved setting"
        )
    unknown = {n: e for n, e in plan.unknown().items() if n in moved}
    at_intent = tuple(n for n in moved if n not in changes and n not in unknown)
    try:
        result = plan_changes(fleet, spec, changes, tuple(moved), at_intent, unknown)
    except PlanError as exc:
        return RolloutReview(DEFAULT_SOURCE, spec, error=exc.message)
    return RolloutReview(DEFAULT_SOURCE, spec, plan=result)


def review_spec(fleet: Fleet, plan: Plan, loaded: LoadedSpec) -> RolloutReview:
    """A spec of the change, planned as ``plumb rollout plan`` would."""
    source = loaded.doc.path
    try:
        result = plan_rollout(fleet, loaded.spec, plan)
    except NothingToRollOut as exc:
        return RolloutReview(source, loaded.spec, note=exc.message)
    except PlanError as exc:
        return RolloutReview(
            source, loaded.spec, error=exc.message, error_at=loaded.where(*exc.field)
        )
    return RolloutReview(source, loaded.spec, plan=result)


def review_repo_spec(
    fleet: Fleet, plan: Plan, moved: Mapping[str, Sequence[Change]], loaded: LoadedSpec
) -> RolloutReview | None:
    """A spec already in the repo, planned over what the change moves on the devices it
    selects and the paths it carries; None when it carries none of the change."""
    spec = loaded.spec
    try:
        selected = set(select_devices(fleet.devices.values(), spec.targets.select))
    except SelectError:
        return None
    globs = spec.targets.paths
    changes = {
        name: kept
        for name, carried in carried_changes(plan, moved).items()
        if name in selected
        and (
            kept := tuple(
                c for c in carried if not globs or any(fnmatchcase(c.path, g) for g in globs)
            )
        )
    }
    if not changes:
        return None
    unknown = {n: e for n, e in plan.unknown().items() if n in moved and n in selected}
    chosen = tuple(n for n in moved if n in selected)
    at_intent = tuple(n for n in chosen if n not in changes and n not in unknown)
    try:
        result = plan_changes(fleet, spec, changes, chosen, at_intent, unknown)
    except PlanError as exc:
        return RolloutReview(
            loaded.doc.path, spec, error=exc.message, error_at=loaded.where(*exc.field)
        )
    return RolloutReview(loaded.doc.path, spec, plan=result)


def review_rollouts(
    fleet: Fleet,
    plan: Plan,
    moved: Mapping[str, Sequence[Change]],
    specs: Sequence[LoadedSpec],
    *,
    drain: bool,
    repo_specs: Sequence[LoadedSpec] = (),
) -> tuple[RolloutReview, ...]:
    """One review per spec of the change; for a change that brings none, each spec of
    the repo that carries some of what it moves (as the operator would run it); the
    default spec's only when no spec of the repo selects the change."""
    if specs:
        return tuple(review_spec(fleet, plan, loaded) for loaded in specs)
    carrying = [
        review
        for review in (review_repo_spec(fleet, plan, moved, loaded) for loaded in repo_specs)
        if review is not None
    ]
    if carrying:
        return tuple(carrying)
    return (review_default(fleet, plan, moved, drain=drain),)
