"""The reconcile loop against the lab: what each fault is reported as, how a failed
step stops the apply, dry runs, unknown devices, ownership, unmanaged fields, holds."""

from __future__ import annotations

import random

import pytest

from ci.planfmt import plan_json, plan_text
from lab.fleet import Fault, FaultKind, is_unmanaged
from reconciler.drivers.base import Outcome
from reconciler.settings import Change
from tests.reconciler.labfleet import LabFleet, run_plumb, seed_firing_at

PATH = "bgp/maximum_paths"
# An unreachable fault (probability 0.5) that lets stage, compare and commit through
# and fires from the next operation on: the observe right after the commit.
AFTER_COMMIT_SEED = seed_firing_at([False, False, False, True, True, True])


def _drift_one(lab: LabFleet, device: str = "spine-1", value: int = 16) -> Change:
    """Change one field on one lab device by hand; the plan is then that one change."""
    lab.store.commit(device, {PATH: value}, save=True)
    plan = lab.plan()
    assert plan.changes() == {device: (Change(PATH, value, 64, plan.changes()[device][0].owner),)}
    return plan.changes()[device][0]


def _landed_seed(landed: bool) -> int:
    """A drop_mid_commit seed whose first firing lands the commit (or not)."""
    for seed in range(1000):
        rng = random.Random(f"{seed}/0")
        rng.random()  # the firing decision
        if (rng.random() < 0.5) == landed:
            return seed
    raise AssertionError("no seed")


def test_timeout_after_write_is_reobserved_and_reported_applied(clean_lab: LabFleet) -> None:
    """A commit that lands and then times out is re-observed and reported applied."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    clean_lab.store.add_fault(Fault("spine-1", FaultKind.timeout_after_write, count=1))
    (result,) = clean_lab.apply(plan).results
    assert result.outcome is Outcome.applied
    assert result.error is not None and "re-observed: all 1 change(s) in place" in result.error
    assert clean_lab.store.read_running("spine-1")[PATH] == 64


def test_timeout_after_write_under_commit_confirm_is_confirmed(clean_lab: LabFleet) -> None:
    """Under commit-confirm, a landed commit that timed out is confirmed after the
    re-observe, so the device does not revert it."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    clean_lab.store.add_fault(Fault("spine-1", FaultKind.timeout_after_write, count=1))
    (result,) = clean_lab.apply(plan, confirm_within=60.0).results
    assert result.outcome is Outcome.applied
    assert clean_lab.store.expired_pending(float("inf")) == []


def test_timeout_before_write_is_reported_failed_not_applied(clean_lab: LabFleet) -> None:
    """A commit that times out before writing is re-observed and reported failed."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    writes = clean_lab.writes()
    clean_lab.store.add_fault(Fault("spine-1", FaultKind.timeout_before_write, count=1))
    (result,) = clean_lab.apply(plan).results
    assert result.outcome is Outcome.failed
    assert result.error is not None and "re-observed: not applied" in result.error
    assert clean_lab.writes() == writes
    assert clean_lab.store.read_running("spine-1")[PATH] == 16


def test_timeout_then_unreachable_is_unknown_and_never_retried(clean_lab: LabFleet) -> None:
    """A timeout whose re-observe cannot reach the device is unknown, and the write is
    not tried again (exactly one commit)."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    writes = clean_lab.writes()
    clean_lab.store.add_fault(Fault("spine-1", FaultKind.timeout_after_write, count=1))
    clean_lab.store.add_fault(
        Fault("spine-1", FaultKind.unreachable, probability=0.5, seed=AFTER_COMMIT_SEED)
    )
    report = clean_lab.apply(plan)
    (result,) = report.results
    assert result.outcome is Outcome.unknown
    assert result.error is not None and "re-observe failed" in result.error
    assert clean_lab.writes() == writes + 1
    assert not report.ok()


