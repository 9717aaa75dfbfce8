"""Drained plans against their bounds: every target in one wave and every cap in every
wave (never_both_tors and per_role included), a bound never above the plan's cost and
honest about ToR pairs, the canary ranking stalled work before racks, switches that
share no host packed into one wave, and the ORION and three-tier plans within 5 % of
what their caps allow."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from intent.fleet import Fleet, load_fleet
from inventory.models import Gang, Role
from reconciler.settings import Change
from rollouts.caps import PlanError
from rollouts.load import load_rollout
from rollouts.planning import RolloutPlan, plan_changes
from rollouts.price import wave_stall
from rollouts.spec import RolloutSpec
from rollouts.topology import Inventory, seats
from tests.fleetcopy import ORION
from tests.rollouts.fleets import Case, host_cable, node, rack, spec, switch, switch_cases
from tests.threetier import SUPER_SPINES, leaves, make_three_tier, spines

PROPERTIES = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOS = (Change("system/nos_version", "1", "2"),)


def planned(case: Case) -> RolloutPlan | None:
    try:
        return plan_changes(case.fleet, case.spec, case.changes)
    except PlanError:
        return None


@PROPERTIES
@given(switch_cases())
def test_every_target_lands_in_exactly_one_wave(case: Case) -> None:
    """Nodes and switches alike, riders included: none left out, none twice."""
    plan = planned(case)
    if plan is None:
        return
    landed = [t for w in plan.waves.waves for t in w.targets]
    assert sorted(landed) == sorted(case.changes)


@PROPERTIES
@given(switch_cases())
def test_every_cap_holds_in_every_wave(case: Case) -> None:
    """per_wave, per_rack, per_role, and never two switches cabled to one host."""
    plan = planned(case)
    if plan is None:
        return
    caps = case.spec.caps
    seat_of = seats(case.fleet, sorted(case.changes))
    for wave in plan.waves.waves:
        targets = wave.targets
        assert caps.per_wave is None or len(targets) <= caps.per_wave
        racks = Counter(case.fleet.devices[t].rack for t in targets)
        assert caps.per_rack is None or max(racks.values()) <= caps.per_rack
        roles = Counter(case.fleet.devices[t].role for t in targets)
        assert all(roles[role] <= cap for role, cap in caps.per_role.items()), wave
        if caps.never_both_tors:
            hosts = Counter(h for t in targets for h in seat_of[t].hosts)
            assert not hosts or max(hosts.values()) == 1, wave


@PROPERTIES
@given(switch_cases())
def test_the_bounds_are_never_above_the_plans_cost(case: Case) -> None:
    """Each gang is drained at least as often as the caps' bound says, which is at
    least once; the waves' stalls add up to the total."""
    plan = planned(case)
    if plan is None:
        return
    assert plan.total.gpu_hours >= plan.cap_bound.gpu_hours - 1e-9
    assert plan.cap_bound.gpu_hours >= plan.lower_bound.gpu_hours - 1e-9
    for gang, drains in plan.cap_bound.drains.items():
        assert plan.total.drains[gang] >= drains
    assert sum(r.stall.gpu_hours for r in plan.reports) == pytest.approx(plan.total.gpu_hours)


@PROPERTIES
@given(switch_cases())
def test_riders_stall_nothing_their_canaries_do_not(case: Case) -> None:
    """A canary wave's riders stall only gangs its canaries already stall, and the wave
    stays within growth x its canaries."""
    plan = planned(case)
    if plan is None:
        return
    seat_of = seats(case.fleet, sorted(case.changes))
    for wave in (w for w in plan.waves.waves if w.canary):
        canaries = [t for t in wave.targets if t not in wave.riders]
        stalled = {g for t in canaries for g in seat_of[t].stalls}
        for rider in wave.riders:
            assert seat_of[rider].stalls and set(seat_of[rider].stalls) <= stalled


