"""`--format json` of `rollout list`, `rollback`, `pins list|release` and `audit show|verify`
after a real rollout whose canary catches a defect: documents with their documented
schema and keys, agreeing with the journal and the lab."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.state.journal import TargetStatus
from tests.rollouts.gitfleet import FIRMWARE, GitFleet

ROLLBACK_KEYS = {
    "schema",
    "rollout",
    "scope",
    "ok",
    "restored",
    "already",
    "failed",
    "kept",
    "skipped",
    "pinned",
    "refused",
    "revert",
    "status",
}


@pytest.fixture(scope="module")
def rolled_back(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitFleet, str]:
    """One rollout whose canary caught the B0 defect and was rolled back (pins held)."""
    fleet = GitFleet.create(tmp_path_factory.mktemp("json"))
    fleet.hide_b0_defect()
    assert fleet.plumb("rollout", "start", FIRMWARE, ".").exit_code == 1
    return fleet, fleet.only_rollout()


def _json(fleet: GitFleet, *args: str, code: int = 0) -> dict[str, Any]:
    run = fleet.plumb(*args, "--format", "json")
    assert run.exit_code == code, run.stdout + run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    return document


def test_rollout_list_json_names_each_rollout_with_its_waves(
    rolled_back: tuple[GitFleet, str],
) -> None:
    """`rollout list --format json` lists the rollout with the journal's status and waves."""
    fleet, rollout = rolled_back
    doc = _json(fleet, "rollout", "list", ".")
    assert doc["schema"] == "plumb.rollout-list/v1"
    (only,) = doc["rollouts"]
    assert only["id"] == rollout and only["spec"] == FIRMWARE
    with fleet.db() as db:
        row = db.journal.get(rollout)
        waves = db.journal.waves(rollout)
    assert row is not None
    assert only["status"] == row.status.value == "rolled_back"
    assert only["waves"] == len(waves) > 1
    assert only["waves_passed"] == 0  # the canary failed


def test_pins_list_json_holds_the_rolled_back_fields(rolled_back: tuple[GitFleet, str]) -> None:
    """`pins list --format json` gives each pin's device, field, value and rollout."""
    fleet, rollout = rolled_back
    doc = _json(fleet, "pins", "list", ".")
    assert doc["schema"] == "plumb.pins/v1"
    pins = doc["pins"]
    rolled = [t for t in fleet.targets(rollout) if t.status is TargetStatus.rolled_back]
    assert len(rolled) == 4  # the canary wave: two canaries and two riders
    assert len(pins) == 7 * len(rolled)  # the 7 firmware components of each
    assert {p["rollout"] for p in pins} == {rollout}
    nic = [p for p in pins if p["path"] == "firmware/nic_firmware"]
    running = fleet.running()
    assert nic and all(running[p["device"]]["firmware/nic_firmware"] == p["value"] for p in nic)


def test_audit_json_documents_agree_with_verify(rolled_back: tuple[GitFleet, str]) -> None:
    """`audit show --format json` is one document; `audit verify --format json` names its head."""
    fleet, _ = rolled_back
    shown = _json(fleet, "audit", "show", ".", "--limit", "100000")
    assert shown["schema"] == "plumb.audit/v1"
    records = shown["records"]
    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)
    assert {"write", "rollback"} <= {r["kind"] for r in records}
    verified = _json(fleet, "audit", "verify", ".")
    assert verified["schema"] == "plumb.audit-verify/v1"
    assert verified["ok"] is True and verified["problems"] == []
    assert verified["rows"] == len(records)
    assert verified["head_seq"] == records[-1]["seq"]
    assert verified["head_hash"] == records[-1]["hash"]


def test_rollback_json_reports_every_target_and_the_status_after(
    rolled_back: tuple[GitFleet, str],
) -> None:
    """A second rollback in JSON finds every written target at its before-state, prints
    one document and nothing else."""
    fleet, rollout = rolled_back
    writes = fleet.device_writes()
    doc = _json(fleet, "rollback", rollout, ".", "--emergency")
    assert set(doc) == ROLLBACK_KEYS
    assert doc["schema"] == "plumb.rollback/v1" and doc["rollout"] == rollout
    assert doc["ok"] is True and doc["restored"] == [] and doc["failed"] == {}
    rolled = {t.device for t in fleet.targets(rollout) if t.status is TargetStatus.rolled_back}
    assert set(doc["already"]) == rolled and rolled
    assert doc["status"]["schema"] == "plumb.rollout-status/v1"
    assert doc["status"]["rollout"]["id"] == rollout
    assert fleet.device_writes() == writes


def test_pins_release_json_counts_what_it_released(tmp_path: Path) -> None:
    """`pins release --format json` counts the released pins; none are left."""
    fleet = GitFleet.create(tmp_path)
    fleet.hide_b0_defect()
    assert fleet.plumb("rollout", "start", FIRMWARE, ".").exit_code == 1
    rollout = fleet.only_rollout()
    doc = _json(fleet, "pins", "release", ".", "--rollout", rollout)
    rolled = [t for t in fleet.targets(rollout) if t.status is TargetStatus.rolled_back]
    assert doc == {
        "schema": "plumb.pins-release/v1",
        "released": 7 * len(rolled),
        "rollout": rollout,
        "device": None,
    }
    assert _json(fleet, "pins", "list", ".")["pins"] == []


def test_unknown_format_is_a_usage_error(rolled_back: tuple[GitFleet, str]) -> None:
    """`--format yaml` is refused (exit 2) before anything is read or written."""
    fleet, _ = rolled_back
    for args in (("rollout", "list", "."), ("pins", "list", "."), ("audit", "verify", ".")):
        run = fleet.plumb(*args, "--format", "yaml")
        assert run.exit_code == 2 and "unknown format 'yaml'" in run.stderr