@pytest.mark.parametrize("confirm_within", [None, 60.0])
def test_a_device_unobservable_right_after_its_commit_is_unknown(
    clean_lab: LabFleet, confirm_within: float | None
) -> None:
    """A commit that went out but cannot be verified is unknown, never failed."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    clean_lab.store.add_fault(
        Fault("spine-1", FaultKind.unreachable, probability=0.5, seed=AFTER_COMMIT_SEED)
    )
    (result,) = clean_lab.apply(plan, confirm_within=confirm_within).results
    assert result.outcome is Outcome.unknown, result.error
    assert clean_lab.store.read_running("spine-1")[PATH] == 64


@pytest.mark.parametrize("landed", [True, False])
def test_drop_mid_commit_is_applied_exactly_when_the_commit_landed(
    clean_lab: LabFleet, landed: bool
) -> None:
    """A dropped commit is re-observed: applied if it landed, failed if it did not."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    seed = _landed_seed(landed)
    clean_lab.store.add_fault(Fault("spine-1", FaultKind.drop_mid_commit, count=1, seed=seed))
    (result,) = clean_lab.apply(plan).results
    assert result.outcome is (Outcome.applied if landed else Outcome.failed)
    assert (clean_lab.store.read_running("spine-1")[PATH] == 64) is landed


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        (FaultKind.reboot_loses_unsaved, "re-observed: not applied"),
        (FaultKind.reject, "ConfigRejected: stage: bgp/maximum_paths"),
        (FaultKind.unreachable, "DeviceUnreachable: stage"),
        (FaultKind.auth_fail, "terminal: DeviceAuthError"),
    ],
)
def test_faults_that_write_nothing_are_reported_failed(
    clean_lab: LabFleet, kind: FaultKind, error: str
) -> None:
    """A rejected, lost, unreachable or refused write is failed and the device keeps
    its value."""
    _drift_one(clean_lab)
    plan = clean_lab.plan()
    clean_lab.store.add_fault(Fault("spine-1", kind))
    (result,) = clean_lab.apply(plan).results
    assert result.outcome is Outcome.failed
    assert result.error is not None and error in result.error
    assert clean_lab.store.read_running("spine-1")[PATH] == 16


def test_a_failed_device_stops_the_later_steps(lab: LabFleet) -> None:
    """A step with a failed device runs to its end, and no later step is started."""
    plan = lab.plan()
    assert len(plan.steps) > 1
    first, later = plan.steps[0], plan.steps[1:]
    victim = first.devices()[0]
    lab.store.add_fault(Fault(victim, FaultKind.reject))
    running = lab.running()
    report = lab.apply(plan)
    outcomes = {r.device: r.outcome for r in report.results}
    assert outcomes.pop(victim) is Outcome.failed
    assert set(outcomes) == set(first.devices()) - {victim}
    assert set(outcomes.values()) == {Outcome.applied}
    assert report.stopped is not None and report.stopped.startswith("step 1 ")
    assert set(report.not_started) == {d for step in later for d in step.devices()}
    after = lab.running()
    for step in later:
        for device, changes in step.changes.items():
            assert all(after[device][c.path] == running[device][c.path] for c in changes)


def test_dry_run_writes_nothing_and_reports_planned(lab: LabFleet) -> None:
    """A dry run stages and compares every change, writes nothing and says planned."""
    plan = lab.plan()
    counters, running = lab.store.counters(), lab.running()
    report = lab.apply(plan, dry_run=True)
    assert report.ok()
    assert report.by_outcome() == {"planned": sum(len(s.changes) for s in plan.steps)}
    assert lab.store.counters() == counters
    assert lab.running() == running


def test_unobservable_devices_are_unknown_in_the_plan(lab: LabFleet) -> None:
    """A device that cannot be observed is unknown, with nothing planned for it, and
    `plumb plan` exits 1."""
    lab.store.add_fault(Fault("leaf-r3", FaultKind.unreachable))
    plan = lab.plan()
    assert plan.unknown() == {"leaf-r3": "DeviceUnreachable: observe: injected fault unreachable"}
    assert plan.devices["leaf-r3"].changes == ()
    assert not plan.is_empty()
    done = run_plumb(lab.root, "plan")
    assert done.returncode == 1, done.stderr
    assert "UNKNOWN leaf-r3: DeviceUnreachable" in done.stdout


def test_a_pairwise_change_facing_an_unobservable_device_is_refused(clean_lab: LabFleet) -> None:
    """A change that must agree with a device that cannot be observed is refused, since
    no proof can see the other end, and apply writes nothing."""
    clean_lab.store.commit("gpu-n01", {"nics/eth0/pfc_priorities": "3,4"}, save=True)
    clean_lab.store.add_fault(Fault("leaf-r0", FaultKind.unreachable))
    plan = clean_lab.plan()
    assert plan.refused is not None
    assert plan.refused.startswith(
        "no safe order can be proved: gpu-n01:eth0 changes in the qos-pairs step but its "
        "peer leaf-r0 could not be observed"
    )
    writes = clean_lab.writes()
    report = clean_lab.apply(plan)
    assert report.results == () and report.stopped is not None
    assert report.stopped.startswith("plan refused: ")
    assert clean_lab.writes() == writes