def two_gangs_in_two_racks() -> Inventory:
    """Rack r1: x (in no gang, its own stratum) and s0 (a 16-GPU gang); rack r2: b0 (a
    96-GPU gang). Only x, s0 and b0 change."""
    racks = {"r1": rack("r1"), "r2": rack("r2")}
    devices = {"x": node("x", "r1", 0, nic_revision="B0")}
    small = [f"s{i}" for i in range(2)]
    big = [f"b{i}" for i in range(12)]
    for i, name in enumerate(small):
        devices[name] = node(name, "r1", 1 + i, nic_revision="A1")
    for i, name in enumerate(big):
        devices[name] = node(name, "r2", 10 + i, nic_revision="A1")
    gangs = {
        "small": Gang(name="small", nodes=tuple(small), gpus_per_node=8),
        "big": Gang(name="big", nodes=tuple(big), gpus_per_node=8),
    }
    return Inventory(devices, racks, gangs)


def test_the_canary_stalls_the_smaller_gang_over_spreading_racks() -> None:
    """The A1 canary could be b0 (rack r2, empty, 96 GPUs) or s0 (rack r1, beside the
    B0 canary, 16 GPUs); both fit every cap, so the 16-GPU gang is stalled."""
    fleet = two_gangs_in_two_racks()
    changes = {t: NOS for t in ("x", "s0", "b0")}
    for seed in range(8):
        built = spec(drain=True, strata={"extra_attributes": ["label.nic_revision"]}, seed=seed)
        plan = plan_changes(fleet, built, changes)
        canary = plan.waves.waves[0]
        assert set(canary.targets) - set(canary.riders) == {"x", "s0"}
        assert plan.reports[0].stall.drains == {"small": 1}


def tor_pairs() -> Inventory:
    """n1 behind tor-a/tor-b, n3 behind tor-c/tor-d; one gang g over n1 and n3: tor-a and
    tor-c share no host but stall the same gang."""
    racks = {"r1": rack("r1"), "net": rack("net")}
    devices = {n: node(n, "r1", i) for i, n in enumerate(("n1", "n3"))}
    devices |= {t: switch(t, "net", i) for i, t in enumerate(("tor-a", "tor-b", "tor-c", "tor-d"))}
    links = (
        host_cable("n1", "eth0", "tor-a", "Ethernet1"),
        host_cable("n1", "eth1", "tor-b", "Ethernet1"),
        host_cable("n3", "eth0", "tor-c", "Ethernet1"),
        host_cable("n3", "eth1", "tor-d", "Ethernet1"),
    )
    return Inventory(devices, racks, {"g": Gang(name="g", nodes=("n1", "n3"))}, links)


def test_switches_that_share_no_host_are_drained_together() -> None:
    """never_both_tors keeps each pair apart, but tor-a with tor-c (and tor-b with
    tor-d) drain gang g together: twice, the least the caps allow, for every seed."""
    fleet = tor_pairs()
    changes = {t: NOS for t in fleet.devices if t.startswith("tor")}
    for seed in range(12):
        built = spec(
            targets={"select": "role=leaf"},
            drain=True,
            caps={"never_both_tors": True},
            seed=seed,
        )
        plan = plan_changes(fleet, built, changes)
        assert plan.cap_bound.drains == {"g": 2}
        assert plan.total.drains == {"g": 2}, [w.targets for w in plan.waves.waves]


def test_the_bound_counts_the_switches_that_share_a_host() -> None:
    """Four rail switches over the same hosts never share a wave under never_both_tors:
    a gang behind all four is drained four times at least, whatever per_wave says."""
    racks = {"r1": rack("r1"), "net": rack("net")}
    devices = {n: node(n, "r1", i) for i, n in enumerate(("n1", "n2"))}
    rails = [f"rail{i}" for i in range(4)]
    devices |= {t: switch(t, "net", i) for i, t in enumerate(rails)}
    links = tuple(
        host_cable(n, f"eth{i}", t, f"Ethernet{k + 1}")
        for k, n in enumerate(("n1", "n2"))
        for i, t in enumerate(rails)
    )
    fleet = Inventory(devices, racks, {"g": Gang(name="g", nodes=("n1", "n2"))}, links)
    changes = {t: NOS for t in rails}
    apart = spec(targets={"select": "role=leaf"}, drain=True, caps={"per_wave": 4})
    together = plan_changes(fleet, apart, changes)
    assert together.cap_bound.drains == {"g": 1}
    built = spec(
        targets={"select": "role=leaf"},
        drain=True,
        caps={"per_wave": 4, "never_both_tors": True},
    )
    plan = plan_changes(fleet, built, changes)
    assert plan.cap_bound.drains == {"g": 4}
    assert plan.total == plan.cap_bound


