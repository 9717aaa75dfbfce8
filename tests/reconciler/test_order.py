"""Invariant-preserving order: every intermediate fleet state of a plan is safe, and a
plan whose safety depends on a device outside it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from intent.fleet import Fleet
from reconciler.invariants import breaches_around
from reconciler.order import (
    PHASES,
    Step,
    UnsafePlan,
    faced,
    order_changes,
    ports_changed,
    prove_order,
)
from reconciler.plan import build_plan, ordered_plan, plan_devices
from reconciler.render import render_desired
from reconciler.settings import Change, Scalar, apply_changes, as_desired_state
from tests.fleetcopy import FleetCopy, copy_orion

VERBS = [256, 512, 1024, 2048, 4096]


def _states(fleet: Fleet) -> dict[str, dict[str, Scalar]]:
    return {name: as_desired_state(d) for name, d in render_desired(fleet).items()}


def _mtu_yaml(switch: int, host: int, rdma: int) -> str:
    return (
        "mtu:\n"
        f"  host-leaf: {{switch_port: {switch}, host: {host}, rdma: {rdma}}}\n"
        f"  leaf-spine: {{switch_port: {switch}}}\n"
        "  frontend: {switch_port: 9214, host: 9000}\n"
    )


@st.composite
def _valid_mtu(draw: st.DrawFn) -> tuple[int, int, int]:
    """A (switch_port, host, rdma) triple that satisfies both MTU policies."""
    rdma = draw(st.sampled_from(VERBS))
    host = draw(st.integers(max(1500, rdma + 64), 9192))
    switch = draw(st.integers(host + 22, 9214))
    return switch, host, rdma


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    return copy_orion(tmp_path_factory.mktemp("order"))


def _walk(fleet: Fleet, start: dict[str, dict[str, Scalar]], plan_steps: list) -> dict:
    """Apply steps one by one, asserting no breach exists anywhere after each."""
    states = {n: dict(s) for n, s in start.items()}
    for step in plan_steps:
        for device, changes in step.changes.items():
            states[device] = apply_changes(states[device], changes)
        breaches = breaches_around(fleet, states, list(fleet.devices))
        assert not breaches, f"after step {step.index} ({step.phase}): {sorted(breaches)[:3]}"
    return states


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=_valid_mtu(), after=_valid_mtu())
def test_random_mtu_changes_pass_only_through_safe_states(
    base: FleetCopy,
    before: tuple[int, int, int],
    after: tuple[int, int, int],
) -> None:
    """For any valid MTU triple changed into any other valid one, every step is safe."""
    copy = base
    copy.write("intent/mtu.yaml", _mtu_yaml(*before))
    start_fleet = copy.load()
    start = _states(start_fleet)
    copy.write("intent/mtu.yaml", _mtu_yaml(*after))
    fleet = copy.load()
    desired = render_desired(fleet)
    plan = build_plan(fleet, desired, start)
    assert plan.refused is None
    final = _walk(fleet, start, list(plan.steps))
    assert final == {n: as_desired_state(d) for n, d in desired.items()}


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    roce=st.integers(0, 5),
    spine_asn=st.integers(64512, 64590),
    mtu=_valid_mtu(),
)
def test_random_qos_bgp_and_mtu_changes_together_stay_safe(
    base: FleetCopy,
    roce: int,
    spine_asn: int,
    mtu: tuple[int, int, int],
) -> None:
    """Changing RoCE priority, spine ASN and MTU at once still passes only safe states."""
    copy = base
    copy.write("intent/mtu.yaml", _mtu_yaml(9214, 9000, 4096))
    start = _states(copy.load())
    copy.write("intent/mtu.yaml", _mtu_yaml(*mtu))
    qos = (copy.path / "intent/qos.yaml").read_text()
    copy.write(
        "intent/qos.yaml",
        qos.replace("priority: 3}", f"priority: {roce}}}")
        .replace("{priority: 3,", f"{{priority: {roce},")
        .replace("roce_priority: 3", f"roce_priority: {roce}")
        .replace("pfc_priorities: [3]", f"pfc_priorities: [{roce}]"),
    )
    copy.replace("intent/bgp.yaml", "spine_asn: 64600", f"spine_asn: {spine_asn}")
    try:
        fleet = copy.load()
        assert copy.evaluate().exit_code() == 0
        plan = build_plan(fleet, render_desired(fleet), start)
        assert plan.refused is None
        _walk(fleet, start, list(plan.steps))
    finally:
        copy.write("intent/qos.yaml", qos)
        copy.replace("intent/bgp.yaml", f"spine_asn: {spine_asn}", "spine_asn: 64600")


def test_raising_mtu_changes_switches_before_hosts(tmp_path: Path) -> None:
    """A fleet-wide MTU raise orders switch ports first, host NICs after."""
    copy = copy_orion(tmp_path)
    copy.write("intent/mtu.yaml", _mtu_yaml(9100, 9000, 4096).replace("9000}", "9000}"))
    start = _states(copy.load())
    copy.write("intent/mtu.yaml", _mtu_yaml(9214, 9192, 4096))
    fleet = copy.load()
    plan = build_plan(fleet, render_desired(fleet), start)
    phases = [s.phase for s in plan.steps]
    assert phases.index("mtu-raise-switch") < phases.index("mtu-host")


def test_lowering_mtu_changes_hosts_before_switches(tmp_path: Path) -> None:
    """A fleet-wide MTU cut orders RDMA, then host NICs, then switch ports."""
    copy = copy_orion(tmp_path)
    start = _states(copy.load())
    copy.write("intent/mtu.yaml", _mtu_yaml(2200, 2150, 2048))
    fleet = copy.load()
    plan = build_plan(fleet, render_desired(fleet), start)
    phases = [s.phase for s in plan.steps]
    assert phases == ["rdma-lower", "mtu-host", "mtu-lower-switch"]


def test_plan_is_refused_when_the_switch_is_not_in_it(tmp_path: Path) -> None:
    """Raising host MTU without the switch ports in the plan has no safe order."""
    copy = copy_orion(tmp_path)
    copy.write("intent/mtu.yaml", _mtu_yaml(9100, 9000, 4096))
    start = _states(copy.load())
    copy.write("intent/mtu.yaml", _mtu_yaml(9214, 9192, 4096))
    fleet = copy.load()
    hosts = [n for n, d in fleet.devices.items() if d.role.value == "gpu-node"]
    plan = build_plan(fleet, render_desired(fleet, hosts), start)
    assert plan.refused is not None
    assert "mtu-host" in plan.refused and "+ 22 >" in plan.refused


def test_prove_order_raises_on_a_one_sided_qos_change(tmp_path: Path) -> None:
    """Changing PFC on a host but not its leaf breaks the pair, and the proof says so."""
    copy = copy_orion(tmp_path)
    fleet = copy.load()
    start = _states(fleet)
    from reconciler.settings import Change

    changes = {"gpu-n01": [Change("nics/eth0/pfc_priorities", "3", "4")]}
    steps = order_changes(fleet, changes)
    assert [s.phase for s in steps] == ["qos-pairs"]
    with pytest.raises(UnsafePlan) as caught:
        prove_order(fleet, start, steps)
    assert any(b.rule == "qos.pfc-pair" for b in caught.value.breaches)


def test_phases_are_a_fixed_total_order() -> None:
    """The phase list names each phase once; steps follow it."""
    assert len(PHASES) == len(set(PHASES))


def _verdict_checking_every_port(
    fleet: Fleet, observed: dict[str, dict[str, Scalar]], steps: list[Step]
) -> tuple[str, list[str]] | None:
    """The proof as it was before it narrowed to changed ports: every port of every
    device in a step, before and after it."""
    states = {n: dict(s) for n, s in observed.items()}
    for step in steps:
        touched = step.devices()
        before = breaches_around(fleet, states, touched)
        for device, changes in step.changes.items():
            states[device] = apply_changes(states.get(device, {}), changes)
        new = sorted(breaches_around(fleet, states, touched) - before)
        if new:
            return step.phase, [b.subject for b in new]
    return None


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=_valid_mtu(),
    after=_valid_mtu(),
    roce=st.integers(0, 5),
    left_out=st.sets(st.integers(0, 200), max_size=12),
)
def test_checking_changed_ports_decides_as_checking_every_port(
    base: FleetCopy,
    before: tuple[int, int, int],
    after: tuple[int, int, int],
    roce: int,
    left_out: set[int],
) -> None:
    """With random devices left out of a random MTU and PFC change (so some orders are
    unsafe), the proof over changed ports refuses exactly what the all-port proof does."""
    copy = base
    copy.write("intent/mtu.yaml", _mtu_yaml(*before))
    fleet = copy.load()
    start = _states(fleet)
    copy.write("intent/mtu.yaml", _mtu_yaml(*after))
    fleet = copy.load()
    wanted = _states(fleet)
    names = sorted(wanted)
    skipped = {names[i % len(names)] for i in left_out}
    changes = {
        name: [
            Change(path, start[name].get(path), value)
            for path, value in sorted(wanted[name].items())
            if start[name].get(path) != value
        ]
        + [
            Change(
                f"{prefix}/pfc_priorities", start[name].get(f"{prefix}/pfc_priorities"), str(roce)
            )
            for prefix in sorted(
                {p.rsplit("/", 1)[0] for p in start[name] if p.endswith("/pfc_priorities")}
            )[:1]
        ]
        for name in names
        if name not in skipped
    }
    steps = order_changes(fleet, {n: cs for n, cs in changes.items() if cs})
    expected = _verdict_checking_every_port(fleet, start, steps)
    try:
        prove_order(fleet, start, steps)
        got = None
    except UnsafePlan as exc:
        got = (exc.phase, [b.subject for b in exc.breaches])
    assert got == expected


def test_ports_changed_names_the_ports_an_invariant_reads() -> None:
    """Port settings name their port, device-wide ones every port, the rest none."""
    assert ports_changed([Change("interfaces/Ethernet1/1/mtu", 9100, 9214)]) == {"Ethernet1/1"}
    assert ports_changed([Change("nics/eth0/rdma_mtu", 2048, 4096)]) == {"eth0"}
    assert ports_changed([Change("interfaces/Ethernet3/ipv6_address", None, "fc00::1/127")]) == {
        "Ethernet3"
    }  # the remote-as invariant finds an IPv6 neighbour by its peer's address
    assert ports_changed([Change("interfaces/Ethernet2/description", "a", "b")]) == set()
    assert ports_changed([Change("firmware/nic", "28.41", "28.43")]) == set()
    assert ports_changed([Change("bgp/asn", 64600, 64601)]) is None
    assert ports_changed([Change("qos/dscp/26", 3, 4)]) is None
    assert ports_changed([Change("bgp/neighbors/10.0.0.1/remote_as", 1, 2)]) is None


def test_a_firmware_step_checks_no_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that moves only firmware asks the invariants about no port at all."""
    import reconciler.order

    copy = copy_orion(tmp_path)
    fleet = copy.load()
    start = _states(fleet)
    asked: list[dict[str, object]] = []
    real = reconciler.order.breaches_on_ports

    def spy(fleet: Fleet, states: object, ports: dict[str, object], dscp: object) -> object:
        asked.append(dict(ports))
        return real(fleet, states, ports, dscp)  # type: ignore[arg-type]

    monkeypatch.setattr(reconciler.order, "breaches_on_ports", spy)
    steps = order_changes(fleet, {n: [Change("firmware/bios", "1.0", "1.1")] for n in start})
    prove_order(fleet, start, steps)
    assert asked == [{}, {}]


