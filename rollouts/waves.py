"""Waves (pure): the canary, then waves that grow by ``growth`` within every cap, each
target in exactly one wave; deterministic for the spec's seed.

With ``drain`` each canary wave also takes its *riders* (:mod:`rollouts.riders`):
targets that stall no gang its canaries do not already stall.

Sizes: after the canary, wave 1 holds ``waves.first_wave`` targets (default: the
canary's size x ``growth``) and every later wave ``growth`` x the size of the one
before (rounded up), never more than ``caps.per_wave`` or the fleet fraction in flight.

Filling a wave:

* without ``drain`` the targets are taken round-robin over racks (the first target of
  every rack, then the second...), in the spec's seeded order, skipping any that would
  break a cap;
* with ``drain``, draining any node of a gang stalls the whole gang for the wave, and
  draining a switch stalls every gang behind it, so the wave is filled by what it
  newly stalls: first whatever stalls nothing new (the rest of a gang the wave already
  stalls, a switch whose gangs it already stalls: two ToRs that share no host but
  serve one gang drain it once), then whole per-wave shares of gangs and single
  switches, those of gangs already drained in an earlier wave first, then new ones,
  most targets per newly stalled GPU first; a gang's share is
  one class of its split into as few waves as its replica and rack caps force (see
  :mod:`rollouts.gangsplit`), so a gang whose replicas span racks is not drained more
  often than its own bound says; a gang joins only if
  the wave can still take as many of its nodes as an empty wave could (its replica
  and rack caps permitting), so no gang is drained for a sliver. Targets that stall
  nothing (nodes in no gang, switches with no gang behind them) fill what is left,
  round-robin over racks. A wave that no further gang fits whole is
  held below its size rather than stall another gang; the next wave grows from the
  size it actually had.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rollouts.canary import pick_canary
from rollouts.caps import EPSILON, Limits, PlanError, WaveLoad
from rollouts.riders import pick_riders
from rollouts.spec import RolloutSpec
from rollouts.strata import Stratification
from rollouts.topology import FleetShape, seats
from rollouts.wavepools import GangPool, RackQueues, SwitchPool, gang_share


@dataclass(frozen=True)
class Wave:
    """One wave: ``number`` counts from 1 over canary and later waves alike."""

    number: int
    canary: bool
    targets: tuple[str, ...]
    size: int  # what growth and the caps allowed
    held: bool = False  # fewer than ``size`` targets although more remained (see above)
    riders: tuple[str, ...] = ()  # of a canary wave: targets beside its canaries


@dataclass(frozen=True)
class WavePlan:
    waves: tuple[Wave, ...]
    limits: Limits
    seed: int

    @property
    def canary(self) -> tuple[str, ...]:
        """Every target of the canary waves, riders included."""
        return tuple(t for w in self.waves if w.canary for t in w.targets)

    @property
    def riders(self) -> tuple[str, ...]:
        """The canary waves' riders: targets beside the canaries that stall nothing more."""
        return tuple(t for w in self.waves if w.canary for t in w.riders)

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
    done = {t for w in canary for t in w}
    ordered = [t for t in sorted(targets, key=rank.__getitem__) if t not in done]
    waves: list[Wave] = []
    for picked in canary:
        riders = []
        if spec.drains:
            riders = sorted(pick_riders(picked, ordered, seat_of, limits, spec.waves.growth))
            done.update(riders)
            ordered = [t for t in ordered if t not in done]
        members = tuple(sorted([*picked, *riders]))
        waves.append(Wave(len(waves) + 1, True, members, len(members), riders=tuple(riders)))
    gangs = GangPool(ordered if spec.drain else (), seat_of, limits)
    switches = SwitchPool(ordered if spec.drain else (), seat_of)
    spread = RackQueues([t for t in ordered if not spec.drain or not seat_of[t].stalls], seat_of)
    left = len(ordered)
    drained = {gang for t in done for gang in seat_of[t].stalls}
    previous = len(done)
    while left:
        if len(waves) == len(canary) and spec.waves.first_wave is not None:
            size = spec.waves.first_wave
        else:
            size = math.ceil(previous * spec.waves.growth - EPSILON)
        size = max(1, size if limits.wave is None else min(size, limits.wave))
        load = WaveLoad(limits, seat_of, size)
        if spec.drain:
            _take_stalling(load, gangs, switches, drained)
        _take_spread(load, spread)
        if not load.members:  # cannot happen: an empty wave takes any one target
            raise PlanError(f"no target fits an empty wave ({', '.join(limits.describe())})")
        gangs.remove(load.members)
        switches.remove(load.members)
        spread.remove(load.members)
        left -= len(load.members)
        drained |= {gang for gang, count in load.stalled.items() if count}
        held = len(load.members) < size and left > 0
        waves.append(Wave(len(waves) + 1, False, tuple(sorted(load.members)), size, held))
        previous = len(load.members)
    return WavePlan(tuple(waves), limits, spec.seed)


