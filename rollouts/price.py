"""The price of a rollout in stalled work (pure).

With ``drain: true`` and no spares, draining any node of a training gang stops the
whole gang for the drain time. A wave therefore stalls

    sum over the gangs it touches of (gang GPUs x drain_minutes / 60)   GPU-hours,

whatever number of the gang's nodes it drains; nodes in no gang stall nothing. A
switch drained stalls every gang with a node cabled to it (the GPUs behind it). Dollars
are GPU-hours x ``usd_per_gpu_hour``. Two bounds stand beside the plan's total:

* ``lower_bound``: every touched gang drained exactly once (all its targets in one wave);
* ``cap_bound``: every touched gang drained in as few waves as the caps allow on their
  own. A gang's *targets* are those whose drain stalls it (its nodes, and the switches
  with one of its nodes behind them); they need at least

  - ``ceil(targets in a domain / that domain's cap)`` waves for each of its DP
    replicas, racks, power and cooling domains, ``ceil(targets / per_wave)``, and
    ``ceil(targets of a role / caps.per_role of that role)``;
  - with ``never_both_tors``, as many waves as the most of its target switches cabled
    to one host: switches that share a host never share a wave, so each such switch
    drains the gang in a wave of its own.

Both are true lower bounds of any plan within the caps; the canary and the growth of
the waves can only add to them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rollouts.caps import Limits
from rollouts.spec import Price
from rollouts.topology import Seat


@dataclass(frozen=True)
class Stall:
    """Work stalled: which gangs (with how many drains each), GPU-hours and dollars."""

    drains: Mapping[str, int]
    gpu_hours: float
    usd: float

    @property
    def gangs(self) -> tuple[str, ...]:
        return tuple(sorted(self.drains))


NOTHING = Stall({}, 0.0, 0.0)


def _stall(drains: Mapping[str, int], gpus: Mapping[str, int], price: Price) -> Stall:
    hours = sum(gpus[g] * n for g, n in drains.items()) * price.drain_minutes / 60.0
    return Stall(dict(sorted(drains.items())), hours, hours * price.usd_per_gpu_hour)


def _gang_gpus(seat_of: Mapping[str, Seat], targets: Iterable[str]) -> dict[str, int]:
    """The gangs draining ``targets`` stops: a node's own, and every gang behind a switch."""
    return {g: n for t in targets for g, n in seat_of[t].stalls.items()}


def wave_stall(
    targets: Iterable[str], seat_of: Mapping[str, Seat], price: Price, *, drain: bool
) -> Stall:
    """What one wave stalls: each gang it touches, once."""
    if not drain:
        return NOTHING
    gpus = _gang_gpus(seat_of, targets)
    return _stall(dict.fromkeys(gpus, 1), gpus, price)


def total_stall(
    waves: Iterable[Iterable[str]], seat_of: Mapping[str, Seat], price: Price, *, drain: bool
) -> Stall:
    """What the whole plan stalls: each gang once per wave that touches it."""
    if not drain:
        return NOTHING
    drains: Counter[str] = Counter()
    gpus: dict[str, int] = {}
    for wave in waves:
        wave_gpus = _gang_gpus(seat_of, wave)
        drains.update(wave_gpus.keys())
        gpus.update(wave_gpus)
    return _stall(drains, gpus, price)


def lower_bound(
    targets: Iterable[str], seat_of: Mapping[str, Seat], price: Price, *, drain: bool
) -> Stall:
    """Every touched gang drained once."""
    return wave_stall(targets, seat_of, price, drain=drain)


def fewest_waves(nodes: Iterable[str], seat_of: Mapping[str, Seat], limits: Limits) -> int:
    """The fewest waves that can hold ``nodes`` (targets) under the per-wave caps alone:
    every counting cap, and with ``never_both_tors`` the most switches sharing a host."""
    listed = list(nodes)
    needed = 1
    if limits.wave is not None:
        needed = max(needed, math.ceil(len(listed) / limits.wave))
    for domain, cap in limits.domains.items():
        counts = Counter(w for n in listed if (w := seat_of[n].domains.get(domain)) is not None)
        if counts:
            needed = max(needed, math.ceil(max(counts.values()) / cap))
    if limits.roles:
        roles = Counter(seat_of[n].role for n in listed)
        for role, cap in limits.roles.items():
            needed = max(needed, math.ceil(roles[role] / cap))
    if limits.tors_apart:
        sharing = Counter(host for n in listed for host in seat_of[n].hosts)
        if sharing:
            needed = max(needed, max(sharing.values()))
    return needed


def cap_bound(
    targets: Iterable[str],
    seat_of: Mapping[str, Seat],
    limits: Limits,
    price: Price,
    *,
    drain: bool,
) -> Stall:
    """Every touched gang drained in as few waves as the caps allow it."""
    if not drain:
        return NOTHING
    by_gang: dict[str, list[str]] = {}
    gpus: dict[str, int] = {}
    for target in targets:
        for gang, count in seat_of[target].stalls.items():
            by_gang.setdefault(gang, []).append(target)
            gpus[gang] = count
    drains = {g: fewest_waves(nodes, seat_of, limits) for g, nodes in by_gang.items()}
    return _stall(drains, gpus, price)
