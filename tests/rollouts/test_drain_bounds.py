"""Drained waves keep to their own bounds: a gang whose DP replicas span racks is
drained in no more waves than its caps force, a switch drain is priced with the GPUs
of the gangs behind it, and ``caps.never_both_tors`` keeps the two switches of a
host out of one wave."""

from __future__ import annotations

from ipaddress import IPv4Address

from inventory.models import Device, Gang, Link, LinkClass, Role
from reconciler.settings import Change
from rollouts.caps import Limits, WaveLoad
from rollouts.gangsplit import colour_classes
from rollouts.planning import plan_changes
from rollouts.price import fewest_waves
from rollouts.strata import stratify
from rollouts.topology import Inventory, seats
from rollouts.waves import plan_waves
from tests.rollouts.fleets import firmware, node, rack, spec

# Found by search: a greedy fill drains this gang in 4 waves after the canary where
# the caps force 3 (rack r2 holds 7 of its 12 nodes at per_rack 2; its replicas of 3
# nodes at per_dp_replica 1).
PLACES = {
    "n00": "r2", "n01": "r0", "n02": "r2", "n03": "r2", "n04": "r2", "n05": "r1",
    "n06": "r0", "n07": "r2", "n08": "r2", "n09": "r0", "n10": "r1", "n11": "r2",
}  # fmt: skip
REPLICAS = (
    ("n00", "n01", "n02"),
    ("n03", "n04", "n05"),
    ("n06", "n07", "n08"),
    ("n09", "n10", "n11"),
)


def spanning() -> Inventory:
    racks = {name: rack(name) for name in ("r0", "r1", "r2")}
    devices = {n: node(n, r, i) for i, (n, r) in enumerate(sorted(PLACES.items()))}
    gang = Gang(name="g", nodes=tuple(sorted(PLACES)), dp_replicas=REPLICAS)
    return Inventory(devices, racks, {"g": gang})


def test_a_gang_spanning_racks_is_drained_within_its_bound() -> None:
    """After the canary, the gang is drained in no more waves than the caps force on
    its remaining nodes, for every seed."""
    fleet = spanning()
    changes = {n: firmware("1") for n in fleet.devices}
    strata = stratify(fleet, changes)
    caps = {"per_dp_replica": 1, "per_rack": 2}
    seat_of = seats(fleet, list(fleet.devices))
    for seed in range(12):
        built = spec(seed=seed, caps=caps, drain=True, waves={"first_wave": 20, "growth": 4.0})
        result = plan_waves(fleet, built, strata)
        later = [w for w in result.waves if not w.canary]
        rest = [n for n in fleet.devices if n not in set(result.canary)]
        assert len(later) <= fewest_waves(rest, seat_of, result.limits), (seed, later)


def test_colour_classes_respect_the_caps_and_the_bound() -> None:
    """Every class keeps to the caps; there are exactly as many as the caps force."""
    fleet = spanning()
    seat_of = seats(fleet, list(fleet.devices))
    limits = Limits.of(spec(caps={"per_dp_replica": 1, "per_rack": 2}).caps, 12)
    classes = colour_classes(sorted(PLACES), seat_of, limits)
    assert sorted(n for c in classes for n in c) == sorted(PLACES)
    assert len(classes) == fewest_waves(list(PLACES), seat_of, limits) == 4
    for members in classes:
        load = WaveLoad(limits, seat_of, None)
        for member in members:
            assert load.fits(member), (members, member)
            load.add(member)


def leaf(name: str, index: int) -> Device:
    return Device(
        name=name,
        role=Role.leaf,
        vendor="arista",
        model="7060DX5-64S",
        platform="eos",
        rack="net",
        mgmt=IPv4Address("10.1.0.0") + index + 1,
    )


def cabled() -> Inventory:
    """Four nodes (a gang of two, two in no gang), each cabled to a ToR pair."""
    racks = {"r1": rack("r1"), "net": rack("net")}
    devices = {n: node(n, "r1", i) for i, n in enumerate(("n1", "n2", "n3", "n4"))}
    devices |= {name: leaf(name, i) for i, name in enumerate(("tor-a", "tor-b", "tor-c", "tor-d"))}
    pairs = {"n1": ("tor-a", "tor-b"), "n2": ("tor-a", "tor-b"), "n3": ("tor-c", "tor-d")}
    pairs["n4"] = ("tor-c", "tor-d")
    links = tuple(
        Link.model_validate(
            {
                "a": n,
                "a_port": f"eth{i}",
                "b": t,
                "b_port": f"Ethernet{n[1]}",
                "class": LinkClass.host_leaf,
                "length_m": 3.0,
            }
        )
        for n, tors in pairs.items()
        for i, t in enumerate(tors)
    )
    gang = Gang(name="g", nodes=("n1", "n2"), gpus_per_node=8)
    return Inventory(devices, racks, {"g": gang}, links)


def switch_spec(**caps: object) -> object:
    return spec(
        targets={"select": "role=leaf"},
        drain=True,
        caps=caps,
        price={"drain_minutes": 60.0, "usd_per_gpu_hour": 2.0},
    )


def test_a_switch_drain_stalls_the_gangs_behind_it() -> None:
    """Draining tor-a stops gang g (16 GPUs behind it); tor-c has no gang behind it."""
    fleet = cabled()
    changes: dict[str, tuple[Change, ...]] = {
        t: (Change("system/nos_version", "1", "2"),) for t in ("tor-a", "tor-c")
    }
    plan = plan_changes(fleet, switch_spec(), changes)  # type: ignore[arg-type]
    assert plan.lower_bound.drains == {"g": 1}
    assert plan.lower_bound.gpu_hours == 16.0 and plan.lower_bound.usd == 32.0
    stalls = {w.wave.targets: w.stall.gpu_hours for w in plan.reports}
    assert stalls.get(("tor-c",), 0.0) == 0.0
    assert sum(stalls.values()) == plan.total.gpu_hours >= 16.0


def test_never_both_tors_of_a_pair_in_one_wave() -> None:
    """With caps.never_both_tors no wave holds two switches that share a host;
    without it the planner may put them together."""
    fleet = cabled()
    changes = {t: (Change("system/nos_version", "1", "2"),) for t in fleet.devices if "tor" in t}
    for seed in range(10):
        built = spec(
            targets={"select": "role=leaf"},
            caps={"never_both_tors": True},
            waves={"first_wave": 4},
            seed=seed,
        )
        plan = plan_changes(fleet, built, changes)
        for report in plan.reports:
            targets = set(report.wave.targets)
            assert not {"tor-a", "tor-b"} <= targets and not {"tor-c", "tor-d"} <= targets
        assert max(len(r.wave.targets) for r in plan.reports) == 2
    loose = plan_changes(
        fleet, spec(targets={"select": "role=leaf"}, waves={"first_wave": 4}), changes
    )
    assert any(len(r.wave.targets) == 3 for r in loose.reports)
