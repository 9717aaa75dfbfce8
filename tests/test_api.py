"""The Python API (service/api.py, docs/api.md) on a real lab fleet: load, validate,
plan, save, apply exactly the saved plan, refuse a stale one, rollout status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inventory.problems import InputError
from reconciler.drivers.base import Outcome
from service import api
from service.errors import ServiceError
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet


def test_load_and_validate_the_example(orion: FleetCopy) -> None:
    """The example loads and passes every policy."""
    fleet = api.load(orion.path)
    assert fleet.config.fleet == "orion"
    assert api.validate(orion.path).exit_code() == 0


def test_a_bad_fleet_raises_its_problems_at_their_lines(orion: FleetCopy) -> None:
    """Input errors are an exception carrying file:line problems, not an exit."""
    orion.append("plumb.yaml", "surprise: 1\n")
    with pytest.raises(InputError) as raised:
        api.load(orion.path)
    assert any("plumb.yaml:" in str(p) and "surprise" in str(p) for p in raised.value.problems)


def test_plan_save_apply_then_nothing_left(orion: FleetCopy, tmp_path: Path) -> None:
    """A saved plan applies exactly, the next plan is empty, and the audit has both."""
    LabFleet.create(orion).close()
    first = api.plan(orion.path)
    assert first.change_count() > 0
    saved = tmp_path / "plan.json"
    api.save_plan(orion.path, first, saved)
    assert json.loads(saved.read_text())["schema"] == "plumb.plan/v1"
    report = api.apply_saved(orion.path, saved, confirm_within=None)
    assert report.ok()
    assert {r.outcome for r in report.results} == {Outcome.applied}
    assert api.plan(orion.path).is_empty()
    with pytest.raises(ServiceError, match="stale") as stale:  # every from-value moved
        api.apply_saved(orion.path, saved)
    assert stale.value.code == 1


def test_rollout_status_without_rollouts_is_refused(orion: FleetCopy) -> None:
    """No rollout yet: a ServiceError with the CLI's exit code, not a crash."""
    LabFleet.create(orion).close()
    with pytest.raises(ServiceError, match="no rollouts recorded yet") as refused:
        api.rollout_status(orion.path)
    assert refused.value.code == 1