def test_a_neighbours_filter_comes_and_goes_with_the_neighbour(base: FleetCopy) -> None:
    """A filter set on a neighbour being created, or cleared with one being removed, is
    written in the step that writes its remote-as (FRR takes no filter without the
    neighbour); a filter changed on a neighbour that stays is device-local."""
    fleet = base.load()
    leaf = next(n for n, d in fleet.devices.items() if d.role.value == "leaf")
    changes = {
        leaf: [
            Change("bgp/neighbors/Ethernet33/remote_as", None, 64600),
            Change("bgp/neighbors/Ethernet33/inbound_filter", None, "FABRIC-IN"),
            Change("bgp/neighbors/10.0.0.0/remote_as", 64600, None),
            Change("bgp/neighbors/10.0.0.0/inbound_filter", "FABRIC-IN", None),
            Change("bgp/neighbors/10.0.0.16/inbound_filter", "FABRIC-IN", "OTHER"),
        ]
    }
    steps = {s.phase: [c.path for c in s.changes[leaf]] for s in order_changes(fleet, changes)}
    assert steps["device-local"] == ["bgp/neighbors/10.0.0.16/inbound_filter"]
    assert len(steps["bgp-pairs"]) == 4


def test_an_ipv6_address_changes_with_its_session(base: FleetCopy) -> None:
    """A port's /127 keys the peer's IPv6 neighbour as its /31 keys the IPv4 one: it is
    written in the bgp-pairs step, both ends of the session at once."""
    fleet = base.load()
    leaf = next(n for n, d in fleet.devices.items() if d.role.value == "leaf")
    change = Change("interfaces/Ethernet33/ipv6_address", None, "fc00::1/127")
    assert [s.phase for s in order_changes(fleet, {leaf: [change]})] == ["bgp-pairs"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=_valid_mtu(),
    after=_valid_mtu(),
    selected=st.sets(st.integers(0, 200), min_size=1, max_size=20),
    dark=st.sets(st.integers(0, 200), max_size=6),
    drifted=st.sets(st.integers(0, 200), max_size=6),
)
def test_the_proof_reads_only_the_neighbours_the_changes_face(
    base: FleetCopy,
    before: tuple[int, int, int],
    after: tuple[int, int, int],
    selected: set[int],
    dark: set[int],
    drifted: set[int],
) -> None:
    """A random selection planned from its own states and those of the devices its
    changes face (:func:`faced`) is ordered, proved or refused exactly as when every
    device of the fleet is observed: also with devices that cannot be observed, and with
    device-wide changes (an ASN, a PFC setting moved by hand)."""
    copy = base
    copy.write("intent/mtu.yaml", _mtu_yaml(*before))
    start: dict[str, dict[str, Scalar] | None] = dict(_states(copy.load()))
    copy.write("intent/mtu.yaml", _mtu_yaml(*after))
    fleet = copy.load()
    names = sorted(fleet.devices)
    for i in drifted:
        state = dict(start[names[i % len(names)]] or {})
        if isinstance(state.get("bgp/asn"), int):
            state["bgp/asn"] = state["bgp/asn"] + 1
        for path in [p for p in state if p.endswith("/pfc_priorities")][:1]:
            state[path] = "3,4"
        start[names[i % len(names)]] = state
    for i in dark:
        start[names[i % len(names)]] = None
    chosen = sorted({names[i % len(names)] for i in selected})
    plans = plan_devices(fleet, render_desired(fleet, chosen), start)
    changes = {n: dp.changes for n, dp in plans.items() if dp.changes}
    read = set(chosen) | faced(fleet, changes)
    everyone = ordered_plan(fleet, plans, start)
    facing = ordered_plan(fleet, plans, {n: s for n, s in start.items() if n in read})
    assert (facing.refused, facing.steps) == (everyone.refused, everyone.steps)
