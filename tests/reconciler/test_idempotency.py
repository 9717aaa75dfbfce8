"""Idempotency: a pass right after a successful one is a no-op, for any valid intent,
any lab drift and, once faults clear, after any fault schedule."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from intent.fleet import Fleet
from lab.driver import create_lab
from lab.fleet import Fault, FaultKind
from reconciler.drivers.base import Outcome
from tests.fleetcopy import FleetCopy, copy_orion
from tests.reconciler.labfleet import LabFleet, in_place, seed_firing_at

VERBS_MTUS = (256, 512, 1024, 2048, 4096)
BUNDLES = {
    "hx8-2026.09": ("hx8-2026.06", "hx8-2026.09"),
    "eos-4.32.2F": ("eos-4.31.2F", "eos-4.32.2F"),
    "sonic-202411": ("sonic-202405", "sonic-202411"),
}
FAULT_KINDS = (
    "timeout_after_write",
    "timeout_before_write",
    "drop_mid_commit",
    "reboot_loses_unsaved",
    "reject",
    "unreachable",
    "unreachable_after_commit",  # unreachable from the first observe after a commit
)
# Draws: stage, compare, commit pass; the observe after the commit (and later) fails.
AFTER_COMMIT_SEED = seed_firing_at([False, False, False, True, True, True])
EXAMPLES = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Intent:
    mtu: tuple[int, int, int]  # host-leaf switch port, host, rdma
    ecn: tuple[int, int, int]  # kmin, kmax, xoff (KB)
    maximum_paths: int
    bundles: tuple[str, str, str]  # for HX8, EOS, SONiC

    def write(self, copy: FleetCopy, originals: dict[str, str]) -> None:
        switch, host, rdma = self.mtu
        copy.write(
            "intent/mtu.yaml",
            "mtu:\n"
            f"  host-leaf: {{switch_port: {switch}, host: {host}, rdma: {rdma}}}\n"
            f"  leaf-spine: {{switch_port: {switch}}}\n"
            "  frontend: {switch_port: 9214, host: 9000}\n",
        )
        kmin, kmax, xoff = self.ecn
        qos = originals["intent/qos.yaml"]
        qos = qos.replace("kmin_kb: 200, kmax_kb: 800", f"kmin_kb: {kmin}, kmax_kb: {kmax}")
        copy.write("intent/qos.yaml", qos.replace("pfc_xoff_kb: 400", f"pfc_xoff_kb: {xoff}"))
        bgp = originals["intent/bgp.yaml"]
        paths = f"maximum_paths: {self.maximum_paths}"
        copy.write("intent/bgp.yaml", bgp.replace("maximum_paths: 64", paths))
        groups = originals["intent/groups.yaml"]
        for declared, chosen in zip(BUNDLES, self.bundles, strict=True):
            groups = groups.replace(f"bundle: {declared}", f"bundle: {chosen}")
        copy.write("intent/groups.yaml", groups)


@st.composite
def intents(draw: st.DrawFn) -> Intent:
    """A valid intent: MTU layers that fit, kmin < kmax < xoff, enough ECMP paths, and
    for each model a bundle validated for it."""
    rdma = draw(st.sampled_from(VERBS_MTUS))
    host = draw(st.integers(max(1500, rdma + 64), 9192))
    switch = draw(st.integers(host + 22, 9214))
    kmin = draw(st.integers(50, 2000))
    kmax = draw(st.integers(kmin + 1, 4000))
    xoff = draw(st.integers(kmax + 1, 8000))
    bundles = tuple(draw(st.sampled_from(choices)) for choices in BUNDLES.values())
    return Intent(
        (switch, host, rdma),
        (kmin, kmax, xoff),
        draw(st.integers(32, 1024)),
        (bundles[0], bundles[1], bundles[2]),
    )


@dataclass
class World:
    """One ORION copy for a whole property: the lab is rebuilt for every example."""

    lab: LabFleet
    base: Fleet
    originals: dict[str, str]

    def __repr__(self) -> str:
        return f"World({self.lab.root})"

    def reset(self, *, seed: int, drift: int) -> None:
        for relative, text in self.originals.items():
            self.lab.copy.write(relative, text)
        self.lab.fleet = self.base
        create_lab(self.lab.store, self.base, seed=seed, drift=drift)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    copy = copy_orion(tmp_path_factory.mktemp("idempotency"))
    lab = LabFleet.create(copy)
    names = ("intent/mtu.yaml", "intent/qos.yaml", "intent/bgp.yaml", "intent/groups.yaml")
    originals = {name: (copy.path / name).read_text() for name in names}
    yield World(lab, lab.fleet, originals)
    lab.close()


def test_apply_on_a_fresh_lab_leaves_an_empty_plan_on_every_device(lab: LabFleet) -> None:
    """On a fresh ORION lab one apply brings every device to intent: the next plan is empty."""
    first = lab.plan()
    assert first.change_count() > 0 and first.refused is None
    report = lab.apply(first)
    assert report.ok(), report.stopped
    assert set(report.by_outcome()) == {"applied"}
    again = lab.plan()
    assert again.is_empty()
    assert sorted(again.devices) == sorted(lab.fleet.devices)
    assert all(not dp.changes and dp.unknown is None for dp in again.devices.values())


@EXAMPLES
@given(intent=intents(), seed=st.integers(0, 10_000), drift=st.integers(0, 14))
def test_any_valid_intent_converges_in_one_apply_and_then_writes_nothing(
    world: World, intent: Intent, seed: int, drift: int
) -> None:
    """For random valid intent over a randomly drifted lab, plan -> apply -> plan is
    empty and a second apply writes nothing."""
    world.reset(seed=seed, drift=drift)
    intent.write(world.lab.copy, world.originals)
    world.lab.reload()
    plan = world.lab.plan()
    assert plan.refused is None, plan.refused
    report = world.lab.apply(plan)
    assert report.ok(), report.stopped
    assert set(report.by_outcome()) <= {"applied"}
    after = world.lab.plan()
    assert after.is_empty(), after.changes()
    writes = world.lab.writes()
    second = world.lab.apply(after)
    assert second.results == () and second.stopped is None
    assert world.lab.writes() == writes


Schedule = dict[str, list[tuple[str, int]]]


def _inject(lab: LabFleet, schedule: Schedule, fault_seed: int) -> None:
    for device, faults in schedule.items():
        for kind, count in faults:
            if kind == "unreachable_after_commit":
                fault = Fault(
                    device,
                    FaultKind.unreachable,
                    count=count,
                    probability=0.5,
                    seed=AFTER_COMMIT_SEED,
                )
            else:
                fault = Fault(device, FaultKind(kind), count=count, seed=fault_seed)
            lab.store.add_fault(fault)


def _schedules(names: list[str]) -> st.SearchStrategy[Schedule]:
    faults = st.lists(
        st.tuples(st.sampled_from(FAULT_KINDS), st.integers(1, 2)), min_size=1, max_size=2
    )
    return st.dictionaries(st.sampled_from(names), faults, min_size=1, max_size=5)


@EXAMPLES
@given(data=st.data(), seed=st.integers(0, 10_000), fault_seed=st.integers(0, 10_000))
def test_faults_are_reported_truthfully_and_the_fleet_converges_once_they_clear(
    world: World, data: st.DataObject, seed: int, fault_seed: int
) -> None:
    """Under any fault schedule apply never reports applied for a write that did not
    land nor failed for one that did, the audit chain verifies, and once the faults
    clear repeated passes reach an empty plan within three."""
    world.reset(seed=seed, drift=6)
    lab = world.lab
    schedule = data.draw(_schedules(sorted(lab.fleet.devices)), label="schedule")
    before_plan = data.draw(st.booleans(), label="inject before the plan")
    if before_plan:
        _inject(lab, schedule, fault_seed)
    plan = lab.plan()
    if not before_plan:
        _inject(lab, schedule, fault_seed)
    for device in plan.unknown():
        kinds = {kind for kind, _ in schedule.get(device, [])}
        assert before_plan and kinds & {"unreachable", "unreachable_after_commit"}, device
    if plan.refused is not None:  # a pairwise change faces an unknown device
        assert plan.unknown() and "could not be observed" in plan.refused, plan.refused

    db = lab.state_db()
    try:
        writes = lab.writes()
        report = lab.apply(plan, db=db)
        if plan.refused is not None:
            assert report.results == () and lab.writes() == writes
        running = lab.running()
        for result in report.results:
            event(f"outcome: {result.outcome.value}")
            landed = in_place(running[result.device], result.changes)
            kinds = {kind for kind, _ in schedule.get(result.device, [])}
            if result.outcome is Outcome.applied:
                saved = lab.store.read_startup(result.device)
                assert all(landed) and all(in_place(saved, result.changes)), result
            elif result.outcome is Outcome.failed:
                assert kinds, f"{result.device} failed without a fault: {result.error}"
                assert not any(landed), f"failed, but the write landed: {result}"
            else:
                assert result.outcome is Outcome.unknown, result
                assert kinds & {"unreachable", "unreachable_after_commit"}, result
                assert result.error is not None and "observe failed" in result.error
            assert result.device not in plan.unknown()
        verdict = db.audit.verify()
        assert verdict.ok, verdict.problems
    finally:
        db.close()

    lab.store.clear_faults()
    for _ in range(3):
        plan = lab.plan()
        if plan.is_empty():
            break
        assert plan.refused is None, plan.refused
        lab.apply(plan)
    assert lab.plan().is_empty()