def test_changes_that_do_not_face_an_unobservable_device_still_plan(clean_lab: LabFleet) -> None:
    """Device-local changes next to an unknown device, and pairwise changes on links
    to other devices, are planned and applied as usual."""
    clean_lab.store.commit("gpu-n01", {"nics/eth1/pfc_priorities": "3,4"}, save=True)
    clean_lab.store.commit("spine-1", {PATH: 16}, save=True)
    clean_lab.store.add_fault(Fault("leaf-r0", FaultKind.unreachable))
    plan = clean_lab.plan()
    assert plan.refused is None
    assert set(plan.unknown()) == {"leaf-r0"}
    assert {n: [c.path for c in cs] for n, cs in plan.changes().items()} == {
        "gpu-n01": ["nics/eth1/pfc_priorities"],
        "spine-1": [PATH],
    }
    assert set(clean_lab.apply(plan).by_outcome()) == {"applied"}


OWNERSHIP = """
ownership:
  - owner: qos-tuner
    paths: ["qos/ecn/3/kmax_kb", "qos/ecn/*/kmin_kb"]
    devices: ["leaf-*"]
"""


def test_fields_owned_by_another_writer_are_conflicts_never_written(clean_lab: LabFleet) -> None:
    """A field another system owns is reported as a conflict and never written, even
    when intent wants another value; other devices still get the change."""
    clean_lab.copy.append("plumb.yaml", OWNERSHIP)
    clean_lab.copy.replace("intent/qos.yaml", "kmax_kb: 800", "kmax_kb: 700")
    fleet = clean_lab.reload()
    leaves = sorted(n for n, d in fleet.devices.items() if d.role.value == "leaf")
    plan = clean_lab.plan()
    for leaf in leaves:
        (conflict,) = plan.devices[leaf].conflicts
        assert (conflict.path, conflict.owner) == ("qos/ecn/3/kmax_kb", "qos-tuner")
        assert (conflict.intended, conflict.observed) == (700, 800)
        assert plan.devices[leaf].changes == ()
    assert "spine-1" in plan.changes()
    text = plan_text(plan, fleet="orion")
    assert "CONFLICT leaf-r0 qos/ecn/3/kmax_kb: owned by qos-tuner" in text
    assert plan_json(plan, fleet="orion", commit=None)["summary"]["conflicts"] == len(leaves)
    assert clean_lab.apply(plan).ok()
    running = clean_lab.running()
    assert {running[leaf]["qos/ecn/3/kmax_kb"] for leaf in leaves} == {800}
    assert running["spine-1"]["qos/ecn/3/kmax_kb"] == 700
    again = clean_lab.plan()
    assert again.change_count() == 0
    assert sum(len(dp.conflicts) for dp in again.devices.values()) == len(leaves)


def test_unmanaged_fields_are_never_written(lab: LabFleet) -> None:
    """Fields no intent renders (hostname, serial, kernel, port descriptions) are
    reported as not owned and never written, even when changed by hand."""
    lab.store.commit("leaf-r0", {"system/hostname": "renamed-by-hand"}, save=True)
    plan = lab.plan()
    assert {"system/hostname", "system/serial"} <= set(plan.devices["leaf-r0"].unmanaged)
    assert "system/kernel" in plan.devices["gpu-n01"].unmanaged
    assert not [c.path for cs in plan.changes().values() for c in cs if is_unmanaged(c.path)]
    assert lab.apply(plan).ok()
    assert lab.store.counters().get("unmanaged_writes", 0) == 0
    assert lab.store.read_running("leaf-r0")["system/hostname"] == "renamed-by-hand"
    assert lab.plan().is_empty()


def test_holds_keep_fields_at_their_pinned_values(clean_lab: LabFleet) -> None:
    """A held field is planned to its pinned value, not to intent, and is listed."""
    _drift_one(clean_lab, "spine-1", 16)
    holds = {
        "spine-1": {PATH: (16, "rollback r-7 pinned it")},
        "spine-2": {PATH: (32, "rollback r-7 pinned it")},
    }
    plan = clean_lab.plan(holds=holds)
    assert plan.changes() == {
        "spine-2": (Change(PATH, 64, 32, plan.changes()["spine-2"][0].owner),)
    }
    for device, value in (("spine-1", 16), ("spine-2", 32)):
        (held,) = plan.devices[device].held
        assert (held.path, held.value, held.reason) == (PATH, value, "rollback r-7 pinned it")
    assert "HELD spine-2 bgp/maximum_paths at 32: rollback r-7" in plan_text(plan, fleet="orion")
    assert clean_lab.apply(plan).ok()
    running = clean_lab.running()
    assert (running["spine-1"][PATH], running["spine-2"][PATH]) == (16, 32)
    assert clean_lab.plan(holds=holds).change_count() == 0
    assert set(clean_lab.plan().changes()) == {"spine-1", "spine-2"}
