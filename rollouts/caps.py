"""Caps on one wave (pure): how many targets it may hold in all, per rack, per power
and cooling domain, per data-parallel replica, per role (tier), as a fraction of the
fleet in flight, and (``never_both_tors``) never two switches cabled to the same host.

:class:`WaveLoad` counts a wave as it is filled (and which gangs it stalls) and names
the cap a further target would break (``per_role.spine`` for a role's cap);
:class:`PlanError` is how the planner says a spec cannot be planned, naming the spec
field to change.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from rollouts.spec import Caps
from rollouts.topology import Domain, Seat

EPSILON = 1e-9


class PlanError(ValueError):
    """The spec cannot be planned against this fleet; ``field`` is the spec key to change
    (under ``rollout``), e.g. ``("caps", "per_wave")``."""

    def __init__(self, message: str, field: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Limits:
    """The caps in force for every wave, with the fleet fraction turned into a count."""

    wave: int | None = None
    wave_field: str = "per_wave"
    domains: Mapping[Domain, int] = field(default_factory=dict)
    tors_apart: bool = False  # caps.never_both_tors
    roles: Mapping[str, int] = field(default_factory=dict)  # caps.per_role

    @classmethod
    def of(cls, caps: Caps, fleet_devices: int) -> Limits:
        """The limits of ``caps`` on a fleet of ``fleet_devices`` devices."""
        wave, wave_field = caps.per_wave, "per_wave"
        fraction = caps.fleet_fraction_in_flight
        if fraction is not None:
            in_flight = math.floor(fraction * fleet_devices + EPSILON)
            if in_flight < 1:
                raise PlanError(
                    f"caps.fleet_fraction_in_flight {fraction:g} of the fleet's "
                    f"{fleet_devices} devices allows no target in flight: raise it to at "
                    f"least {1 / fleet_devices:.4g}",
                    ("caps", "fleet_fraction_in_flight"),
                )
            if wave is None or in_flight < wave:
                wave, wave_field = in_flight, "fleet_fraction_in_flight"
        domains = {d: getattr(caps, d.value) for d in Domain if getattr(caps, d.value) is not None}
        roles = {role.value: cap for role, cap in sorted(caps.per_role.items())}
        return cls(wave, wave_field, domains, caps.never_both_tors, roles)

    def counted(self) -> list[tuple[str, int]]:
        """(cap, limit) of every counting cap in force: ``per_wave``, the domains, and
        ``per_role.<role>`` for each role capped."""
        found = [(self.wave_field, self.wave)] if self.wave is not None else []
        found += [(d.value, cap) for d, cap in self.domains.items()]
        return found + [(f"per_role.{role}", cap) for role, cap in self.roles.items()]

    def describe(self) -> list[str]:
        """``per_wave 8``-style words for every cap in force."""
        words = [f"{name} {cap}" for name, cap in self.counted()]
        return words + (["never_both_tors"] if self.tors_apart else [])


class WaveLoad:
    """The targets of one wave being filled, counted per cap."""

    def __init__(self, limits: Limits, seat_of: Mapping[str, Seat], size: int | None) -> None:
        self.limits = limits
        self.seat_of = seat_of
        self.size = size
        self.members: list[str] = []
        self.counts: dict[Domain, Counter[str]] = {d: Counter() for d in limits.domains}
        self.roles: Counter[str] = Counter()
        self.gangs: set[str] = set()  # the gangs of the wave's nodes
        self.stalled: Counter[str] = Counter()  # gangs the wave stalls -> members stalling it
        self.hosts: Counter[str] = Counter()  # hosts of the wave's switches

    def copy(self) -> WaveLoad:
        other = WaveLoad(self.limits, self.seat_of, self.size)
        other.members = list(self.members)
        other.counts = {d: Counter(c) for d, c in self.counts.items()}
        other.roles = Counter(self.roles)
        other.gangs = set(self.gangs)
        other.stalled = Counter(self.stalled)
        other.hosts = Counter(self.hosts)
        return other

    def new_stall(self, target: str) -> int:
        """The GPUs of the gangs ``target`` would stall that the wave does not stall yet."""
        stalled = self.stalled
        return sum(gpus for gang, gpus in self.seat_of[target].stalls.items() if not stalled[gang])

    def blocker(self, target: str) -> str | None:
        """The cap adding ``target`` would break (``per_wave``, ``per_rack``...), or None."""
        if self.size is not None and len(self.members) >= self.size:
            return "size"
        if self.limits.wave is not None and len(self.members) >= self.limits.wave:
            return self.limits.wave_field
        domains = self.seat_of[target].domains
        for domain, cap in self.limits.domains.items():
            where = domains.get(domain)
            if where is not None and self.counts[domain][where] >= cap:
                return domain.value
        role = self.seat_of[target].role
        most = self.limits.roles.get(role)
        if most is not None and self.roles[role] >= most:
            return f"per_role.{role}"
        if self.limits.tors_apart and any(self.hosts[h] for h in self.seat_of[target].hosts):
            return "never_both_tors"
        return None

    def fits(self, target: str) -> bool:
        return self.blocker(target) is None

    def add(self, target: str) -> None:
        seat = self.seat_of[target]
        self.members.append(target)
        for domain in self.counts:
            where = seat.domains.get(domain)
            if where is not None:
                self.counts[domain][where] += 1
        if seat.gang is not None:
            self.gangs.add(seat.gang)
        self.roles[seat.role] += 1
        self.stalled.update(seat.stalls.keys())
        self.hosts.update(seat.hosts)

    def remove(self, target: str) -> None:
        seat = self.seat_of[target]
        self.members.remove(target)
        for domain in self.counts:
            where = seat.domains.get(domain)
            if where is not None:
                self.counts[domain][where] -= 1
        if seat.gang is not None and all(self.seat_of[m].gang != seat.gang for m in self.members):
            self.gangs.discard(seat.gang)
        self.roles[seat.role] -= 1
        self.stalled.subtract(seat.stalls.keys())
        self.hosts.subtract(seat.hosts)
