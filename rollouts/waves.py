"""Waves (pure): the canary, then waves that grow by ``growth`` within every cap, each
target in exactly one wave; deterministic for the spec's seed.

Sizes: after the canary, wave 1 holds ``waves.first_wave`` targets (default: the
canary's size x ``growth``) and every later wave ``growth`` x the size of the one
before (rounded up), never more than ``caps.per_wave`` or the fleet fraction in flight.

Filling a wave:

* without ``drain`` the targets are taken round-robin over racks (the first target of
  every rack, then the second...), in the spec's seeded order, skipping any that would
  break a cap;
* with ``drain``, draining any node of a gang stalls the whole gang for the wave, so
  the wave takes whole per-wave shares of gangs: first gangs already drained in an
  earlier wave, then new ones, most nodes per stalled GPU first; a gang's share is
  one class of its split into as few waves as its replica and rack caps force (see
  :mod:`rollouts.gangsplit`), so a gang whose replicas span racks is not drained more
  often than its own bound says; a gang joins only if
  the wave can still take as many of its nodes as an empty wave could (its replica
  and rack caps permitting), so no gang is drained for a sliver. Nodes in no gang
  (they stall nothing) fill what is left. A wave that no further gang fits whole is
  held below its size rather than stall another gang; the next wave grows from the
  size it actually had.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rollouts.canary import pick_canary
from rollouts.caps import EPSILON, Limits, PlanError, WaveLoad
from rollouts.gangsplit import colour_classes
from rollouts.spec import RolloutSpec
from rollouts.strata import Stratification
from rollouts.topology import Domain, FleetShape, Seat, seats


@dataclass(frozen=True)
class Wave:
    """One wave: ``number`` counts from 1 over canary and later waves alike."""

    number: int
    canary: bool
    targets: tuple[str, ...]
    size: int  # what growth and the caps allowed
    held: bool = False  # fewer than ``size`` targets although more remained (see above)


@dataclass(frozen=True)
class WavePlan:
    waves: tuple[Wave, ...]
    limits: Limits
    seed: int

    @property
    def canary(self) -> tuple[str, ...]:
        return tuple(t for w in self.waves if w.canary for t in w.targets)

    def wave_of(self, target: str) -> Wave:
        for wave in self.waves:
            if target in wave.targets:
                return wave
        raise KeyError(target)


def seeded_rank(targets: Sequence[str], seed: int) -> dict[str, int]:
    """A tie-break order that depends only on the target names and the seed."""
    order = sorted(targets)
    random.Random(seed).shuffle(order)
    return {name: i for i, name in enumerate(order)}


def plan_waves(fleet: FleetShape, spec: RolloutSpec, strata: Stratification) -> WavePlan:
    """Every target of ``strata`` in exactly one wave, canary first; PlanError if the caps
    cannot hold a canary of every stratum."""
    targets = strata.targets
    if not targets:
        raise PlanError("the rollout has no targets: nothing to plan", ("targets", "select"))
    limits = Limits.of(spec.caps, len(fleet.devices))
    seat_of = seats(fleet, targets)
    rank = seeded_rank(targets, spec.seed)
    canary = pick_canary(strata, spec.strata, limits, seat_of, rank, drain=spec.drains)
    waves = [Wave(i + 1, True, tuple(w), len(w)) for i, w in enumerate(canary)]
    done = {t for w in canary for t in w}
    remaining = [t for t in sorted(targets, key=rank.__getitem__) if t not in done]
    drained = {gang for t in done if (gang := seat_of[t].gang) is not None}
    previous = len(done)
    while remaining:
        if len(waves) == len(canary) and spec.waves.first_wave is not None:
            size = spec.waves.first_wave
        else:
            size = math.ceil(previous * spec.waves.growth - EPSILON)
        size = max(1, size if limits.wave is None else min(size, limits.wave))
        load = WaveLoad(limits, seat_of, size)
        if spec.drain:
            _take_gangs(load, remaining, seat_of, drained)
        _take_spread(load, [t for t in remaining if not spec.drain or seat_of[t].gang is None])
        if not load.members:  # cannot happen: an empty wave takes any one target
            raise PlanError(f"no target fits an empty wave ({', '.join(limits.describe())})")
        taken = set(load.members)
        remaining = [t for t in remaining if t not in taken]
        drained |= load.gangs
        held = len(load.members) < size and bool(remaining)
        waves.append(Wave(len(waves) + 1, False, tuple(sorted(load.members)), size, held))
        previous = len(load.members)
    return WavePlan(tuple(waves), limits, spec.seed)


def _take_spread(load: WaveLoad, candidates: Sequence[str]) -> None:
    """Add candidates round-robin over racks, in the given order, while caps allow."""
    position: Counter[str] = Counter()
    keyed = []
    for index, target in enumerate(candidates):
        rack = load.seat_of[target].domains[Domain.rack]
        keyed.append((position[rack], index, target))
        position[rack] += 1
    for _, _, target in sorted(keyed):
        if load.size is not None and len(load.members) >= load.size:
            return
        if load.fits(target):
            load.add(target)


def _share(load: WaveLoad, nodes: Sequence[str]) -> list[str]:
    """The nodes of one gang that ``load`` can still take: the largest of the gang's
    colour classes (:mod:`rollouts.gangsplit`, so the gang needs no more waves than its
    replica and rack caps force), then any other node that still fits."""
    trial = load.copy()
    classes = colour_classes(nodes, load.seat_of, load.limits)
    for node in [*classes[0], *nodes] if classes else []:
        if node not in trial.members and trial.fits(node):
            trial.add(node)
    return trial.members[len(load.members) :]


def _take_gangs(
    load: WaveLoad, remaining: Sequence[str], seat_of: Mapping[str, Seat], drained: set[str]
) -> None:
    """Fill ``load`` with whole per-wave shares of gangs (see the module docstring)."""
    by_gang: dict[str, list[str]] = {}
    for target in remaining:
        gang = seat_of[target].gang
        if gang is not None:
            by_gang.setdefault(gang, []).append(target)
    empty = WaveLoad(load.limits, seat_of, load.size)
    ideal = {gang: len(_share(empty, nodes)) for gang, nodes in by_gang.items()}
    while by_gang:
        best: tuple[tuple[bool, float, str], list[str]] | None = None
        for gang, nodes in by_gang.items():
            share = _share(load, nodes)
            if not share or (load.members and len(share) < ideal[gang]):
                continue
            gpus = seat_of[nodes[0]].gang_gpus
            score = (gang not in drained, -len(share) / gpus, nodes[0])
            if best is None or score < best[0]:
                best = (score, share)
        if best is None:
            return
        share = best[1]
        for node in share:
            load.add(node)
        gang = seat_of[share[0]].gang
        assert gang is not None
        del by_gang[gang]
