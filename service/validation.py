"""The fleet's policies, evaluated the way ``plumb validate`` does: the built-in
library plus the repo's own under ``policies/``; for every front door and for the
checks a write must pass (a saved plan is applied only while the intent passes)."""

from __future__ import annotations

from datetime import date

from intent.fleet import Fleet
from policies.engine import BUILTIN, Policy, PolicyReport, evaluate
from policies.repo import load_repo_policies


def builtin_policies() -> list[Policy]:
    """plumb's own policies: the library (:mod:`policies.builtin`) and the platform
    policies, whose knowledge is the drivers' (:mod:`reconciler.expressible`)."""
    from policies import builtin as _builtin  # noqa: F401  (registers the built-in policies)
    from reconciler.expressible import PLATFORM_POLICIES

    return sorted([*BUILTIN, *PLATFORM_POLICIES], key=lambda p: p.id)


def fleet_policies(fleet: Fleet, *, repo_policies: bool = True) -> list[Policy]:
    """The built-in policies and, unless told not to, the repo's own (every front door
    evaluates this list: validate, review, apply's checks, the controller)."""
    found = builtin_policies()
    if repo_policies:
        found += load_repo_policies(fleet.root)
    return found


def evaluate_fleet(
    fleet: Fleet, *, today: date | None = None, repo_policies: bool = True
) -> PolicyReport:
    """Every policy of ``fleet`` over its intent (waivers applied as of ``today``)."""
    return evaluate(
        fleet, fleet_policies(fleet, repo_policies=repo_policies), today=today or date.today()
    )
