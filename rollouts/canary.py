"""The canary (pure): ``canary_per_stratum`` targets of every stratum (a smaller stratum
whole), in separate racks as far as the strata allow, within every cap.

Strata are served smallest first (they have the fewest choices); with ``drain``, strata
whose members stall nothing come after those that stall a gang. For each pick the
candidates are ranked by: the gang GPUs the pick would newly stall (with ``drain``: a
node's gang, the gangs behind a switch, unless the canary wave already stalls them),
how many canaries already share the rack, then the power and then the cooling domain,
the earliest canary wave it fits, and the spec's seeded order. Every candidate already
fits every cap, so stalled work comes before spreading over racks: a 16-GPU gang's node
in a rack that holds a canary beats a 96-GPU gang's in an empty rack. The choice is a
depth-first search whose first path is that ranking: when a pick leaves a later
stratum no member that fits, it backs up and tries the next candidate. When the caps
cannot hold the canary, :class:`~rollouts.caps.PlanError` names the cap and the
numbers; a stratum is never silently left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from rollouts.caps import Limits, PlanError, WaveLoad
from rollouts.spec import Strata
from rollouts.strata import Stratification, Stratum
from rollouts.topology import Domain, Seat

MAX_CANARY_WAVES = 8
SEARCH_STEPS = 20_000  # backtracking tries beyond the greedy path before giving up
Score = tuple[int, ...]
_SPREAD = (Domain.rack, Domain.power_domain, Domain.cooling_domain)


def _need(stratum: Stratum, per_stratum: int) -> int:
    return min(per_stratum, len(stratum.members))


def check_canary_fits(
    strata: Stratification, spec: Strata, limits: Limits, seat_of: Mapping[str, Seat]
) -> None:
    """Refuse, with the cap and the numbers, a canary the caps cannot hold."""
    waves, k = spec.canary_waves, spec.canary_per_stratum
    total = sum(_need(s, k) for s in strata.strata)
    if limits.wave is not None and total > waves * limits.wave:
        small = any(len(s.members) < k for s in strata.strata)
        field = limits.wave_field
        hint = f"raise caps.{field} to {math.ceil(total / waves)}"
        if math.ceil(total / limits.wave) <= MAX_CANARY_WAVES:
            hint += f" or strata.canary_waves to {math.ceil(total / limits.wave)}"
        raise PlanError(
            f"the canary needs {total} targets ({len(strata.strata)} strata x "
            f"canary_per_stratum {k}{', smaller strata whole' if small else ''}) but "
            f"caps.{field} {limits.wave} allows {waves * limits.wave} in {waves} canary "
            f"wave(s): {hint}",
            ("caps", field),
        )
    _check_roles(strata, spec, limits, seat_of)
    for domain, cap in limits.domains.items():
        confined: dict[str, list[Stratum]] = {}
        for stratum in strata.strata:
            places = {seat_of[m].domains.get(domain) for m in stratum.members}
            if len(places) == 1 and None not in places:
                confined.setdefault(str(places.pop()), []).append(stratum)
        for place, held in sorted(confined.items()):
            need = sum(_need(s, k) for s in held)
            if need > waves * cap:
                ids = ", ".join(s.id for s in held)
                raise PlanError(
                    f"caps.{domain.value} {cap}: strata {ids} have every member in "
                    f"{domain.name.replace('_', ' ')} {place} and need {need} canaries there, "
                    f"but {waves} canary wave(s) x {cap} allow {waves * cap}: raise "
                    f"caps.{domain.value} to {math.ceil(need / waves)} or "
                    f"strata.canary_waves to {math.ceil(need / cap)}",
                    ("caps", domain.value),
                )


def _check_roles(
    strata: Stratification, spec: Strata, limits: Limits, seat_of: Mapping[str, Seat]
) -> None:
    """Every stratum holds one role (role is part of its key): the canaries of one role
    must fit ``canary_waves`` x that role's cap."""
    waves, k = spec.canary_waves, spec.canary_per_stratum
    need: Counter[str] = Counter()
    for stratum in strata.strata:
        need[seat_of[stratum.members[0]].role] += _need(stratum, k)
    for role, cap in limits.roles.items():
        if need[role] > waves * cap:
            raise PlanError(
                f"caps.per_role.{role} {cap}: the canary needs {need[role]} {role} targets "
                f"(min(canary_per_stratum {k}, size) of each {role} stratum) "
                f"but {waves} canary wave(s) x {cap} allow {waves * cap}: raise "
                f"caps.per_role.{role} to {math.ceil(need[role] / waves)} or "
                f"strata.canary_waves to {math.ceil(need[role] / cap)}",
                ("caps", "per_role", role),
            )


