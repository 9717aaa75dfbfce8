"""Review a change (pure): two loaded fleets, the policies, the observed states and the
change's rollout specs in; a :class:`~ci.review.model.Review` out.

The plan compares head's rendered intent with an observed state: the lab database or
a snapshot when the caller has one (:class:`ObservedSource` with ``states``), else the
base revision's rendered intent, as if the fleet ran exactly what base declares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from ci.outcome import ValidateOutcome
from ci.review.blast import applies_to, blast_radius, drain, touched_devices
from ci.review.intentdiff import intent_delta, rendered_delta
from ci.review.model import (
    BASE_SOURCE,
    Blocker,
    BlockerKind,
    ObservedSource,
    PolicyDelta,
    Review,
    RevisionInfo,
    RolloutReview,
)
from ci.review.observed import NOT_IN_LAB, NOT_IN_SNAPSHOT, plan_from_states, states_of_revision
from ci.review.policydiff import introduced_denies, policy_delta
from ci.review.rollout import review_rollouts
from intent.fleet import Fleet
from inventory.problems import Problem
from policies.engine import Policy, PolicyReport, evaluate
from reconciler.plan import Holds, Plan
from reconciler.render import DesiredFleet, render_desired
from rollouts.load import LoadedSpec


@dataclass(frozen=True)
class ReviewInputs:
    """Everything a review needs, already read from git, disk and the state database."""

    base: RevisionInfo
    head: RevisionInfo
    prefix: str
    files: tuple[str, ...]
    base_fleet: Fleet
    base_policies: Sequence[Policy]
    head_root: Path
    head_fleet: Fleet | None
    head_policies: Sequence[Policy] = ()
    head_problems: Sequence[Problem] = ()
    observed: ObservedSource = BASE_SOURCE
    specs: Sequence[LoadedSpec] = ()
    spec_problems: Sequence[Problem] = ()
    today: date = date(2000, 1, 1)
    holds: Holds = field(default_factory=dict)  # rollback pins of the working tree's state
    repo_specs: Sequence[LoadedSpec] = ()  # head's specs, for a change that adds none


def implied_plan(
    head: Fleet,
    head_desired: DesiredFleet,
    base_desired: DesiredFleet,
    observed: ObservedSource,
    holds: Holds | None = None,
) -> Plan:
    """Head's plan against the observed states, or against base's rendered intent;
    fields a rollback pinned are HELD, as ``plumb plan`` shows them."""
    if observed.states is None:
        states = states_of_revision(base_desired, head.devices)
        return plan_from_states(head, states, desired=head_desired, holds=holds)
    missing = NOT_IN_LAB if observed.kind == "lab" else NOT_IN_SNAPSHOT
    return plan_from_states(
        head, observed.states, missing=missing, desired=head_desired, holds=holds
    )


def blockers_of(
    delta: PolicyDelta,
    report: PolicyReport,
    plan: Plan,
    rollouts: Sequence[RolloutReview],
    spec_problems: Sequence[Problem],
) -> tuple[Blocker, ...]:
    """Why the change may not merge (empty: it may)."""
    found = []
    for policy_id, violations in introduced_denies(delta).items():
        first = violations[0]
        found.append(
            Blocker(
                BlockerKind.policy,
                f"{policy_id}: {len(violations)} new deny violation(s): {first.message}",
                first.location if first.location.line else None,
            )
        )
    found += [
        Blocker(BlockerKind.engine, f"{e.policy}: the policy raised {e.error}; not a pass")
        for e in report.errors
    ]
    if plan.refused:
        found.append(Blocker(BlockerKind.plan, f"the plan is refused: {plan.refused}"))
    found += [Blocker(BlockerKind.rollout, p.message, p.location) for p in spec_problems]
    found += [
        Blocker(BlockerKind.rollout, f"rollout {r.source}: {r.error}", r.error_at)
        for r in rollouts
        if r.error is not None and not r.is_default
    ]
    return tuple(found)


def _outline(
    inputs: ReviewInputs, fleet: str, base: ValidateOutcome, head: ValidateOutcome
) -> Review:
    return Review(
        fleet, inputs.base, inputs.head, inputs.prefix, inputs.files, inputs.observed, base, head
    )


def build_review(inputs: ReviewInputs) -> Review:
    base = inputs.base_fleet
    base_report = evaluate(base, inputs.base_policies, today=inputs.today)
    base_outcome = ValidateOutcome(base.root, base.config.fleet, (), base_report, inputs.prefix)
    head = inputs.head_fleet
    if head is None:
        problems = tuple(inputs.head_problems)
        name = base.config.fleet  # head's own name is unknown: it did not load
        head_outcome = ValidateOutcome(inputs.head_root, name, problems, None, inputs.prefix)
        return replace(
            _outline(inputs, base.config.fleet, base_outcome, head_outcome),
            blockers=tuple(Blocker(BlockerKind.input, p.message, p.location) for p in problems),
        )
    head_report = evaluate(head, inputs.head_policies, today=inputs.today)
    head_outcome = ValidateOutcome(head.root, head.config.fleet, (), head_report, inputs.prefix)
    intent = intent_delta(base, head)
    base_desired, head_desired = render_desired(base), render_desired(head)
    moved = rendered_delta(base_desired, head_desired)
    plan = implied_plan(head, head_desired, base_desired, inputs.observed, inputs.holds)
    drained = drain(head, intent.settings, moved)
    rollouts = review_rollouts(
        head, plan, moved, inputs.specs, drain=drained.required, repo_specs=inputs.repo_specs
    )
    delta = policy_delta(base_report, head_report)
    touched = touched_devices(head, intent.settings, moved, intent.devices)
    intent = replace(intent, settings=applies_to(head, intent.settings, moved))
    return replace(
        _outline(inputs, head.config.fleet, base_outcome, head_outcome),
        intent=intent,
        policies=delta,
        plan=plan,
        blast=blast_radius(head, touched, moved),
        drain=drained,
        rollouts=rollouts,
        blockers=blockers_of(delta, head_report, plan, rollouts, inputs.spec_problems),
        roles={name: device.role.value for name, device in head.devices.items()},
    )
