"""The wave planner's pools: round-robin order over racks as its definition says after
any removals, gang caches dropped when a gang loses nodes, and colour classes
computed per gang change rather than per wave."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rollouts.wavepools
from rollouts.caps import Limits
from rollouts.strata import stratify
from rollouts.topology import Domain, Seat
from rollouts.wavepools import GangPool, RackQueues
from rollouts.waves import plan_waves
from tests.rollouts.fleets import firmware, orion_like, spec


def _seat(rack: str, gang: str | None = None, replica: str | None = None) -> Seat:
    domains = {Domain.rack: rack}
    if replica is not None:
        domains[Domain.dp_replica] = replica
    return Seat(domains, gang, 64 if gang else 0, {gang: 64} if gang else {}, frozenset())


def _by_definition(ordered: list[str], rack_of: dict[str, str]) -> list[str]:
    """Round-robin as the planner defines it: sort by (position in its rack, order)."""
    position: Counter[str] = Counter()
    keyed = []
    for index, target in enumerate(ordered):
        keyed.append((position[rack_of[target]], index, target))
        position[rack_of[target]] += 1
    return [t for _, _, t in sorted(keyed)]


@settings(max_examples=80, deadline=None)
@given(
    racks=st.lists(st.integers(0, 6), min_size=1, max_size=40),
    waves=st.lists(st.sets(st.integers(0, 39), max_size=8), max_size=6),
)
def test_round_robin_matches_its_definition_after_removals(
    racks: list[int], waves: list[set[int]]
) -> None:
    """After any sequence of removed waves, the order is the by-definition order of
    what is left."""
    ordered = [f"t{i:02d}" for i in range(len(racks))]
    rack_of = {t: f"r{r}" for t, r in zip(ordered, racks, strict=True)}
    queues = RackQueues(ordered, {t: _seat(rack_of[t]) for t in ordered})
    left = list(ordered)
    for wave in waves:
        assert list(queues.round_robin()) == _by_definition(left, rack_of)
        members = [ordered[i] for i in wave if i < len(ordered) and ordered[i] in left]
        queues.remove(members)
        left = [t for t in left if t not in members]
    assert list(queues.round_robin()) == _by_definition(left, rack_of)


def test_a_gang_that_loses_nodes_gets_fresh_classes_and_ideal() -> None:
    """The cached split and share of a gang are recomputed from its remaining nodes."""
    seat_of = {f"n{i}": _seat(f"r{i % 2}", "g", f"g/dp{i % 4}") for i in range(8)}
    limits = Limits(wave=8, domains={Domain.dp_replica: 1, Domain.rack: 2})
    pool = GangPool(sorted(seat_of), seat_of, limits)
    first = pool.ideal("g", 8)
    assert len(first) == 4  # two racks of two, one per replica
    pool.remove(first)
    assert sorted(n for c in pool.classes("g") for n in c) == sorted(set(seat_of) - set(first))
    assert set(pool.ideal("g", 8)).isdisjoint(first)
    pool.remove(list(seat_of))
    assert pool.nodes == {}


def test_colour_classes_are_computed_per_gang_change_not_per_wave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planning a drained rollout splits a gang again only after a wave took from it."""
    calls: Counter[int] = Counter()
    real = rollouts.wavepools.colour_classes

    def counted(nodes, seat_of, limits):  # type: ignore[no-untyped-def]
        calls[len(nodes)] += 1
        return real(nodes, seat_of, limits)

    monkeypatch.setattr(rollouts.wavepools, "colour_classes", counted)
    fleet = orion_like(racks=16, per_rack=4)
    changes = {n: firmware("1") for n, d in fleet.devices.items() if d.role.value == "gpu-node"}
    rollout = spec(caps={"per_wave": 2, "per_rack": 1, "per_dp_replica": 1}, drain=True)
    strata = stratify(fleet, changes, rollout.strata.extra_attributes)
    plan = plan_waves(fleet, rollout, strata)
    gang_waves = sum(1 for w in plan.waves if not w.canary)
    assert sum(calls.values()) <= len(fleet.gangs) + gang_waves
