"""Waves: every target in exactly one wave, every cap honoured in every wave, a canary
of every stratum (or a PlanError naming the cap), and the same plan for the same seed."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from inventory.models import Gang
from rollouts.caps import PlanError
from rollouts.strata import stratify
from rollouts.topology import Domain, Inventory, seats
from rollouts.waves import WavePlan, plan_waves
from tests.rollouts.fleets import (
    Case,
    canary_need,
    cases,
    firmware,
    fleet_limit,
    node,
    orion_like,
    rack,
    spec,
)

PROPERTIES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def plan(case: Case) -> WavePlan:
    strata = stratify(case.fleet, case.changes, case.spec.strata.extra_attributes)
    return plan_waves(case.fleet, case.spec, strata)


@PROPERTIES
@given(cases())
def test_every_target_lands_in_exactly_one_wave(case: Case) -> None:
    """The waves partition the targets: none left out, none twice."""
    try:
        result = plan(case)
    except PlanError:
        return
    landed = [t for w in result.waves for t in w.targets]
    assert sorted(landed) == sorted(case.changes)


@PROPERTIES
@given(cases())
def test_every_cap_holds_in_every_wave(case: Case) -> None:
    """No wave exceeds per_wave, the fleet fraction or any per-domain cap."""
    try:
        result = plan(case)
    except PlanError:
        return
    caps = case.spec.caps
    limit = fleet_limit(case)
    seat_of = seats(case.fleet, sorted(case.changes))
    for wave in result.waves:
        assert limit is None or len(wave.targets) <= limit
        for domain in Domain:
            cap = getattr(caps, domain.value)
            counts = Counter(
                d for t in wave.targets if (d := seat_of[t].domains.get(domain)) is not None
            )
            assert cap is None or all(n <= cap for n in counts.values()), (domain, wave)


@PROPERTIES
@given(cases())
def test_canary_covers_every_stratum_or_the_error_names_a_cap(case: Case) -> None:
    """The canary waves come first and their canaries are min(canary_per_stratum, size)
    of every stratum; their riders (drain only) stall no gang their wave's canaries do
    not already stall; a refusal names a spec field and gives numbers."""
    strata = stratify(case.fleet, case.changes, case.spec.strata.extra_attributes)
    try:
        result = plan_waves(case.fleet, case.spec, strata)
    except PlanError as exc:
        assert exc.field and exc.field[0] in ("caps", "strata")
        assert any(ch.isdigit() for ch in exc.message)
        return
    kinds = [w.canary for w in result.waves]
    assert kinds == sorted(kinds, reverse=True)
    assert 1 <= kinds.count(True) <= case.spec.strata.canary_waves
    canaries = set(result.canary) - set(result.riders)
    for stratum in strata.strata:
        held = len(canaries & set(stratum.members))
        assert held == min(case.spec.strata.canary_per_stratum, len(stratum.members))
    seat_of = seats(case.fleet, sorted(case.changes))
    for wave in (w for w in result.waves if w.canary):
        assert not wave.riders or case.spec.drains
        stalled = {g for t in wave.targets if t not in wave.riders for g in seat_of[t].stalls}
        assert all(seat_of[t].stalls and set(seat_of[t].stalls) <= stalled for t in wave.riders)
        picked = len(wave.targets) - len(wave.riders)
        assert len(wave.targets) <= max(picked, math.ceil(picked * case.spec.waves.growth - 1e-9))


@PROPERTIES
@given(cases(domain_caps=False))
def test_with_only_a_wave_cap_the_canary_is_refused_exactly_when_too_big(case: Case) -> None:
    """Without domain caps the planner refuses the canary iff it needs more targets than
    canary_waves x the wave limit."""
    strata = stratify(case.fleet, case.changes, case.spec.strata.extra_attributes)
    limit = fleet_limit(case)
    if limit == 0:
        return  # the fleet fraction allows nothing at all: a different refusal
    need = canary_need([len(s.members) for s in strata.strata], case.spec.strata.canary_per_stratum)
    too_big = limit is not None and need > case.spec.strata.canary_waves * limit
    try:
        plan_waves(case.fleet, case.spec, strata)
    except PlanError as exc:
        assert too_big, exc.message
        return
    assert not too_big


@PROPERTIES
@given(cases())
def test_same_seed_same_plan(case: Case) -> None:
    """Planning twice gives the same waves."""
    try:
        first = plan(case)
    except PlanError as exc:
        with pytest.raises(PlanError, match=re.escape(exc.message)):
            plan(case)
        return
    assert plan(case) == first


@PROPERTIES
@given(cases())
def test_waves_grow_by_at_most_growth(case: Case) -> None:
    """A wave after the canary holds at most growth x the previous wave (first_wave for
    the first), rounded up."""
    try:
        result = plan(case)
    except PlanError:
        return
    previous = len(result.canary)
    first = True
    for wave in (w for w in result.waves if not w.canary):
        if first and case.spec.waves.first_wave is not None:
            allowed = case.spec.waves.first_wave
        else:
            allowed = math.ceil(previous * case.spec.waves.growth - 1e-9)
        assert len(wave.targets) <= allowed
        previous, first = len(wave.targets), False


def test_canary_too_big_for_per_wave_names_the_cap_and_numbers() -> None:
    """Three strata at one canary each do not fit a per_wave cap of 2 in one wave."""
    fleet = orion_like()
    changes = {
        n: firmware("1" if i % 3 == 0 else "2" if i % 3 == 1 else "3")
        for i, n in enumerate(fleet.devices)
    }
    strata = stratify(fleet, changes)
    with pytest.raises(PlanError) as caught:
        plan_waves(fleet, spec(caps={"per_wave": 2}), strata)
    assert caught.value.field == ("caps", "per_wave")
    assert caught.value.message == (
        "the canary needs 3 targets (3 strata x canary_per_stratum 1) but caps.per_wave 2 "
        "allows 2 in 1 canary wave(s): raise caps.per_wave to 3 or strata.canary_waves to 2"
    )
    two_waves = plan_waves(fleet, spec(caps={"per_wave": 2}, strata={"canary_waves": 2}), strata)
    assert [len(w.targets) for w in two_waves.waves if w.canary] == [2, 1]


def test_strata_confined_to_one_rack_name_the_rack_cap() -> None:
    """Two strata living only in rack r8 cannot both have a canary at per_rack 1."""
    fleet = orion_like()
    changes = {
        n: firmware("1" if d.rack != "r8" or n < "n31" else "2") for n, d in fleet.devices.items()
    }
    strata = stratify(fleet, changes, ["label.nic_revision"])
    with pytest.raises(PlanError) as caught:
        plan_waves(
            fleet,
            spec(caps={"per_rack": 1}, strata={"extra_attributes": ["label.nic_revision"]}),
            strata,
        )
    assert caught.value.field == ("caps", "per_rack")
    assert "have every member in rack r8 and need 2 canaries there" in caught.value.message


def test_canary_spreads_over_racks() -> None:
    """Three strata that each span three racks get canaries in three different racks."""
    racks = {f"r{i}": rack(f"r{i}") for i in range(3)}
    devices = {f"n{i}": node(f"n{i}", f"r{i % 3}", i, nic_revision=str(i // 3)) for i in range(9)}
    fleet = Inventory(devices, racks, {})
    changes = {n: firmware("1") for n in devices}
    strata = stratify(fleet, changes, ["label.nic_revision"])
    for seed in range(20):
        result = plan_waves(
            fleet, spec(seed=seed, strata={"extra_attributes": ["label.nic_revision"]}), strata
        )
        assert len({devices[t].rack for t in result.canary}) == 3


def test_orion_canary_takes_one_of_each_revision_in_separate_racks() -> None:
    """On the ORION shape the canaries are one A1 node and one B0 node, in two racks; the
    A1 canary's gang rides along one node of each of its other DP replicas."""
    fleet = orion_like()
    changes = {n: firmware("1") for n in fleet.devices}
    strata = stratify(fleet, changes, ["label.nic_revision"])
    result = plan_waves(
        fleet,
        spec(
            strata={"extra_attributes": ["label.nic_revision"]},
            caps={"per_wave": 8, "per_rack": 2, "per_dp_replica": 1},
            drain=True,
        ),
        strata,
    )
    canary = [t for t in result.canary if t not in result.riders]
    assert sorted(fleet.devices[t].labels["nic_revision"] for t in canary) == ["A1", "B0"]
    assert len({fleet.devices[t].rack for t in canary}) == 2
    (gang,) = {g.name for g in fleet.gangs.values() for t in canary if t in g.nodes}
    assert gang == "b"  # the cheaper gang (96 GPUs, not 128)
    replicas = fleet.gangs[gang].dp_replicas
    assert sorted(i for i, r in enumerate(replicas) for t in result.canary if t in r) == [0, 1, 2]


def test_canary_search_backs_out_of_a_greedy_dead_end() -> None:
    """When the best-ranked canary of one stratum blocks the only place another stratum
    can have one, the planner backs up and picks the other member, for every seed."""
    racks = {f"r{i}": rack(f"r{i}") for i in range(1, 4)}
    devices = {
        "x": node("x", "r1", 0),
        "y": node("y", "r2", 1),
        "z": node("z", "r3", 2),
        "w": node("w", "r3", 3),
    }
    gang = Gang(name="g", nodes=("x", "z", "w", "y"), dp_replicas=(("x", "z", "w"), ("y",)))
    fleet = Inventory(devices, racks, {"g": gang})
    changes = {"x": firmware("1"), "y": firmware("1"), "z": firmware("2"), "w": firmware("2")}
    strata = stratify(fleet, changes)
    for seed in range(16):
        result = plan_waves(fleet, spec(seed=seed, caps={"per_dp_replica": 1}), strata)
        canary = set(result.canary)
        assert "y" in canary and "x" not in canary and len(canary & {"z", "w"}) == 1, seed