class _Search:
    """Depth-first search over canary picks, best-ranked first: the first path is the
    greedy choice; a dead end backs up to the last pick with an alternative."""

    def __init__(
        self,
        limits: Limits,
        seat_of: Mapping[str, Seat],
        rank: Mapping[str, int],
        waves: int,
        drain: bool,
        targets: Sequence[str] = (),
    ) -> None:
        self.seat_of = seat_of
        self.rank = rank
        self.drain = drain
        self.limits = limits
        self.stalling = [t for t in targets if seat_of[t].stalls]
        self.loads = [WaveLoad(limits, seat_of, None) for _ in range(waves)]
        self.chosen: set[str] = set()
        self.used: dict[Domain, Counter[str]] = {d: Counter() for d in _SPREAD}
        self.dead_end: tuple[Stratum, int, int, Counter[str]] | None = None

    def options(self, stratum: Stratum, pick: int, need: int) -> list[tuple[Score, str, int]]:
        """Every (score, member, canary wave) that fits now, best first."""
        found: list[tuple[Score, str, int]] = []
        blocked: Counter[str] = Counter()
        crowded: dict[int, bool] = {}
        for member in stratum.members:
            if member in self.chosen:
                continue
            seat = self.seat_of[member]
            fitting = [i for i, load in enumerate(self.loads) if load.fits(member)]
            if not fitting:
                blocked[self.loads[0].blocker(member) or "size"] += 1
            for wave in fitting:
                stall = self.loads[wave].new_stall(member) if self.drain else 0
                if self.drain and not seat.stalls and wave not in crowded:
                    crowded[wave] = self.crowded(wave)
                crowds = int(crowded.get(wave, False) and not seat.stalls)
                used = [self.used[d][seat.domains[d]] for d in _SPREAD]
                score = (stall, crowds, *used, wave, self.rank[member])
                found.append((score, member, wave))
        if not found and self.dead_end is None:
            self.dead_end = (stratum, pick, need, blocked)
        return sorted(found)

    def crowded(self, wave: int) -> bool:
        """Would one more canary that stalls nothing fill ``wave`` to its wave limit while
        the wave stalls a gang some unchosen target could ride along? (Then the canary
        is better placed in another canary wave, leaving the room to a rider.)"""
        load = self.loads[wave]
        limit = self.limits.wave
        if limit is None or not load.members or len(load.members) + 1 < limit:
            return False
        return any(
            t not in self.chosen and not load.new_stall(t) and t not in load.members
            for t in self.stalling
        )

    def place(self, member: str, wave: int, sign: int) -> None:
        if sign > 0:
            self.loads[wave].add(member)
            self.chosen.add(member)
        else:
            self.loads[wave].remove(member)
            self.chosen.discard(member)
        for domain in _SPREAD:
            self.used[domain][self.seat_of[member].domains[domain]] += sign


def pick_canary(
    strata: Stratification,
    spec: Strata,
    limits: Limits,
    seat_of: Mapping[str, Seat],
    rank: Mapping[str, int],
    *,
    drain: bool,
) -> list[list[str]]:
    """The canary waves (non-empty lists of targets), covering every stratum."""
    check_canary_fits(strata, spec, limits, seat_of)
    members = [m for stratum in strata.strata for m in stratum.members]
    search = _Search(limits, seat_of, rank, spec.canary_waves, drain, members)

    def served(stratum: Stratum) -> tuple[bool, int, str]:
        # with drain, strata whose every member stalls nothing go last: they cost
        # nothing in any wave, so the strata that stall gangs choose their waves first
        free = drain and not any(seat_of[m].stalls for m in stratum.members)
        return (free, len(stratum.members), stratum.id)

    slots = [
        (stratum, pick, _need(stratum, spec.canary_per_stratum))
        for stratum in sorted(strata.strata, key=served)
        for pick in range(_need(stratum, spec.canary_per_stratum))
    ]
    budget = SEARCH_STEPS + len(slots)
    frames: list[tuple[list[tuple[Score, str, int]], list[int]]] = []
    while len(frames) < len(slots):
        frames.append((search.options(*slots[len(frames)]), [-1]))
        while frames:  # try the top frame's next option; back up while it has none
            options, at = frames[-1]
            if at[0] >= 0:
                search.place(options[at[0]][1], options[at[0]][2], -1)
            at[0] += 1
            budget -= 1
            if at[0] < len(options) and budget >= 0:
                search.place(options[at[0]][1], options[at[0]][2], +1)
                break
            frames.pop()
        if not frames:
            assert search.dead_end is not None
            raise _stuck(*search.dead_end, len(search.loads), exhausted=budget < 0)
    return [sorted(load.members) for load in search.loads if load.members]


def _stuck(
    stratum: Stratum,
    pick: int,
    need: int,
    blocked: Counter[str],
    waves: int,
    *,
    exhausted: bool,
) -> PlanError:
    which = ", ".join(f"{cap}: {n}" for cap, n in blocked.most_common())
    cap = blocked.most_common(1)[0][0] if blocked else "per_wave"
    field = ("caps", *cap.split(".")) if cap != "size" else ("strata", "canary_waves")
    others = f"none of {SEARCH_STEPS} other choices tried" if exhausted else "no other choice"
    return PlanError(
        f"stratum {stratum.id} ({stratum.label()}) cannot get canary {pick + 1} of {need}: "
        f"beside the other strata's canaries, each of its {sum(blocked.values())} unused "
        f"members breaks a cap in every one of {waves} canary wave(s) ({which}), and "
        f"{others} of canaries fits: raise that cap or strata.canary_waves",
        field,
    )
