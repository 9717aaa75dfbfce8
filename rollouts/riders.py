"""Riders of a canary wave (pure): targets that stall nothing the wave does not already
stall, taken beside the canaries so the gangs the canary drains are not drained once
more later for the rest of their share.

With ``drain``, a canary node of a training gang stops the whole gang for the wave.
Draining that gang again later for its remaining nodes costs a full gang drain, so a
gang whose caps force ``k`` waves would be drained ``k + 1`` times. The canary wave
therefore also takes, within every cap:

* for each gang it stalls (in the order its canaries name them), the rest of the
  gang's *share*: the colour class (:func:`~rollouts.gangsplit.colour_classes`) that
  holds the gang's canary node, so what remains still splits into ``k - 1`` waves,
  then any other node of the gang that fits;
* then any switch whose every gang behind it is already stalled.

A rider never stalls a gang the canaries do not: it costs no GPU-hour. It is still
exposed to the change, so a canary wave grows to at most ``growth`` x its canaries
(rounded up) and never beyond twice its canaries: the canary stays a canary however
fast the later waves grow;
nodes in no gang and switches with nothing behind them never ride (they cost nothing
in any wave).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from rollouts.caps import EPSILON, Limits, WaveLoad
from rollouts.gangsplit import colour_classes
from rollouts.topology import Seat


def rider_limit(canaries: int, growth: float) -> int:
    """The most targets a canary wave of ``canaries`` may hold with its riders."""
    return max(canaries, min(math.ceil(canaries * growth - EPSILON), 2 * canaries))


def pick_riders(
    canaries: Sequence[str],
    remaining: Sequence[str],
    seat_of: Mapping[str, Seat],
    limits: Limits,
    growth: float,
) -> list[str]:
    """The riders of one canary wave, from ``remaining`` (targets in no canary wave, in
    the spec's seeded order)."""
    load = WaveLoad(limits, seat_of, rider_limit(len(canaries), growth))
    for target in canaries:
        load.add(target)
    order: list[str] = []
    for gang in dict.fromkeys(g for t in sorted(canaries) for g in seat_of[t].stalls):
        order += _gang_order(gang, canaries, remaining, seat_of, limits)
    order += [t for t in remaining if seat_of[t].gang is None and seat_of[t].stalls]
    riders: list[str] = []
    for target in order:
        stalls = seat_of[target].stalls
        if target in load.members or not stalls or load.new_stall(target):
            continue
        if load.fits(target):
            load.add(target)
            riders.append(target)
    return riders


def _gang_order(
    gang: str,
    canaries: Sequence[str],
    remaining: Sequence[str],
    seat_of: Mapping[str, Seat],
    limits: Limits,
) -> list[str]:
    """The gang's remaining nodes, the colour class of its first canary node first."""
    mine = [t for t in canaries if seat_of[t].gang == gang]
    rest = [t for t in remaining if seat_of[t].gang == gang]
    if not rest:
        return []
    classes = colour_classes([*mine, *rest], seat_of, limits)
    first = next((c for c in classes if mine and mine[0] in c), classes[0])
    return [t for t in first if t not in mine] + [t for t in rest if t not in first]
