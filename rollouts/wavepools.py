"""What the wave planner has left to place, kept between waves (pure).

:func:`rollouts.waves.plan_waves` fills one wave after another. Rebuilding its view
of the remaining targets for every wave (every gang's nodes and colour classes,
every rack's queue) made planning grow with waves x targets; these pools are built
once and updated with each wave's members, so a wave costs what it takes:

* :class:`GangPool` holds each gang's remaining nodes in rank order, its colour
  classes (:mod:`rollouts.gangsplit`) and its share of an empty wave of a given size,
  each computed again only when the gang loses nodes;
* :class:`RackQueues` holds the remaining targets of each rack in rank order and
  yields them round-robin over racks (every rack's first, then every rack's
  second...), keeping the racks sorted by their first target between waves;
* :class:`SwitchPool` holds the remaining switches whose drain stalls a gang (the
  gangs of the nodes behind them), in rank order, every remaining target by the gangs
  it stalls, and each switch's *group* in an empty wave (the switch and what rides
  with it), computed again after each wave.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

from rollouts.caps import Limits, WaveLoad
from rollouts.gangsplit import colour_classes
from rollouts.topology import Domain, Seat


def gang_share(load: WaveLoad, nodes: Sequence[str], classes: Sequence[Sequence[str]]) -> list[str]:
    """The nodes of one gang that ``load`` can still take: the largest of the gang's
    colour classes (so the gang needs no more waves than its replica and rack caps
    force), then any other node that still fits; each in order of how many of the
    gang's remaining nodes share the node's DP replica and rack, most first.

    When the wave cannot take a whole class, it takes from the fullest replicas and
    racks: what remains then needs one wave fewer whenever the caps allow it (with
    one node per replica and ``W`` per wave, a gang of ``N`` nodes whose largest
    replica holds ``D`` finishes in ``max(D, ceil(N / W))`` waves)."""
    if not classes:
        return []
    seat_of = load.seat_of
    sharing: Counter[tuple[Domain, str]] = Counter()
    for node in nodes:
        for domain in _SHARE_DOMAINS:
            where = seat_of[node].domains.get(domain)
            if where is not None:
                sharing[(domain, where)] += 1

    def fullest(node: str) -> tuple[int, ...]:
        domains = seat_of[node].domains
        return tuple(-sharing[(d, domains[d])] if d in domains else 0 for d in _SHARE_DOMAINS)

    trial = load.copy()
    for node in [*sorted(classes[0], key=fullest), *sorted(nodes, key=fullest)]:
        if node not in trial.members and trial.fits(node):
            trial.add(node)
    return trial.members[len(load.members) :]


_SHARE_DOMAINS = (Domain.dp_replica, Domain.rack)


class GangPool:
    """The remaining nodes of every gang, with what is derived from them cached."""

    def __init__(self, ordered: Iterable[str], seat_of: Mapping[str, Seat], limits: Limits) -> None:
        self.seat_of = seat_of
        self.limits = limits
        self.nodes: dict[str, list[str]] = {}
        for target in ordered:
            gang = seat_of[target].gang
            if gang is not None:
                self.nodes.setdefault(gang, []).append(target)
        self._classes: dict[str, list[list[str]]] = {}
        self._ideal: dict[str, dict[int | None, list[str]]] = {}  # gang -> size -> share

    def classes(self, gang: str) -> list[list[str]]:
        """The gang's remaining nodes split by :func:`colour_classes`."""
        found = self._classes.get(gang)
        if found is None:
            found = self._classes[gang] = colour_classes(
                self.nodes[gang], self.seat_of, self.limits
            )
        return found

    def ideal(self, gang: str, size: int | None) -> list[str]:
        """The gang's share of an empty wave of ``size`` targets."""
        by_size = self._ideal.setdefault(gang, {})
        share = by_size.get(size)
        if share is None:
            empty = WaveLoad(self.limits, self.seat_of, size)
            share = by_size[size] = gang_share(empty, self.nodes[gang], self.classes(gang))
        return share

    def remove(self, members: Iterable[str]) -> None:
        """Drop a wave's members; a gang left without nodes leaves the pool."""
        gone: dict[str, set[str]] = {}
        for target in members:
            gang = self.seat_of[target].gang
            if gang is not None and gang in self.nodes:
                gone.setdefault(gang, set()).add(target)
        for gang, nodes in gone.items():
            kept = [n for n in self.nodes[gang] if n not in nodes]
            self._classes.pop(gang, None)
            self._ideal.pop(gang, None)
            if kept:
                self.nodes[gang] = kept
            else:
                del self.nodes[gang]


