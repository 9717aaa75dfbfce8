"""Does the intent the controller follows pass validation? The same checks as
``plumb validate`` (the switch drivers' rules, every built-in and repo policy), run
once per pass: an intent that fails them is not a target to correct drift towards,
so the controller corrects nothing and reports why until a fixed commit arrives."""

from __future__ import annotations

from datetime import date

from intent.fleet import Fleet
from inventory.problems import InputError


def intent_problems(fleet: Fleet, *, today: date) -> list[str]:
    """Why the intent fails validation, each at its place (empty: it passes)."""
    from policies.engine import evaluate
    from reconciler.rulecheck import check_driver_rules
    from service.validation import fleet_policies

    problems = [str(p) for p in check_driver_rules(fleet)]
    if problems:
        return problems
    try:
        policies = fleet_policies(fleet)
    except InputError as exc:
        return [str(p) for p in exc.problems]
    report = evaluate(fleet, policies, today=today)
    found = [f"policy {e.policy} failed to run: {e.error}" for e in report.errors]
    found += [f"{v.location}: {v.policy}: {v.message}" for v in report.denies()]
    return found
