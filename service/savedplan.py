"""``plumb plan -o FILE`` and ``plumb apply FILE``: writing a plan, and checking a saved
one against the devices before it is applied exactly as it was made.

A saved plan is applied only while every device still holds each from-value the plan
was made against, no field it writes is pinned by a rollback since, and its order is
still proved safe against the neighbours as they are now; otherwise apply refuses,
naming the first field that moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from ci.planfile import PlanFileError, SavedPlan, first_moved, read_plan, short_hash
from ci.planfmt import dumps
from reconciler.loop import observe_all
from reconciler.order import UnsafePlan, prove_order, unprovable_links
from reconciler.plan import Plan
from reconciler.select import neighbours
from reconciler.settings import State
from reconciler.targets import TargetError, Targets
from service.context import FleetContext
from service.errors import ServiceError
from service.owned import Ownership


def write_plan_file(path: Path, document: dict[str, object]) -> None:
    """Write the plan document, or refuse naming the file."""
    try:
        path.write_text(dumps(document))
    except OSError as exc:
        raise ServiceError(f"cannot write the plan to {path}: {exc.strerror or exc}") from None


def load_plan_file(path: Path) -> SavedPlan:
    """Read and check a saved plan, or refuse saying what is wrong with it."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ServiceError(f"cannot read the plan {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ServiceError(f"the plan {path} is not JSON: {exc}") from None
    try:
        return read_plan(doc)
    except PlanFileError as exc:
        raise ServiceError(f"cannot apply the plan {path}: {exc}") from None


def check_ownership(label: str, plan: Plan, ownership: Ownership) -> None:
    """Refuse a saved plan that writes a field a rollout owns now (one writer per field)."""
    if not ownership:
        return
    for step in plan.steps:
        for device in step.devices():
            for change in step.changes[device]:
                owner = ownership.owner_text(device, change.path)
                if owner is not None:
                    raise ServiceError(
                        f"{label} writes {device} {change.path}, owned by {owner} since it was"
                        " made: the rollout writes it in its wave; make a new plan",
                        1,
                    )


def recheck(
    context: FleetContext, targets: Targets, saved: SavedPlan, ownership: Ownership
) -> Plan:
    """The saved plan, once the devices show it still applies as made and no field it
    writes is owned by a rollout (``ownership``); else refused (code 1)."""
    fleet = context.fleet
    name = fleet.config.fleet
    label = f"plan {short_hash(saved.digest)}"
    if saved.fleet != name:
        raise ServiceError(f"{label} is for fleet {saved.fleet!r}, this repo is {name!r}")
    plan = saved.plan
    missing = sorted(set(plan.devices) - set(fleet.devices))
    if missing:
        raise ServiceError(f"{label} names devices this fleet does not have: {', '.join(missing)}")
    held = context.db.journal.holds()
    for step in plan.steps:
        for device in step.devices():
            for change in step.changes[device]:
                if change.path in held.get(device, {}):
                    raise ServiceError(
                        f"{label} is stale: {device} {change.path} has been pinned by a "
                        "rollback since; make a new plan",
                        1,
                    )
    check_ownership(label, plan, ownership)
    everyone = sorted(plan.devices) + neighbours(fleet, plan.devices)
    try:
        observations = observe_all(targets, everyone)
    except TargetError as exc:
        raise ServiceError(str(exc)) from None
    observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
    moved = first_moved(plan, observed)
    if moved is not None:
        raise ServiceError(f"{label} is stale: {moved}; make a new plan", 1)
    blind = unprovable_links(fleet, plan.steps, {n for n, s in observed.items() if s is None})
    if blind:
        raise ServiceError(f"{label} cannot be proved safe now: {blind[0]}", 1)
    context_states = {n: s for n, s in observed.items() if s is not None}
    try:
        prove_order(fleet, context_states, plan.steps)
    except UnsafePlan as exc:
        raise ServiceError(f"{label} is no longer safe against its neighbours: {exc}", 1) from None
    return plan
