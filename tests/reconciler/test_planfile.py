"""Saved plans through the CLI: `plumb plan -o FILE` writes a hashed plumb.plan/v1
document; `plumb apply FILE` applies exactly it, or refuses when the devices moved."""

from __future__ import annotations

import json
from pathlib import Path

from ci.planfile import plan_hash, read_plan, short_hash
from tests.reconciler.labfleet import LabFleet, run_plumb


def _save(lab: LabFleet, *args: str) -> tuple[Path, dict[str, object]]:
    out = lab.root / "plan.json"
    done = run_plumb(lab.root, "plan", "-o", str(out), *args)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert f"plan hash {short_hash(str(doc['hash']))}" in done.stdout
    return out, doc


def test_a_saved_plan_applies_exactly_and_leaves_nothing_to_do(lab: LabFleet) -> None:
    """Applying a saved plan writes its changes and nothing else: a new plan is empty."""
    out, doc = _save(lab)
    saved = read_plan(doc)
    assert saved.digest == plan_hash(lab.plan(), fleet="orion")
    done = run_plumb(lab.root, "apply", str(out), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "apply: 243 change(s) on 45 device(s): 45 applied" in done.stdout
    assert lab.plan().change_count() == 0


def test_a_saved_selection_applies_only_its_devices(lab: LabFleet) -> None:
    """A plan saved for the leaves changes the leaves only, even applied without --select."""
    out, _ = _save(lab, "--select", "role=leaf")
    before = lab.running()
    done = run_plumb(lab.root, "apply", str(out), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    after = lab.running()
    moved = {n for n in after if after[n] != before[n]}
    leaves = {n for n, d in lab.fleet.devices.items() if d.role.value == "leaf"}
    assert moved == leaves


def test_apply_refuses_a_plan_whose_from_value_moved(lab: LabFleet) -> None:
    """A field changed on a device after the plan was saved: apply names it, exits 1,
    and writes nothing."""
    out, _ = _save(lab)
    lab.store.commit("leaf-r0", {"system/nos_version": "4.32.0F"}, save=True)
    writes = lab.writes()
    done = run_plumb(lab.root, "apply", str(out), "--yes")
    assert done.returncode == 1
    assert (
        "is stale: leaf-r0 system/nos_version is now '4.32.0F'; the plan was made when it "
        "was '4.31.2F'; make a new plan"
    ) in done.stderr
    assert lab.writes() == writes


def test_apply_refuses_an_edited_plan_file(lab: LabFleet) -> None:
    """A plan whose content no longer matches its hash is bad input (exit 2)."""
    out, doc = _save(lab)
    devices = doc["devices"]
    assert isinstance(devices, dict)
    devices["leaf-r0"]["changes"][-1]["to"] = "4.99.9F"
    out.write_text(json.dumps(doc))
    writes = lab.writes()
    done = run_plumb(lab.root, "apply", str(out), "--yes")
    assert done.returncode == 2
    assert "does not match its content" in done.stderr and "the file was edited" in done.stderr
    assert lab.writes() == writes


def test_a_saved_plan_is_not_combined_with_select(lab: LabFleet) -> None:
    """--select with a saved plan is a usage error: the plan is applied whole."""
    out, _ = _save(lab)
    done = run_plumb(lab.root, "apply", str(out), "--yes", "--select", "role=leaf")
    assert done.returncode == 2
    assert "a saved plan is applied whole" in done.stderr


def test_a_saved_plan_finds_its_fleet_from_elsewhere(lab: LabFleet, tmp_path: Path) -> None:
    """Run from outside the repo, apply finds the fleet above the plan file; a dry run
    stages it and writes nothing."""
    out, _ = _save(lab)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    writes = lab.writes()
    done = run_plumb(elsewhere, "apply", str(out), "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert lab.writes() == writes
    assert "dry run:" in done.stdout


def test_a_plan_saved_outside_the_repo_names_its_fleet(lab: LabFleet, tmp_path: Path) -> None:
    """A plan written to /tmp-like places (no plumb.yaml above it) and applied from
    another directory still finds its fleet: the plan names where it was made."""
    outside = tmp_path / "plans"
    outside.mkdir()
    plan_file = outside / "plan.json"
    made = run_plumb(lab.root, "plan", "-o", str(plan_file))
    assert made.returncode == 0, made.stderr
    assert json.loads(plan_file.read_text())["fleet_root"] == str(lab.root.resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_plumb(elsewhere, "apply", str(plan_file), "--yes", "--confirm-within", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert run_plumb(lab.root, "plan", "--detailed-exitcode").returncode == 0
