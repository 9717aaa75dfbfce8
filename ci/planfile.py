"""Saved plans (pure): the content hash of a plan, and a ``plumb.plan/v1`` document read
back into a :class:`~reconciler.plan.Plan` that ``plumb apply PLAN`` runs exactly.

The hash covers what an apply would do and nothing else: the fleet's name and, step by
step, each device's changes (path, from, to). Owners, counts and the intent commit are
commentary; two plans with the same hash write the same values in the same order from
the same starting values. ``plumb review`` prints the hash of the plan it reviewed, so
the plan a reviewer approved can be told apart from one made later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inventory.problems import Location
from reconciler.order import Step
from reconciler.plan import DevicePlan, Plan
from reconciler.settings import Change, Scalar

PLAN_SCHEMA = "plumb.plan/v1"
SHORT = 16
"""Hex digits of the hash shown in text (the JSON carries all 64)."""


class PlanFileError(Exception):
    """A saved plan that cannot be applied as it stands: unreadable, edited, or refused."""


def plan_hash(plan: Plan, *, fleet: str) -> str:
    """``sha256:<hex>`` over the fleet and every step's changes, canonically encoded."""
    content = {
        "fleet": fleet,
        "steps": [
            {
                "index": step.index,
                "phase": step.phase,
                "changes": {
                    device: [[c.path, c.before, c.after] for c in step.changes[device]]
                    for device in step.devices()
                },
            }
            for step in plan.steps
        ],
    }
    encoded = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(encoded.encode()).hexdigest()


def short_hash(digest: str) -> str:
    """The hash as text shows it: ``sha256:`` and its first 16 hex digits."""
    algorithm, _, hexdigits = digest.partition(":")
    return f"{algorithm}:{hexdigits[:SHORT]}"


@dataclass(frozen=True)
class SavedPlan:
    """A saved plan whose hash matched its content."""

    fleet: str
    digest: str
    intent_commit: str | None
    plan: Plan
    fleet_root: str | None = None  # where the fleet repo was when the plan was made


def _owner(text: object) -> Location | None:
    if not isinstance(text, str):
        return None
    file, _, rest = text.rpartition(":")
    file, _, line = file.rpartition(":")
    try:
        return Location(file, int(line), int(rest))
    except ValueError:
        return None


def _scalar(value: object, where: str) -> Scalar:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise PlanFileError(f"{where}: {value!r} is not a setting value")


def _need(doc: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind):
        raise PlanFileError(f"{where}: `{key}` is missing or not a {kind.__name__}")
    return value


def _steps(doc: Mapping[str, Any]) -> tuple[Step, ...]:
    """Rebuild the steps from each change's ``step`` index, in the document's order."""
    devices = _need(doc, "devices", dict, "plan")
    by_step: dict[int, dict[str, list[Change]]] = {}
    for name, entry in devices.items():
        changes = _need(entry, "changes", list, f"devices.{name}")
        for n, raw in enumerate(changes):
            where = f"devices.{name}.changes[{n}]"
            if not isinstance(raw, dict):
                raise PlanFileError(f"{where}: not an object")
            change = Change(
                _need(raw, "path", str, where),
                _scalar(raw.get("from"), f"{where}.from"),
                _scalar(raw.get("to"), f"{where}.to"),
                _owner(raw.get("owner")),
            )
            by_step.setdefault(_need(raw, "step", int, where), {}).setdefault(name, []).append(
                change
            )
    steps = []
    for n, raw_step in enumerate(_need(doc, "steps", list, "plan")):
        where = f"steps[{n}]"
        if not isinstance(raw_step, dict):
            raise PlanFileError(f"{where}: not an object")
        index = _need(raw_step, "index", int, where)
        phase = _need(raw_step, "phase", str, where)
        changes = by_step.pop(index, {})
        if sorted(changes) != sorted(_need(raw_step, "devices", list, where)):
            raise PlanFileError(f"{where}: its devices do not match the changes that name it")
        steps.append(Step(index, phase, {d: tuple(cs) for d, cs in sorted(changes.items())}))
    if by_step:
        raise PlanFileError(f"changes name step {min(by_step)}, which the plan does not have")
    return tuple(steps)


def read_plan(doc: object) -> SavedPlan:
    """The plan a ``plumb.plan/v1`` document holds, after checking its hash; refused,
    unknown and edited plans are errors (nothing of them may be applied)."""
    if not isinstance(doc, dict) or doc.get("schema") != PLAN_SCHEMA:
        raise PlanFileError(f"not a {PLAN_SCHEMA} document")
    fleet = _need(doc, "fleet", str, "plan")
    digest = _need(doc, "hash", str, "plan")
    if doc.get("refused"):
        raise PlanFileError(f"the plan was refused when it was made: {doc['refused']}")
    unknown = sorted(n for n, d in doc.get("devices", {}).items() if d.get("unknown"))
    if unknown:
        raise PlanFileError(f"the plan has unknown devices ({', '.join(unknown)})")
    steps = _steps(doc)
    changes: dict[str, list[Change]] = {}
    for step in steps:
        for device in step.devices():
            changes.setdefault(device, []).extend(step.changes[device])
    plan = Plan({n: DevicePlan(n, tuple(cs)) for n, cs in sorted(changes.items())}, steps)
    actual = plan_hash(plan, fleet=fleet)
    if actual != digest:
        raise PlanFileError(
            f"its hash {short_hash(digest)} does not match its content ({short_hash(actual)}):"
            " the file was edited after it was made"
        )
    commit = doc.get("intent_commit")
    root = doc.get("fleet_root")
    return SavedPlan(
        fleet,
        digest,
        commit if isinstance(commit, str) else None,
        plan,
        root if isinstance(root, str) else None,
    )


def first_moved(plan: Plan, observed: Mapping[str, Mapping[str, Scalar] | None]) -> str | None:
    """The first change, in apply order, whose device no longer holds its from-value (or
    could not be observed), described for the operator; None when every one still does."""
    for step in plan.steps:
        for device in step.devices():
            state = observed.get(device)
            if state is None:
                return f"{device} could not be observed"
            for change in step.changes[device]:
                now = state.get(change.path)
                if now != change.before:
                    return (
                        f"{device} {change.path} is now {now!r}; the plan was made when it was "
                        f"{change.before!r}"
                    )
    return None
