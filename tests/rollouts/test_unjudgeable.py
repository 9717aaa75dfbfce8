"""A wave whose abort conditions can never be judged: ``rollout plan`` predicts it at
the metric's line, the hold says that resuming holds again and what to do instead,
and the way out it names works (a fresh ORION copy, ``plumb lab init``, the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.state.journal import RolloutStatus, TargetStatus, WaveStatus
from rollouts.judgeable import group_sizes, too_few, unjudgeable
from rollouts.spec import Abort, Metric
from tests.fleetcopy import copy_orion
from tests.rollouts.gitfleet import GitFleet, git

QOS = "qos-mtu-tune"


def fresh(tmp: Path) -> GitFleet:
    """A new user's fleet: the example as shipped, committed, with a fresh lab."""
    copy = copy_orion(tmp)
    copy.write(".gitignore", ".plumb/\n")
    fleet = GitFleet(copy)
    git(copy.path, "init", "-q", "-b", "main")
    fleet.base = fleet.commit("ORION as shipped")
    assert fleet.plumb("lab", "init", ".").exit_code == 0
    return fleet


def metric(min_samples: int = 2) -> Metric:
    return Metric(name="flaps", signal="link_flaps", threshold=0.5, min_samples=min_samples)


def test_group_sizes_follow_the_executor() -> None:
    """One wave of 2 has no control; later waves fall back to targets of passed waves."""
    sizes = [(g.judged, g.controls) for g in group_sizes([2], 2)]
    assert sizes == [(2, 0)]
    sizes = [(g.judged, g.controls) for g in group_sizes([2, 1, 2, 2, 2], 2)]
    assert sizes == [(2, 7), (2, 6), (2, 4), (2, 5), (2, 7)]


def test_a_single_wave_can_never_be_judged() -> None:
    """No control target exists: the metric is unjudgeable in wave 1."""
    found = unjudgeable(Abort(metrics=(metric(),)), [2])
    assert [(u.wave, u.name) for u in found] == [(1, "flaps")]
    assert "0 control targets < min_samples 2" in found[0].message()


def test_the_aa_split_needs_twice_min_samples() -> None:
    """3 controls split 1 + 2 for A/A: short of min_samples 2; without A/A it is fine."""
    assert too_few(metric(), 2, 3, aa_noise_floor=True) == (
        "A/A groups of 1 and 2 controls < min_samples 2"
    )
    assert too_few(metric(), 2, 3, aa_noise_floor=False) is None


def test_enough_controls_judge_every_wave() -> None:
    assert unjudgeable(Abort(metrics=(metric(),)), [2, 1, 2, 2, 2]) == []


@pytest.fixture
def fleet(tmp_path: Path) -> GitFleet:
    return fresh(tmp_path)


def test_plan_warns_at_the_metric_line(fleet: GitFleet) -> None:
    """On a fresh lab the QoS rollout has one wave of 2: the plan says it will hold."""
    run = fleet.plumb("rollout", "plan", QOS, ".")
    assert run.exit_code == 0, run.stderr
    text = (fleet.root / "rollouts" / f"{QOS}.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "min_samples: 2" in t)
    assert f"rollouts/{QOS}.yaml:{line}:" in run.stderr
    assert "wave 1: link_flap_rate can never be judged" in run.stderr
    assert "0 control targets < min_samples 2" in run.stderr


def test_start_refuses_a_wave_its_plan_says_can_never_be_judged(fleet: GitFleet) -> None:
    """The plan just said wave 1 can never be judged: start refuses before anything is
    journaled or written, naming the metric line and --accept-unjudgeable."""
    writes = fleet.device_writes()
    run = fleet.plumb("rollout", "start", QOS, ".")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert "not starting: a wave can never be judged" in run.stderr
    assert "wave 1: link_flap_rate can never be judged" in run.stderr
    assert "--accept-unjudgeable WHY" in run.stderr
    with fleet.db() as db:
        assert db.journal.all() == []
    assert fleet.device_writes() == writes


def test_hold_names_the_way_out_and_it_works(fleet: GitFleet) -> None:
    """Started with --accept-unjudgeable (audited), the hold says resuming holds
    again; accepting each unjudgeable wave with a reason completes the rollout,
    recorded in the journal, the audit and the status text."""
    run = fleet.plumb("rollout", "start", QOS, ".", "--accept-unjudgeable", "lab switches")
    assert run.exit_code == 3, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    assert "resuming bakes and holds again" in run.stdout
    assert f"plumb rollout resume {rollout} --accept-held" in run.stdout
    assert f"plumb rollback {rollout}" in run.stdout
    why = "2 switches, checked by hand"
    for _ in range(len(fleet.targets(rollout))):
        run = fleet.plumb("rollout", "resume", rollout, ".", "--accept-held", why)
        if run.exit_code != 3:
            break
    assert run.exit_code == 0, run.stdout + run.stderr
    with fleet.db() as db:
        row = db.journal.get(rollout)
        waves = db.journal.waves(rollout)
        records = db.audit.records(50, kind="rollout")
    assert row is not None and row.status is RolloutStatus.completed
    accepted = [w for w in waves if w.decision == "accepted"]
    assert accepted and all(w.status is WaveStatus.passed for w in waves)
    assert all((w.evidence or {})["accepted"]["reason"] == why for w in accepted)
    events = [r for r in records if r.detail.get("event") == "accepted"]
    assert len(events) == len(accepted)
    status = fleet.plumb("rollout", "status", rollout, ".").stdout
    shown = [line.strip() for line in status.splitlines() if "accepted by" in line]
    assert len(shown) == len(accepted), status
    assert all(line.endswith(f"): {why}") for line in shown), shown
    assert {t.status for t in fleet.targets(rollout)} == {TargetStatus.applied}


def test_accept_held_refuses_a_rollout_that_is_not_held(fleet: GitFleet) -> None:
    """Nothing to accept: exit 1 and the rollout's status."""
    fleet.plumb("rollout", "start", QOS, ".", "--accept-unjudgeable", "test")
    rollout = fleet.only_rollout()
    assert fleet.plumb("rollout", "abort", rollout, ".").exit_code == 0
    run = fleet.plumb("rollout", "resume", rollout, ".", "--accept-held", "again")
    assert run.exit_code == 1
    assert "aborted: no held wave to accept" in run.stderr
