"""Price: stalled GPU-hours of a plan against its bounds, and the ORION-shaped figures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.models import Device, Gang
from rollouts.caps import PlanError
from rollouts.planning import plan_changes
from rollouts.topology import Inventory
from tests.rollouts.fleets import Case, cases, firmware, node, orion_like, rack, spec

PROPERTIES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTIES
@given(cases(drain=True))
def test_stalled_work_is_at_least_the_cap_bound_which_is_at_least_the_lower_bound(
    case: Case,
) -> None:
    """No plan stalls less than its gangs drained as few times as the caps allow, and
    that is never less than every gang drained once."""
    try:
        result = plan_changes(case.fleet, case.spec, case.changes)
    except PlanError:
        return
    assert result.total.gpu_hours >= result.cap_bound.gpu_hours - 1e-9
    assert result.cap_bound.gpu_hours >= result.lower_bound.gpu_hours - 1e-9
    assert sum(r.stall.gpu_hours for r in result.reports) == pytest.approx(result.total.gpu_hours)
    for gang, drains in result.total.drains.items():
        assert drains >= result.cap_bound.drains[gang]


@st.composite
def roomy(draw: st.DrawFn) -> Case:
    """Every stratum has a gang-less member in a rack of its own, no caps, and the
    first wave after the canary holds everything: the caps allow the lower bound."""
    strata = draw(st.integers(1, 4))
    racks = {f"free{s}": rack(f"free{s}") for s in range(strata)}
    devices: dict[str, Device] = {}
    revision: dict[str, int] = {}
    for s in range(strata):
        for _ in range(draw(st.integers(1, 3))):
            name = f"n{len(devices):02d}"
            devices[name] = node(name, f"free{s}", len(devices))
            revision[name] = s
    gangs: dict[str, Gang] = {}
    for g in range(draw(st.integers(1, 3))):
        racks[f"g{g}"] = rack(f"g{g}")
        members = []
        for _ in range(draw(st.integers(1, 6))):
            name = f"n{len(devices):02d}"
            devices[name] = node(name, f"g{g}", len(devices))
            revision[name] = draw(st.integers(0, strata - 1))
            members.append(name)
        gangs[f"g{g}"] = Gang(name=f"g{g}", nodes=tuple(members), gpus_per_node=8)
    changes = {n: firmware(str(revision[n])) for n in devices}
    built = spec(drain=True, waves={"first_wave": len(devices)}, seed=draw(st.integers(0, 99)))
    return Case(Inventory(devices, racks, gangs), changes, built)


@PROPERTIES
@given(roomy())
def test_stalled_work_equals_the_lower_bound_when_the_caps_allow(case: Case) -> None:
    """A gang-less canary and room for every gang in one wave: each gang drains once."""
    result = plan_changes(case.fleet, case.spec, case.changes)
    assert result.total == result.lower_bound
    assert all(n == 1 for n in result.total.drains.values())


def test_nodes_in_no_gang_stall_nothing() -> None:
    """A rollout over gang-less nodes costs no GPU-hours even with drain."""
    fleet = Inventory({f"n{i}": node(f"n{i}", "r1", i) for i in range(4)}, {"r1": rack("r1")}, {})
    result = plan_changes(fleet, spec(drain=True), {n: firmware("1") for n in fleet.devices})
    assert result.total.gpu_hours == 0.0 and result.lower_bound.gpu_hours == 0.0


def test_orion_shape_figures() -> None:
    """ORION's caps (per_rack 2, per_dp_replica 1, per_wave 8, drain 20 min at $3): gang a
    (128 GPUs) needs 4 drains, gang b (96 GPUs) 4; the canary drains b with one node of
    each of its replicas (its A1 canary and two riders), so the plan is the caps' bound:
    298.7 GPU-h, $896, beside 74.7 GPU-h once each."""
    fleet = orion_like()
    changes = {n: firmware("1") for n in fleet.devices}
    result = plan_changes(
        fleet,
        spec(
            drain=True,
            strata={"extra_attributes": ["label.nic_revision"]},
            caps={"per_wave": 8, "per_rack": 2, "per_dp_replica": 1},
        ),
        changes,
    )
    assert result.lower_bound.gpu_hours == pytest.approx((128 + 96) / 3)
    assert result.cap_bound.drains == {"a": 4, "b": 4}
    assert result.total.drains == {"a": 4, "b": 4}
    assert result.total.gpu_hours == pytest.approx((4 * 128 + 4 * 96) / 3)
    assert result.total.usd == pytest.approx(896.0)
    assert result.total == result.cap_bound


def test_no_drain_no_price() -> None:
    """Without drain, nothing stalls, whatever the gangs."""
    fleet = orion_like()
    result = plan_changes(fleet, spec(drain=False), {n: firmware("1") for n in fleet.devices})
    assert result.total.gpu_hours == 0.0 and result.cap_bound.gpu_hours == 0.0
