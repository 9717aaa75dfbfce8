"""A saved plan is applied only while its to-values are what the intent renders and
the intent passes every deny policy: an edited plan with its hash recomputed (ECN
Kmin above Xoff, maximum-paths 1, a string where an integer is due) is refused,
naming the field, and nothing is written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ci.planfile import read_plan
from ci.planfmt import dumps, plan_json
from lab.store import LabStore
from reconciler.plan import Plan
from reconciler.settings import Change, Scalar
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet, run_plumb

DENY_SPINES = '''\
"""A site rule the intent now breaks: no spine may be managed."""

from inventory.models import Role
from policies.engine import Finding, policy


@policy("repo.no_spines", title="No spines", rationale="test", remediation="remove them")
def no_spines(fleet):
    for device in fleet.of_role(Role.spine):
        yield Finding(device.name, f"spine {device.name} is managed", (), (device.name,))
'''


def _edit(saved: Path, device: str, path: str, value: Scalar) -> None:
    """Rewrite one to-value of the saved plan and recompute its hash, as an attacker
    with write access to the file could."""
    doc = json.loads(saved.read_text())
    made = read_plan(doc)

    def swap(changes: tuple[Change, ...]) -> tuple[Change, ...]:
        return tuple(
            dataclasses.replace(c, after=value) if c.path == path else c for c in changes
        )

    steps = tuple(
        dataclasses.replace(
            s, changes={d: swap(cs) if d == device else cs for d, cs in s.changes.items()}
        )
        for s in made.plan.steps
    )
    devices = {
        n: dataclasses.replace(dp, changes=swap(dp.changes)) if n == device else dp
        for n, dp in made.plan.devices.items()
    }
    edited = Plan(devices, steps)
    saved.write_text(dumps(plan_json(edited, fleet=made.fleet, commit=made.intent_commit)))


def _a_change(saved: Path, prefix: str) -> tuple[str, str]:
    doc = json.loads(saved.read_text())
    for name, device in sorted(doc["devices"].items()):
        for change in device["changes"]:
            if change["path"].startswith(prefix):
                return name, change["path"]
    raise AssertionError(f"no {prefix} change in the plan")


@pytest.fixture
def saved(orion: FleetCopy, tmp_path: Path) -> Path:
    lab = LabFleet.create(orion)
    lab.close()
    file = tmp_path / "plan.json"
    made = run_plumb(orion.path, "plan", "-o", str(file))
    assert made.returncode == 0, made.stderr
    return file


@pytest.mark.parametrize(
    ("prefix", "value"),
    [("firmware/", "evil-9.9"), ("firmware/", "64\nwrite erase"), ("system/nos_version", 1)],
)
def test_an_edited_to_value_is_refused_naming_the_field(
    orion: FleetCopy, saved: Path, prefix: str, value: Scalar
) -> None:
    """Whatever the edit, the to-value is not the intent's: refused before any write."""
    device, path = _a_change(saved, prefix)
    _edit(saved, device, path, value)
    store = LabStore(orion.path / ".plumb" / "lab.db")
    before = store.device_writes()
    run = run_plumb(orion.path, "apply", str(saved), "--yes")
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"writes {device} {path} = {value!r}; the intent says" in run.stderr
    assert "make a new plan" in run.stderr
    assert store.device_writes() == before
    store.close()


def test_an_intent_failing_a_deny_policy_is_not_applied(orion: FleetCopy, saved: Path) -> None:
    """The plan matches the intent, but the intent now fails a deny policy: refused."""
    orion.write("policies/deny_all_spines.py", DENY_SPINES)
    run = run_plumb(orion.path, "apply", str(saved), "--yes")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "is not applied while the intent fails policy repo.no_spines" in run.stderr


def test_the_untouched_plan_still_applies(orion: FleetCopy, saved: Path) -> None:
    """The checks do not refuse an honest plan: it applies and the next plan is empty."""
    run = run_plumb(orion.path, "apply", str(saved), "--yes", "--confirm-within", "0")
    assert run.returncode == 0, run.stdout + run.stderr
    again = run_plumb(orion.path, "plan", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout
