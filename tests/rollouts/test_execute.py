"""Rollout execution end to end on a git-committed ORION copy with a lab fleet: start
only from committed intent, canary catches a defect in the B0 stratum, abort, exact
rollback with pins, hold and resume, spec edits refused, operator abort, emergency
rollback and a git revert branch. Every check reads the lab's own state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.state.journal import Lifecycle, RolloutStatus, TargetStatus, WaveStatus
from tests.rollouts.gitfleet import FIRMWARE, GitFleet, git

NEW = {
    "firmware/bios": "1.8.0",
    "firmware/bmc": "3.12.1",
    "firmware/cuda": "12.8",
    "firmware/fabric_manager": "570.124.06",
    "firmware/gpu_driver": "570.124.06",
    "firmware/nic_driver": "24.10-1.1.4.0",
    "firmware/nic_firmware": "28.43.1014",
}
GPU_NODES = [f"gpu-n{i:02d}" for i in range(1, 33)]
B0_NODES = {"gpu-n29", "gpu-n30", "gpu-n31", "gpu-n32"}


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    return GitFleet.create(tmp_path)


def firmware(state: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in state.items() if k.startswith("firmware/")}


def status_json(fleet: GitFleet, rollout: str) -> dict[str, object]:
    run = fleet.plumb("rollout", "status", rollout, ".", "--format", "json")
    assert run.exit_code == 0, run.stderr
    document: dict[str, object] = json.loads(run.stdout)
    return document


def test_b0_labels_are_where_the_defect_hides(fleet: GitFleet) -> None:
    """The test's premise, checked against the inventory rather than assumed."""
    loaded = fleet.copy.load()
    b0 = {n for n, d in loaded.devices.items() if d.labels.get("nic_revision") == "B0"}
    assert b0 == B0_NODES


def test_start_refuses_uncommitted_intent(fleet: GitFleet) -> None:
    fleet.copy.append("intent/mtu.yaml", "# tweak\n")
    run = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert run.exit_code == 2
    assert "intent/mtu.yaml" in run.stderr and "commit" in run.stderr
    assert fleet.device_writes() == {}
    with fleet.db() as db:
        assert db.journal.all() == []


def test_start_refuses_an_uncommitted_spec(fleet: GitFleet) -> None:
    spec = (fleet.root / "rollouts" / f"{FIRMWARE}.yaml").read_text()
    fleet.copy.write("rollouts/hx8-again.yaml", spec.replace(f"name: {FIRMWARE}", "name: again"))
    run = fleet.plumb("rollout", "start", "hx8-again", ".")
    assert run.exit_code == 2
    assert "rollouts/hx8-again.yaml" in run.stderr
    assert fleet.device_writes() == {}


def test_canary_catches_the_b0_defect_aborts_and_rolls_back_exactly(fleet: GitFleet) -> None:
    initial = fleet.running()
    fleet.hide_b0_defect(fec_rate=2.0, step_time_factor=1.15)
    run = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert run.exit_code == 1, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    doc = status_json(fleet, rollout)
    assert doc["rollout"]["status"] == RolloutStatus.rolled_back  # type: ignore[index]
    waves = doc["waves"]  # type: ignore[index]
    canary = waves[0]
    assert canary["canary"] and canary["status"] == WaveStatus.rolled_back
    assert canary["decision"] == "abort"
    assert set(canary["targets"]) & B0_NODES, "the stratified canary holds a B0 node"
    fec = next(
        m
        for m in canary["evidence"]["measurements"]
        if m["metric"] == "hard_fault/fec_uncorrectable"
    )
    assert fec["phase"] == "failed"
    assert all(w["status"] == WaveStatus.pending for w in waves[1:])
    # exact rollback: every canary target holds its before-state again, nothing else moved
    rows = {t.device: t for t in fleet.targets(rollout)}
    now = fleet.running()
    for name in canary["targets"]:
        row = rows[name]
        assert row.status is TargetStatus.rolled_back
        assert row.lifecycle is Lifecycle.in_service
        assert row.before == firmware(initial[name])
        assert firmware(now[name]) == firmware(initial[name])
    assert now == initial
    writes = fleet.device_writes()
    assert {n: writes.get(n, 0) for n in canary["targets"]} == dict.fromkeys(canary["targets"], 2)
    assert sum(writes.values()) == 2 * len(canary["targets"])
    # the pins keep the reconciler from re-applying the bad bundle
    pins = doc["pins"]  # type: ignore[index]
    assert {p["device"] for p in pins} == set(canary["targets"])
    assert len(pins) == len(NEW) * len(canary["targets"])
    victim = sorted(set(canary["targets"]) & B0_NODES)[0]
    plan = fleet.plumb("plan", ".", "--select", victim)
    assert "HELD" in plan.stdout or "held" in plan.stdout, plan.stdout
    assert "nic_firmware" not in [
        line.split()[1] for line in plan.stdout.splitlines() if line.startswith(f"  {victim} ")
    ]
    assert fleet.plumb("audit", "verify", ".").exit_code == 0


def test_healthy_rollout_completes_each_target_written_once(fleet: GitFleet) -> None:
    run = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert run.exit_code == 0, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    running = fleet.running()
    for name in GPU_NODES:
        assert firmware(running[name]) == NEW, name
    assert fleet.device_writes() == dict.fromkeys(GPU_NODES, 1)
    doc = status_json(fleet, rollout)
    assert {w["status"] for w in doc["waves"]} == {"passed"}  # type: ignore[index]
    assert {t["lifecycle"] for t in doc["targets"]} == {"in_service"}  # type: ignore[index]
    cost = doc["cost"]  # type: ignore[index]
    assert cost["stalled_gpu_hours"] == pytest.approx(cost["planned_gpu_hours"])
    assert cost["stalled_gpu_hours"] >= cost["lower_bound_gpu_hours"] > 0
    again = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert again.exit_code == 0 and "nothing to roll out" in again.stdout


def _strict_spec(fleet: GitFleet) -> None:
    """20 targets per group before step time can be judged: the canary holds."""
    fleet.copy.replace(f"rollouts/{FIRMWARE}.yaml", "min_samples: 2 ", "min_samples: 20 ")
    fleet.commit("step time needs 20 targets per group")


def test_hold_then_resume_and_a_spec_edited_mid_rollout_is_refused(fleet: GitFleet) -> None:
    _strict_spec(fleet)
    refused = fleet.plumb("rollout", "start", FIRMWARE, ".")
    assert refused.exit_code == 1 and "can never be judged" in refused.stderr
    run = fleet.plumb("rollout", "start", FIRMWARE, ".", "--accept-unjudgeable", "hold test")
    assert run.exit_code == 3, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    doc = status_json(fleet, rollout)
    assert doc["rollout"]["status"] == "held"  # type: ignore[index]
    assert "min_samples 20" in doc["rollout"]["reason"]  # type: ignore[index]
    spec = f"rollouts/{FIRMWARE}.yaml"
    fleet.copy.replace(spec, "threshold: 1.03", "threshold: 1.10")
    edited = fleet.commit("loosen the threshold mid-rollout")
    refused = fleet.plumb("rollout", "resume", rollout, ".")
    assert refused.exit_code == 2
    assert "edited" in refused.stderr and spec in refused.stderr
    git(fleet.root, "revert", "--no-edit", edited)
    again = fleet.plumb("rollout", "resume", rollout, ".")
    assert again.exit_code == 3, again.stderr
    waves = status_json(fleet, rollout)["waves"]  # type: ignore[index]
    assert waves[0]["status"] == "held" and waves[0]["attempts"] == 2
    assert all(w["status"] == "pending" for w in waves[1:])


def test_operator_abort_then_rollback_by_target(fleet: GitFleet) -> None:
    _strict_spec(fleet)
    initial = fleet.running()
    started = fleet.plumb("rollout", "start", FIRMWARE, ".", "--accept-unjudgeable", "t")
    assert started.exit_code == 3
    rollout = fleet.only_rollout()
    aborted = fleet.plumb("rollout", "abort", rollout, ".", "--reason", "wrong window")
    assert aborted.exit_code == 0 and "plumb rollback" in aborted.stdout
    assert fleet.plumb("rollout", "resume", rollout, ".").exit_code == 1
    canary = [t.device for t in fleet.targets(rollout) if t.wave == 1]
    unknown = fleet.plumb("rollback", rollout, ".", "--target", "gpu-n99")
    assert unknown.exit_code == 2 and "gpu-n99" in unknown.stderr
    one = fleet.plumb("rollback", rollout, ".", "--target", canary[0], "--reason", "test")
    assert one.exit_code == 0, one.stderr
    rows = {t.device: t for t in fleet.targets(rollout)}
    assert rows[canary[0]].status is TargetStatus.rolled_back
    assert rows[canary[1]].status is TargetStatus.applied
    running = fleet.running()
    assert firmware(running[canary[0]]) == firmware(initial[canary[0]])
    assert firmware(running[canary[1]]) == NEW


def test_emergency_rollback_restores_everything_and_writes_a_revert_branch(
    fleet: GitFleet,
) -> None:
    initial = fleet.running()
    assert fleet.plumb("rollout", "start", FIRMWARE, ".").exit_code == 0
    rollout = fleet.only_rollout()
    run = fleet.plumb(
        "rollback",
        rollout,
        ".",
        "--emergency",
        "--reason",
        "3 a.m.",
        "--revert-branch",
        "revert-hx8",
    )
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "restored 32 target(s)" in run.stdout
    assert "revert-hx8" in run.stdout and "checkout is unchanged" in run.stdout
    assert fleet.running() == initial
    assert {t.status for t in fleet.targets(rollout)} == {TargetStatus.rolled_back}
    assert fleet.device_writes() == dict.fromkeys(GPU_NODES, 2)
    # the branch reverts the intent change; the checkout still has it
    groups = git(fleet.root, "show", "revert-hx8:intent/groups.yaml")
    assert "bundle: hx8-2026.06" in groups
    assert "bundle: hx8-2026.09" in (fleet.root / "intent" / "groups.yaml").read_text()
    assert git(fleet.root, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(fleet.root, "status", "--porcelain") == ""
    # a second emergency rollback finds everything at its before-state: no write
    again = fleet.plumb("rollback", rollout, ".", "--emergency")
    assert again.exit_code == 0
    assert fleet.device_writes() == dict.fromkeys(GPU_NODES, 2)
    assert fleet.plumb("audit", "verify", ".").exit_code == 0


def test_pins_release_lets_the_reconciler_own_the_fields_again(fleet: GitFleet) -> None:
    fleet.hide_b0_defect()
    assert fleet.plumb("rollout", "start", FIRMWARE, ".").exit_code == 1
    rollout = fleet.only_rollout()
    listed = fleet.plumb("pins", "list", ".")
    assert "firmware/nic_firmware" in listed.stdout and rollout in listed.stdout
    rolled = [t for t in fleet.targets(rollout) if t.status is TargetStatus.rolled_back]
    released = fleet.plumb("pins", "release", ".", "--rollout", rollout)
    assert released.exit_code == 0
    assert f"released {7 * len(rolled)} pin(s)" in released.stdout
    assert "no active pins" in fleet.plumb("pins", "list", ".").stdout
