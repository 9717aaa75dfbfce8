"""``plumb rollout plan`` on a copy of ORION with a lab fleet: text, stable JSON, exit
codes, and spec errors as file:line:col."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plumb.cli import app
from tests.fleetcopy import FleetCopy, copy_orion

FIRMWARE = "firmware-hx8-2026-09"


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str


def plumb(fleet: FleetCopy, *args: str) -> Run:
    """The typer app in-process, from the directory holding the fleet copy."""
    with contextlib.chdir(fleet.path.parent):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def with_lab(fleet: FleetCopy) -> FleetCopy:
    assert plumb(fleet, "lab", "init", "orion").exit_code == 0
    return fleet


@pytest.fixture(scope="module")
def labbed(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    """One ORION copy with a fresh lab (older bundles, seed 0), shared read-only."""
    return with_lab(copy_orion(tmp_path_factory.mktemp("rollout-cli")))


def plan_json(fleet: FleetCopy, spec: str = FIRMWARE) -> dict[str, Any]:
    run = plumb(fleet, "rollout", "plan", spec, "orion", "--format", "json")
    assert run.exit_code == 0, run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    return document


def test_without_a_lab_the_plan_says_how_to_make_one(orion: FleetCopy) -> None:
    """No lab fleet: exit 2 and the hint to run `plumb lab init`."""
    run = plumb(orion, "rollout", "plan", FIRMWARE, "orion")
    assert run.exit_code == 2
    assert "no lab fleet" in run.stderr and "run `plumb lab init orion` first" in run.stderr


def test_firmware_rollout_text(labbed: FleetCopy) -> None:
    """The text report names the strata, the waves and the stalled work beside its bounds."""
    run = plumb(labbed, "rollout", "plan", FIRMWARE, "orion")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith(
        f"rollout {FIRMWARE} on orion: 32 targets (32 selected, 0 at intent, 0 unknown), "
        "2 strata, 5 waves, drain\n"
    )
    # a random canary of the same 4 targets meets the 4 B0 nodes of 32: 1 - (7/8)^4
    assert "label.nic_revision=B0" in run.stdout and "0.4138" in run.stdout
    assert "riders: " in run.stdout
    assert (
        "  id  size      p  canary                   stratified  random k=4\n"
        "  S1    28  0.875  gpu-n19,gpu-n24,gpu-n27       1.000      0.9998  label.nic_revision"
        "=A1\n"
        "  S2     4  0.125  gpu-n31                       1.000      0.4138  label.nic_revision"
        "=B0\n"
    ) in run.stdout
    assert "\n  1  canary: 4 targets, strata S1,S2\n       targets: gpu-n19 " in run.stdout
    assert (
        "stalled: 298.7 GPU-h $896 (drains: llm-pretrain-a x4, llm-pretrain-b x4); "
        "lower bound 74.7 GPU-h $224 (each gang drained once); "
        "with these caps at least 298.7 GPU-h $896"
    ) in run.stdout


def test_firmware_rollout_json(labbed: FleetCopy) -> None:
    """JSON: every target in one wave, the canary covers both NIC revisions, caps hold."""
    document = plan_json(labbed)
    assert document["schema"] == "plumb.rollout-plan/v1"
    waves = document["waves"]
    landed = [t for w in waves for t in w["targets"]]
    assert len(landed) == len(set(landed)) == 32
    assert [len(w["targets"]) for w in waves] == [4, 8, 8, 8, 4]
    riders = set(waves[0]["riders"])
    canary = {s["key"]["label.nic_revision"]: s["canaries"] for s in document["strata"]}
    assert len(set(canary["A1"]) - riders) == len(canary["B0"]) == 1
    assert len(riders) == 2  # the rest of gang b's share: one node of each other replica
    for wave in waves:
        assert len(wave["dp_replicas"]) == len(
            [t for t in wave["targets"] if t < "gpu-n29"]
        )  # per_dp_replica 1: one node per replica
        assert max(Counter(t for t in wave["racks"]).values()) == 1
    assert document["price"]["total"]["usd"] == 896.0 == document["price"]["cap_bound"]["usd"]
    assert document["price"]["lower_bound"]["gangs"] == {"llm-pretrain-a": 1, "llm-pretrain-b": 1}


def test_json_is_stable(labbed: FleetCopy) -> None:
    """Two runs print byte-identical JSON."""
    first = plumb(labbed, "rollout", "plan", FIRMWARE, "orion", "-f", "json").stdout
    assert plumb(labbed, "rollout", "plan", FIRMWARE, "orion", "-f", "json").stdout == first


def test_impossible_canary_exits_1_at_the_cap(labbed: FleetCopy) -> None:
    """per_wave 1 cannot hold one canary of each of 2 strata: exit 1, at the cap's line."""
    text = (labbed.path / "rollouts" / f"{FIRMWARE}.yaml").read_text()
    labbed.write("rollouts/tight.yaml", text.replace("per_wave: 8", "per_wave: 1"))
    run = plumb(labbed, "rollout", "plan", "tight", "orion")
    assert run.exit_code == 1
    assert run.stderr == (
        "rollouts/tight.yaml:20:15: the canary needs 2 targets (2 strata x "
        "canary_per_stratum 1) but caps.per_wave 1 allows 1 in 1 canary wave(s): raise "
        "caps.per_wave to 2 or strata.canary_waves to 2\n"
    )


def test_spec_error_exits_2_with_its_location(labbed: FleetCopy) -> None:
    """An unknown key in the spec: exit 2, file:line:col on stderr."""
    text = (labbed.path / "rollouts" / f"{FIRMWARE}.yaml").read_text()
    labbed.write("rollouts/typo.yaml", text.replace("per_rack: 2", "per_rak: 2"))
    run = plumb(labbed, "rollout", "plan", "typo", "orion")
    assert run.exit_code == 2
    assert run.stderr.startswith("rollouts/typo.yaml:21:5: rollout.caps.per_rak: unknown key")


def test_qos_change_over_leaves_and_spines(tmp_path: Path) -> None:
    """An ECN change in intent touches all 8 leaves and 4 spines: 3 strata, a canary in
    two waves of at most 2, and no wave above per_wave 2."""
    fleet = with_lab(copy_orion(tmp_path))
    fleet.replace("intent/qos.yaml", "kmin_kb: 200", "kmin_kb: 180")
    document = plan_json(fleet, "qos-mtu-tune")
    assert document["targets"]["planned"] == 12
    assert len(document["strata"]) == 3
    assert [w["canary"] for w in document["waves"]][:3] == [True, True, False]
    assert all(len(w["targets"]) <= 2 for w in document["waves"])
    assert "ecn" in document["components"]
    assert document["price"]["total"]["gpu_hours"] == 0.0


def test_nothing_to_roll_out(tmp_path: Path) -> None:
    """A lab already on the intended bundles has nothing for the firmware rollout."""
    fleet = copy_orion(tmp_path)
    assert plumb(fleet, "lab", "init", "orion", "--current-firmware").exit_code == 0
    run = plumb(fleet, "rollout", "plan", FIRMWARE, "orion")
    assert run.exit_code == 0
    assert "nothing to roll out" in run.stdout
