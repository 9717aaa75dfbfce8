"""Caps on switch waves and an honest bound: caps.per_role holds at most N devices of a
role (tier) in a wave and is refused at its line when wrong; with never_both_tors the
caps' bound counts the switches that share a host, each of which needs a wave of its
own."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.models import Gang, Role
from reconciler.settings import Change
from rollouts.caps import PlanError
from rollouts.load import load_rollout
from rollouts.planning import plan_changes
from rollouts.topology import Inventory
from tests.rollouts.fleets import host_cable, node, rack, spec, switch

NOS = (Change("system/nos_version", "1", "2"),)


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
