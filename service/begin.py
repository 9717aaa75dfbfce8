"""Begin a rollout of a committed spec under the fleet lease: observe the selected
devices, plan the waves, journal the rollout with its provenance. The one begin path
of ``plumb rollout start`` and of the controller (``plumb serve``) starting an
approved spec; nothing is written to a device here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.state.lease import LeaseToken
from rollouts.caps import PlanError
from rollouts.gitpin import Declaration
from rollouts.load import LoadedSpec
from rollouts.spec import DrainVia, RolloutSpec
from service.context import FleetContext
from service.owned import NO_OWNERSHIP
from service.planning import make_plan
from service.runtime import rollout_runtime

if TYPE_CHECKING:
    from rollouts.planning import RolloutPlan


class StartRefused(Exception):
    """The rollout cannot start; ``message`` says why (exit 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NothingToStart(Exception):
    """Every selected target already holds the change."""


@dataclass(frozen=True)
class Begun:
    rollout: str
    plan: RolloutPlan


def active_rollout(context: FleetContext) -> str | None:
    """The rollout that keeps another from starting (one at a time), if any."""
    for row in context.db.journal.all():
        if row.status.active:
            return f"rollout {row.id} is {row.status.value}"
    return None


def drain_preflight(spec: RolloutSpec, targets: Sequence[str]) -> list[str]:
    """What stops the spec's drainer from working here, before anything is drained
    (Slurm: configuration, controller, nodes); nothing for the other drainers."""
    if spec.drain is None or spec.drain.via is not DrainVia.slurm:
        return []
    from rollouts.slurm import preflight

    return [f"drain via slurm: {p}" for p in preflight(targets)]


def begin_rollout(
    context: FleetContext,
    loaded: LoadedSpec,
    token: LeaseToken,
    declaration: Declaration,
    *,
    select: str,
    warn: Callable[[str], None],
    concurrency: int = 16,
    accept_unjudgeable: str | None = None,
) -> Begun:
    """Plan ``loaded`` against the observed fleet and journal it; the caller holds the
    lease (``token``) and checked the selection and that no rollout is active; the
    plan observes ``concurrency`` devices at a time."""
    from rollouts.judgeable import unjudgeable
    from rollouts.planning import NothingToRollOut, plan_rollout, rollout_changes
    from rollouts.start import Provenance, begin

    fleet = context.fleet
    spec_rel = Path(loaded.doc.path).as_posix()
    targets = context.targets()
    try:
        # the rollout about to begin is the writer of its change (one active at a time)
        observed = make_plan(
            context, targets, select, concurrency=concurrency, ownership=NO_OWNERSHIP
        )
    finally:
        targets.close()
    if observed.refused:
        raise StartRefused(f"the reconcile plan is refused: {observed.refused}")
    try:
        result = plan_rollout(fleet, loaded.spec, observed)
    except NothingToRollOut as exc:
        if exc.unreachable:  # not at intent, and no rollout of this spec takes it there
            raise StartRefused(f"not starting: {loaded.doc.path}: {exc.message}") from None
        raise NothingToStart(f"{loaded.doc.path}: {exc.message}") from None
    except PlanError as exc:
        raise StartRefused(f"{loaded.where(*exc.field)}: {exc.message}") from None
    if result.unknown:
        raise StartRefused(
            f"not starting: {len(result.unknown)} target(s) could not be observed: "
            + ", ".join(sorted(result.unknown)[:5])
        )
    problems = drain_preflight(loaded.spec, result.targets)
    if problems:
        raise StartRefused("not starting: " + "; ".join(problems))
    sizes = [len(w.targets) for w in result.waves.waves]
    never = [
        f"{loaded.where('abort', 'metrics', found.metric, 'min_samples')}: {found.message()}"
        for found in unjudgeable(loaded.spec.abort, sizes)
    ]
    if never and accept_unjudgeable is None:
        raise StartRefused(
            "not starting: a wave can never be judged, so it would hold however long it"
            " bakes:\n  "
            + "\n  ".join(never)
            + "\nfix the spec (min_samples, caps, canary size), or start anyway with"
            " --accept-unjudgeable WHY (each such wave then needs `rollout resume"
            " --accept-held`)"
        )
    for line in never:
        warn(f"{line} (accepted: {accept_unjudgeable})")
    if never:
        context.audit(
            "decision",
            detail={
                "rollout_start": loaded.spec.name,
                "accepted_unjudgeable": never,
                "reason": accept_unjudgeable,
            },
        )
    changes = rollout_changes(observed, result.selected, loaded.spec.targets.paths)
    provenance = Provenance(
        spec_path=spec_rel,
        spec_text=(fleet.root / spec_rel).read_bytes(),
        spec_commit=declaration.spec_commit,
        intent_commit=declaration.intent_commit,
        actor=context.actor,
    )
    with rollout_runtime(context, token, list(result.targets)) as runtime:
        rollout = begin(runtime, result, changes, provenance)
    return Begun(rollout, result)