def test_per_role_caps_each_wave_and_the_bound() -> None:
    """At most one spine a wave: four spines need four waves, whatever else the caps
    allow, and the plan keeps to it."""
    racks = {"net": rack("net")}
    devices = {f"spine{i}": switch(f"spine{i}", "net", i, Role.spine) for i in range(4)}
    devices |= {f"leaf{i}": switch(f"leaf{i}", "net", 10 + i) for i in range(4)}
    fleet = Inventory(devices, racks, {})
    built = spec(
        targets={"select": "role=leaf|spine"},
        caps={"per_wave": 8, "per_role": {"spine": 1}},
        waves={"first_wave": 8},
    )
    plan = plan_changes(fleet, built, {t: NOS for t in devices})
    spine_counts = [sum(t.startswith("spine") for t in w.targets) for w in plan.waves.waves]
    assert max(spine_counts) == 1 and sum(spine_counts) == 4
    assert len(plan.waves.waves) >= 4


def test_a_canary_the_role_cap_cannot_hold_names_the_role() -> None:
    """Two spine canaries at per_role {spine: 1} in one canary wave: refused, naming
    caps.per_role.spine (the spec field, to be located at its line)."""
    racks = {"net": rack("net")}
    devices = {f"spine{i}": switch(f"spine{i}", "net", i, Role.spine) for i in range(3)}
    fleet = Inventory(devices, racks, {})
    built = spec(
        targets={"select": "role=spine"},
        caps={"per_role": {"spine": 1}},
        strata={"canary_per_stratum": 2},
    )
    with pytest.raises(PlanError) as caught:
        plan_changes(fleet, built, {t: NOS for t in devices})
    assert caught.value.field == ("caps", "per_role", "spine")
    assert caught.value.message.startswith("caps.per_role.spine 1: the canary needs 2 spine")


def test_per_role_is_validated_at_its_line(tmp_path: Path) -> None:
    """An unknown role and a cap of 0 are refused where they are written."""
    from tests.fleetcopy import copy_orion

    orion = copy_orion(tmp_path / "orion")
    spec_file = "rollouts/qos-mtu-tune.yaml"
    orion.replace(spec_file, "    per_wave: 2\n", "    per_wave: 2\n    per_role: {spien: 1}\n")
    from inventory.problems import InputError

    with pytest.raises(InputError) as caught:
        load_rollout(orion.path, "qos-mtu-tune")
    (problem,) = caught.value.problems
    text = (orion.path / spec_file).read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "per_role:" in t)
    assert problem.location.line == line and "spien" in problem.message
    orion.replace(spec_file, "per_role: {spien: 1}", "per_role:\n      spine: 0")
    with pytest.raises(InputError) as caught:
        load_rollout(orion.path, "qos-mtu-tune")
    (problem,) = caught.value.problems
    text = (orion.path / spec_file).read_text().splitlines()
    assert problem.location.line == next(i for i, t in enumerate(text, 1) if "spine: 0" in t)


def orion_fleet() -> Fleet:
    return load_fleet(ORION)


def test_orion_firmware_plan_is_within_5_percent_of_its_caps_bound() -> None:
    """The example spec (per_wave 8, per_rack 2, per_dp_replica 1) over every GPU node."""
    fleet = orion_fleet()
    loaded = load_rollout(ORION, "firmware-hx8-2026-09")
    changes = {
        n: (Change("firmware/nic_firmware", "28.41", "28.43"),)
        for n, d in fleet.devices.items()
        if d.role is Role.gpu_node
    }
    plan = plan_changes(fleet, loaded.spec, changes)
    ratio = plan.total.gpu_hours / plan.cap_bound.gpu_hours
    assert plan.cap_bound.gpu_hours > 0 and ratio <= 1.05, (plan.total, plan.cap_bound)


def switch_spec(**caps: object) -> RolloutSpec:
    return RolloutSpec.model_validate(
        {
            "name": "switch-nos",
            "targets": {"select": "role=leaf|spine|super-spine"},
            "strata": {"canary_waves": 2},
            "caps": caps,
            "drain": True,
        }
    )


