"""The Python API: the operations people script, on the same service floor the CLI
and the controller use (so a script obeys the same lease, freeze, fencing and audit).

>>> from service import api
>>> fleet = api.load("examples/orion")                     # InputError: file:line problems
>>> report = api.validate("examples/orion")                # PolicyReport (.exit_code())
>>> plan = api.plan("fleet")                               # observe and plan (no write)
>>> api.save_plan("fleet", plan, "plan.json")              # what `plumb plan -o` writes
>>> report = api.apply_saved("fleet", "plan.json")         # exactly that plan, or refused
>>> status = api.rollout_status("fleet")                   # the newest rollout, as JSON data

Errors are exceptions: :class:`~inventory.problems.InputError` for a fleet repo that
does not load (each problem at ``file:line:col``), :class:`~service.errors.ServiceError`
for an operation refused (``.message``; ``.code`` as the CLI's exit code). The CLI's
documented JSON documents are the return values where a document is returned.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from ci.gitrepo import repo_state
from ci.journalfmt import status_json
from ci.planfmt import plan_json
from intent.fleet import Fleet, load_fleet
from policies.engine import PolicyReport
from reconciler.loop import ApplyReport
from reconciler.plan import Plan
from service.applying import ApplyRequest, Unattended, apply_fleet, audit_plan
from service.context import fleet_context
from service.errors import ServiceError
from service.planning import make_plan
from service.savedplan import load_plan_file, write_plan_file
from service.validation import evaluate_fleet


def load(root: str | Path) -> Fleet:
    """The fleet repo at ``root``, loaded and checked by schema."""
    return load_fleet(Path(root))


def validate(
    root: str | Path, *, today: date | None = None, repo_policies: bool = True
) -> PolicyReport:
    """Every built-in policy (and the repo's own under ``policies/``) over the fleet."""
    return evaluate_fleet(load(root), today=today, repo_policies=repo_policies)


def plan(root: str | Path, *, select: str | None = None, concurrency: int = 16) -> Plan:
    """Observe ``select``'s devices (all when None) and plan them; audited, writes nothing."""
    with fleet_context(Path(root)) as context:
        targets = context.targets()
        try:
            result = make_plan(context, targets, select, concurrency=concurrency)
        finally:
            targets.close()
        audit_plan(context, result)
        return result


def save_plan(root: str | Path, the_plan: Plan, path: str | Path) -> None:
    """Write ``the_plan`` as ``plumb plan -o`` does (plumb.plan/v1, with its sha256)."""
    fleet = load(root)
    document = plan_json(the_plan, fleet=fleet.config.fleet, commit=repo_state(fleet.root).commit)
    document["fleet_root"] = str(fleet.root.resolve())
    write_plan_file(Path(path), document)


def apply_saved(
    root: str | Path,
    plan_file: str | Path,
    *,
    concurrency: int = 16,
    confirm_within: float | None = 120.0,
) -> ApplyReport:
    """Apply exactly the plan saved in ``plan_file``, under the lease; refused
    (:class:`ServiceError`) if any from-value moved, a field is pinned since, or its
    order can no longer be proved safe."""
    saved = load_plan_file(Path(plan_file))
    request = ApplyRequest(saved=saved, concurrency=concurrency, confirm_within=confirm_within)
    with fleet_context(Path(root)) as context:
        targets = context.targets()
        try:
            return apply_fleet(context, targets, request, Unattended())[1]
        finally:
            targets.close()


def rollout_status(root: str | Path, rollout: str | None = None) -> dict[str, Any]:
    """``plumb rollout status -f json`` of ``rollout`` (default: the newest)."""
    with fleet_context(Path(root)) as context:
        journal = context.db.journal
        if rollout is None:
            rows = journal.all()
            if not rows:
                raise ServiceError("no rollouts recorded yet", 1)
            rollout = rows[-1].id
        row = journal.get(rollout)
        if row is None:
            raise ServiceError(f"no rollout {rollout!r}")
        return status_json(
            row, journal.waves(rollout), journal.targets(rollout), journal.pins(rollout)
        )