def _room(load: WaveLoad) -> int:
    """How many more targets ``load`` may take before its size or per-wave cap."""
    caps = [c for c in (load.size, load.limits.wave) if c is not None]
    return min(caps) - len(load.members) if caps else len(load.seat_of)


def _take_spread(load: WaveLoad, spread: RackQueues) -> None:
    """Add candidates round-robin over racks, in rank order, while caps allow."""
    for target in spread.round_robin():
        if _room(load) <= 0:
            return
        if load.fits(target):
            load.add(target)


Score = tuple[bool, bool, float, str]


def _score(
    load: WaveLoad, stalls: Mapping[str, int], size: int, name: str, drained: set[str]
) -> Score:
    """Rank of one candidate unit (lower first): stalling nothing new, then gangs
    already drained in an earlier wave, then most targets per newly stalled GPU.
    ``stalls``: the gangs the unit stalls, with their GPUs."""
    new = [g for g in stalls if not load.stalled[g]]
    if not new:
        return (False, False, -float(size), name)
    gpus = sum(stalls[g] for g in new)
    return (True, any(g not in drained for g in new), -size / max(gpus, 1), name)


def _take_stalling(
    load: WaveLoad, gangs: GangPool, switches: SwitchPool, drained: set[str]
) -> None:
    """Fill ``load`` with what stalls gangs, cheapest first (see the module docstring).

    A gang's share of an empty wave (its *ideal*) is kept between waves until the gang
    or the wave size changes; a gang the wave does not stall yet joins only with its
    whole ideal, and a gang it already stalls with whatever of it still fits."""
    taken: set[str] = set()
    while (room := _room(load)) > 0:
        best: tuple[Score, list[str], str | None] | None = None
        for gang, nodes in gangs.nodes.items():
            if gang in taken:
                continue
            free = bool(load.stalled[gang])
            ideal = gangs.ideal(gang, load.size)
            if not load.members:
                share = ideal  # an empty wave is the one the ideal was taken in
            elif not free and len(ideal) > room:
                continue
            else:
                share = gang_share(load, nodes, gangs.classes(gang))
                if not free and len(share) < len(ideal):
                    continue
            if not share:
                continue
            score = _score(load, load.seat_of[nodes[0]].stalls, len(share), nodes[0], drained)
            if best is None or score < best[0]:
                best = (score, share, gang)
        for switch in switches:
            if switch in load.members or not load.fits(switch):
                continue
            score = _score(load, load.seat_of[switch].stalls, 1, switch, drained)
            if best is not None and score >= best[0]:
                continue
            if score[0] and load.members:  # it stalls a gang anew: not for a sliver
                group = switches.group(load, switch)
                if len(group) < switches.ideal(switch, load.limits, load.size):
                    continue
            best = (score, [switch], None)
        if best is None:
            return
        for target in best[1]:
            load.add(target)
        if best[2] is not None:
            taken.add(best[2])