@pytest.mark.parametrize(
    "caps",
    [
        {"per_wave": 2},
        {"per_wave": 4, "never_both_tors": True},
        {"per_wave": 4, "never_both_tors": True, "per_role": {"spine": 1}},
    ],
    ids=["per_wave", "tors", "tors+one-spine"],
)
def test_orion_switch_drain_is_within_5_percent_of_its_caps_bound(caps: dict[str, object]) -> None:
    """Every leaf and spine drained: each of ORION's 32 nodes is cabled to all 8 rail
    leaves, so never_both_tors puts each leaf in a wave of its own and the honest bound
    drains both gangs 8 times (597.3 GPU-h), not per_wave's 2 or 4."""
    fleet = orion_fleet()
    changes = {n: NOS for n, d in fleet.devices.items() if d.role in (Role.leaf, Role.spine)}
    plan = plan_changes(fleet, switch_spec(**caps), changes)
    if caps.get("never_both_tors"):
        assert plan.cap_bound.drains == {"llm-pretrain-a": 8, "llm-pretrain-b": 8}
        assert plan.cap_bound.gpu_hours == pytest.approx(8 * (128 + 96) * 20 / 60)
    ratio = plan.total.gpu_hours / plan.cap_bound.gpu_hours
    assert ratio <= 1.05, ([w.targets for w in plan.waves.waves], plan.total, plan.cap_bound)


def three_tier(root: Path) -> Fleet:
    """The generated three-tier fleet with two 16-GPU gangs: g-p1 on the nodes under
    pod p1's leaves, g-p2 under pod p2's."""
    tri = make_three_tier(root)
    tri.write(
        "inventory/gangs.yaml",
        "gangs:\n"
        "  - {name: g-p1, nodes: [gpu-1, gpu-2], gpus_per_node: 8}\n"
        "  - {name: g-p2, nodes: [gpu-3, gpu-4], gpus_per_node: 8}\n",
    )
    return tri.load()


@pytest.mark.parametrize(
    "caps",
    [
        {"per_wave": 2},
        {"per_wave": 4, "never_both_tors": True, "per_role": {"spine": 1, "super-spine": 1}},
    ],
    ids=["per_wave", "tors+one-spine"],
)
def test_three_tier_switch_drain_is_within_5_percent_of_its_caps_bound(
    tmp_path: Path, caps: dict[str, object]
) -> None:
    """Every switch of the three-tier fleet drained: the two leaves above one gang share
    no host and drain it together; spines and super-spines stall nothing."""
    fleet = three_tier(tmp_path / "tri")
    switches = [*SUPER_SPINES, *(d for pod in ("p1", "p2") for d in spines(pod) + leaves(pod))]
    plan = plan_changes(fleet, switch_spec(**caps), {t: NOS for t in switches})
    assert plan.cap_bound.drains == {"g-p1": 1, "g-p2": 1}
    ratio = plan.total.gpu_hours / plan.cap_bound.gpu_hours
    assert ratio <= 1.05, ([w.targets for w in plan.waves.waves], plan.total, plan.cap_bound)
    per_role = caps.get("per_role", {})
    assert isinstance(per_role, dict)
    for wave in plan.waves.waves:
        roles = Counter(fleet.devices[t].role.value for t in wave.targets)
        assert all(roles[role] <= cap for role, cap in per_role.items())


def test_three_tier_nodes_and_switches_within_5_percent(tmp_path: Path) -> None:
    """Nodes and switches in one drained rollout: a node and the leaf above it stall the
    same gang, so they share its drain."""
    fleet = three_tier(tmp_path / "tri")
    built = RolloutSpec.model_validate(
        {
            "name": "all",
            "targets": {"select": "role=gpu-node|leaf"},
            "caps": {"per_wave": 4, "never_both_tors": True},
            "drain": True,
        }
    )
    targets = [
        d for d, device in fleet.devices.items() if device.role in (Role.gpu_node, Role.leaf)
    ]
    plan = plan_changes(fleet, built, {t: NOS for t in targets})
    seat_of = seats(fleet, targets)
    assert sum(
        wave_stall(w.targets, seat_of, built.price, drain=True).gpu_hours for w in plan.waves.waves
    ) == pytest.approx(plan.total.gpu_hours)
    ratio = plan.total.gpu_hours / plan.cap_bound.gpu_hours
    assert ratio <= 1.05, ([w.targets for w in plan.waves.waves], plan.total, plan.cap_bound)
