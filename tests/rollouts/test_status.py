"""``plumb rollout status`` shows the evidence of every decision: the query a metric
ran, the statistic and p-value, the threshold and the A/A noise floor, the groups."""

from __future__ import annotations

from pathlib import Path

from ci.journalfmt import status_json, status_text
from reconciler.state.db import open_state_db
from reconciler.state.journal import (
    Lifecycle,
    NewTarget,
    NewWave,
    RolloutRow,
    RolloutStatus,
)
from rollouts.abortcheck import assess_wave, measure_noise_floor
from rollouts.spec import RolloutSpec

SPEC = RolloutSpec.model_validate(
    {
        "name": "sm",
        "targets": {"select": "role=gpu-node"},
        "abort": {
            "hard_faults": ["fec_uncorrectable"],
            "prometheus": {
                "url": "http://127.0.0.1:9090",
                "hard_faults": {"fec_uncorrectable": {"template": "fec_uncorrectable"}},
            },
            "metrics": [
                {
                    "name": "sm_active",
                    "source": "prometheus",
                    "signal": "sm_active",
                    "template": "sm_active",
                    "direction": "lower_is_worse",
                    "threshold": 0.97,
                    "min_samples": 2,
                }
            ],
        },
    }
)


def test_status_shows_query_numbers_threshold_and_noise_floor(tmp_path: Path) -> None:
    metric = SPEC.abort.metrics[0]
    wave = {f"w{i}": [0.80 + 0.001 * i] * 6 for i in range(3)}
    controls = {f"c{i}": [0.92 + 0.002 * (i % 5)] * 6 for i in range(12)}
    floor = measure_noise_floor(
        metric, dict(list(controls.items())[:3]), dict(list(controls.items())[3:]), 1
    )
    faults = {SPEC.abort.hard_faults[0]: dict.fromkeys(wave, 0)}
    assessment = assess_wave(
        SPEC.abort,
        {"sm_active": (wave, controls)},
        faults,
        {"sm_active": floor},
        1,
        targets=list(wave),
    )
    assert assessment.decision.value == "abort"
    with open_state_db(tmp_path / "plumb.db") as db:
        row = RolloutRow(
            "sm-1",
            "sm",
            "rollouts/sm.yaml",
            "0" * 64,
            None,
            None,
            RolloutStatus.aborted,
            "wave 1 aborted",
            "tester",
            "",
            "",
            {"spec": SPEC.model_dump(mode="json")},
        )
        db.journal.create(
            row,
            [NewWave(1, True, 30.0)],
            [NewTarget(t, 1, {"firmware/bios": "2"}, Lifecycle.in_service) for t in wave],
        )
        evidence = {
            **assessment.to_dict(),
            "window": ["a", "b"],
            "controls": 12,
            "control_group": "not yet changed",
            "noise_floors": {"sm_active": floor.to_dict()},
        }
        db.journal.update_wave("sm-1", 1, status="aborted", decision="abort", evidence=evidence)
        args = (db.journal.get("sm-1"), db.journal.waves("sm-1"), db.journal.targets("sm-1"), [])
        text = status_text(*args)  # type: ignore[arg-type]
        document = status_json(*args)  # type: ignore[arg-type]
    sm_line = next(line for line in text.splitlines() if "FAILED" in line and "sm_active" in line)
    assert "median_ratio" in sm_line and "0.97" in sm_line and "3 vs 12" in sm_line
    assert "DCGM_FI_PROF_SM_ACTIVE" in text and "query:" in text
    assert "increase(" in text  # the hard fault's counter query
    assert "A/A" in text and "noise floor" in text
    measured = document["waves"][0]["evidence"]["measurements"]
    sm = next(m for m in measured if m["metric"] == "sm_active")
    assert sm["threshold"] == 0.97 and sm["statistic"] < 0.97 and sm["p_value"] < 0.05