class RackQueues:
    """The remaining candidates of every rack, in the order they were given."""

    def __init__(self, ordered: Sequence[str], seat_of: Mapping[str, Seat]) -> None:
        self.index = {target: i for i, target in enumerate(ordered)}
        self.rack_of = {t: seat_of[t].domains[Domain.rack] for t in ordered}
        self.queues: dict[str, list[str]] = {}
        for target in ordered:
            self.queues.setdefault(self.rack_of[target], []).append(target)
        self.heads = sorted((self.index[q[0]], rack) for rack, q in self.queues.items())

    def round_robin(self) -> Iterator[str]:
        """Every candidate, round by round: the k-th of each rack that has one, racks
        ordered by that candidate's position in the original order."""
        k = 0
        order = list(self.heads)
        while order:
            for _, rack in order:
                yield self.queues[rack][k]
            k += 1
            order = sorted((self.index[q[k]], r) for r, q in self.queues.items() if len(q) > k)

    def remove(self, members: Iterable[str]) -> None:
        """Drop a wave's members, keeping every rack's head in its sorted place."""
        gone: dict[str, set[str]] = {}
        for target in members:
            if target in self.rack_of:
                gone.setdefault(self.rack_of[target], set()).add(target)
        for rack, targets in gone.items():
            queue = self.queues[rack]
            del self.heads[bisect.bisect_left(self.heads, (self.index[queue[0]], rack))]
            kept = [t for t in queue if t not in targets]
            if kept:
                self.queues[rack] = kept
                bisect.insort(self.heads, (self.index[kept[0]], rack))
            else:
                del self.queues[rack]


class SwitchPool:
    """The remaining switch targets that stall a gang, in the order they were given,
    and every remaining target (node or switch) by the gangs its drain stalls."""

    def __init__(self, ordered: Iterable[str], seat_of: Mapping[str, Seat]) -> None:
        self.seat_of = seat_of
        self.switches: dict[str, None] = {}
        self.stalling: dict[str, dict[str, None]] = {}  # gang -> targets stalling it
        for target in ordered:
            seat = seat_of[target]
            if seat.gang is None and seat.stalls:
                self.switches[target] = None
            for gang in seat.stalls:
                self.stalling.setdefault(gang, {})[target] = None
        self._ideal: dict[tuple[str, int | None], int] = {}

    def __iter__(self) -> Iterator[str]:
        return iter(self.switches)

    def group(self, load: WaveLoad, switch: str) -> list[str]:
        """``switch`` and what rides with it in ``load``: the remaining targets of the
        gangs it newly stalls that stall nothing more, as far as they fit."""
        trial = load.copy()
        new = [g for g in self.seat_of[switch].stalls if not load.stalled[g]]
        trial.add(switch)
        for gang in new:
            for target in self.stalling.get(gang, ()):
                free = target not in trial.members and not trial.new_stall(target)
                if free and trial.fits(target):
                    trial.add(target)
        return trial.members[len(load.members) :]

    def ideal(self, switch: str, limits: Limits, size: int | None) -> int:
        """How many targets :meth:`group` holds in an empty wave of ``size``."""
        key = (switch, size)
        found = self._ideal.get(key)
        if found is None:
            found = self._ideal[key] = len(self.group(WaveLoad(limits, self.seat_of, size), switch))
        return found

    def remove(self, members: Iterable[str]) -> None:
        for target in members:
            self.switches.pop(target, None)
            for gang in self.seat_of[target].stalls:
                self.stalling.get(gang, {}).pop(target, None)
        self._ideal.clear()
