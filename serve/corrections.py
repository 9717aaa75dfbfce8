"""Which chosen corrections are proved safe on their own (pure).

The controller corrects drift by planning only the chosen fields (intent for those,
the observed value for every other) and proving that plan's order again. When that
plan is refused (a pairwise change faces a device that could not be observed, or a
step would break an invariant), refusing every correction would let one bad corner
of the fleet hold drift everywhere else. So the chosen devices are cut into *units*:
devices joined by a cable whose two ends both have fields to correct stay together,
since a pairwise correction needs both ends in one plan. Each unit's plan is proved
on its own; the units that pass are proved again together, and added one at a time
if the whole does not pass. What is left out is *blocked*, per device, with the
refusal that blocked it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from intent.fleet import Fleet
from reconciler.plan import Plan, build_plan
from reconciler.render import DesiredFleet
from reconciler.settings import Owned, State

Chosen = Mapping[str, frozenset[str]]  # device -> paths to correct

UNOBSERVED_PEER = "unobserved_peer"
UNSAFE_ORDER = "unsafe_order"
NOT_TOGETHER = "unsafe_together"
INTENT_INVALID = "intent_invalid"
BLOCK_KINDS = (INTENT_INVALID, UNOBSERVED_PEER, UNSAFE_ORDER, NOT_TOGETHER)


@dataclass(frozen=True)
class Blocked:
    kind: str  # one of the constants above: the metric's label
    reason: str  # for people: the refusal, as the plan gave it


@dataclass(frozen=True)
class Corrections:
    plan: Plan | None  # the proved plan of every correction kept; None when none is
    correct: Chosen
    blocked: Mapping[str, Blocked]


def refusal_kind(refused: str) -> str:
    """The label of a plan's refusal: a peer that could not be observed, or an order
    that breaks an invariant (:func:`reconciler.plan.build_plan`'s two refusals)."""
    return UNOBSERVED_PEER if refused.startswith("no safe order can be proved") else UNSAFE_ORDER


def restrict_desired(
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    correct: Chosen,
) -> DesiredFleet:
    """Desired state of the devices in ``correct`` in which only the chosen fields
    differ from what was observed: a plan built from it changes exactly those fields,
    and its order is proved anew (every observed device is still its context)."""
    restricted: DesiredFleet = {}
    for device, keep in correct.items():
        state = observed.get(device) or {}
        restricted[device] = {
            path: owned if path in keep else Owned(state[path], owned.owner)
            for path, owned in desired.get(device, {}).items()
            if path in keep or path in state
        }
    return restricted


def units(fleet: Fleet, chosen: Chosen) -> list[tuple[str, ...]]:
    """The chosen devices grouped by cables whose two ends are both chosen."""
    seen: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in sorted(chosen):
        if start in seen:
            continue
        group, todo = {start}, [start]
        while todo:
            device = todo.pop()
            for pl in fleet.cabling.ports(device):
                peer = pl.peer.device
                if peer in chosen and peer not in group:
                    group.add(peer)
                    todo.append(peer)
        seen |= group
        found.append(tuple(sorted(group)))
    return found


def _plan_for(
    fleet: Fleet,
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    errors: Mapping[str, str],
    chosen: Chosen,
) -> Plan:
    return build_plan(fleet, restrict_desired(desired, observed, chosen), observed, errors=errors)


def _pick(chosen: Chosen, devices: Iterable[str]) -> dict[str, frozenset[str]]:
    return {d: chosen[d] for d in devices}


def prove_corrections(
    fleet: Fleet,
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    errors: Mapping[str, str],
    chosen: Chosen,
) -> Corrections:
    """The largest set of ``chosen`` units whose plan is proved, and why the rest is not."""
    if not chosen:
        return Corrections(None, {}, {})
    whole = _plan_for(fleet, desired, observed, errors, chosen)
    if whole.refused is None:
        return Corrections(whole, dict(chosen), {})
    blocked: dict[str, Blocked] = {}
    alone: list[tuple[str, ...]] = []
    for unit in units(fleet, chosen):
        own = _plan_for(fleet, desired, observed, errors, _pick(chosen, unit))
        if own.refused is None:
            alone.append(unit)
        else:
            for device in unit:
                blocked[device] = Blocked(refusal_kind(own.refused), own.refused)
    kept = {d for unit in alone for d in unit}
    plan = _plan_for(fleet, desired, observed, errors, _pick(chosen, kept)) if kept else None
    if plan is not None and plan.refused is not None:
        kept, plan = set(), None
        for unit in alone:  # each unit is safe alone: keep those that stay safe together
            trial = _plan_for(fleet, desired, observed, errors, _pick(chosen, kept | set(unit)))
            if trial.refused is None:
                kept, plan = kept | set(unit), trial
            else:
                for device in unit:
                    blocked[device] = Blocked(
                        NOT_TOGETHER, f"safe alone, not with the rest: {trial.refused}"
                    )
    return Corrections(plan, _pick(chosen, sorted(kept)), blocked)
