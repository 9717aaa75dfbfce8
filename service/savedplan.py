"""``plumb plan -o FILE`` and ``plumb apply FILE``: writing a plan, and checking a saved
one against the devices before it is applied exactly as it was made.

A saved plan is applied only while each of its to-values is what the current intent
renders for that field (an edited plan, even one whose hash was recomputed, is
refused), the intent passes every deny policy, no field it writes is pinned by a
rollback or owned by a rollout since, every device still holds each from-value the
plan was made against, and its order is still proved safe against the neighbours as
they are now; otherwise apply refuses, naming the first field that fails.
"""

from __future__ import annotations

import json
from pathlib import Path

from ci.planfile import PlanFileError, SavedPlan, first_moved, read_plan, short_hash
from ci.planfmt import dumps
from intent.fleet import Fleet
from reconciler.loop import observe_all
from reconciler.order import UnsafePlan, prove_order, unprovable_links
from reconciler.plan import Plan
from reconciler.render import render_desired
from reconciler.select import neighbours
from reconciler.settings import State
from reconciler.targets import TargetError, Targets
from service.context import FleetContext
from service.errors import ServiceError
from service.owned import Ownership
from service.validation import evaluate_fleet


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


def check_against_intent(label: str, plan: Plan, fleet: Fleet) -> None:
    """Refuse a saved plan any of whose to-values is not what the current intent
    renders for that field (an edited plan, or one the intent has moved away from),
    naming the first."""
    desired = render_desired(fleet, sorted(plan.devices))
    for step in plan.steps:
        for device in step.devices():
            wanted = desired.get(device, {})
            for change in step.changes[device]:
                owned = wanted.get(change.path)
                if owned is None:
                    raise ServiceError(
                        f"{label} writes {device} {change.path}, which the intent does not"
                        " set: make a new plan",
                        1,
                    )
                if type(owned.value) is not type(change.after) or owned.value != change.after:
                    raise ServiceError(
                        f"{label} writes {device} {change.path} = {change.after!r}; the intent"
                        f" says {owned.value!r} ({owned.owner}): make a new plan",
                        1,
                    )


def check_policies(label: str, fleet: Fleet) -> None:
    """Refuse while the intent the plan carries fails a deny policy, naming the first."""
    report = evaluate_fleet(fleet)
    for error in report.errors:
        raise ServiceError(f"{label}: policy {error.policy} failed to run: {error.error}", 1)
    denies = report.denies()
    if denies:
        first = denies[0]
        more = f" (and {len(denies) - 1} more: plumb validate)" if len(denies) > 1 else ""
        raise ServiceError(
            f"{label} is not applied while the intent fails policy {first.policy}:"
            f" {first.location}: {first.message}{more}",
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
    check_against_intent(label, plan, fleet)
    check_policies(label, fleet)
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
