"""`plumb plan`, `plumb apply` and `plumb drift` as a user runs them: exit codes,
the JSON documents, the no-terminal refusal, dry runs and --select."""

from __future__ import annotations

import json

import pytest

from ci.planfmt import plan_text
from lab.fleet import Fault, FaultKind
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet, run_plumb

PLAN_KEYS = {
    "schema",
    "fleet",
    "hash",
    "intent_commit",
    "empty",
    "at_intent",
    "refused",
    "summary",
    "steps",
    "devices",
}
SUMMARY_KEYS = {
    "devices",
    "devices_changing",
    "changes",
    "unknown",
    "conflicts",
    "held",
    "inexpressible",
    "unreachable",
    "owned",
}
STEP_KEYS = {"index", "phase", "devices", "changes"}
DEVICE_KEYS = {
    "changes",
    "unknown",
    "unmanaged_fields",
    "conflicts",
    "held",
    "inexpressible",
    "owned",
}
CHANGE_KEYS = {"path", "from", "to", "owner"}
PLAN_CHANGE_KEYS = CHANGE_KEYS | {"step"}
APPLY_KEYS = {
    "schema",
    "fleet",
    "dry_run",
    "ok",
    "stopped",
    "summary",
    "outcomes",
    "not_started",
    "results",
}
RESULT_KEYS = {"device", "step", "outcome", "error", "changes"}


def _mtu(switch: int, host: int) -> str:
    return (
        "mtu:\n"
        f"  host-leaf: {{switch_port: {switch}, host: {host}, rdma: 4096}}\n"
        f"  leaf-spine: {{switch_port: {switch}}}\n"
        "  frontend: {switch_port: 9214, host: 9000}\n"
    )


def test_detailed_exitcode_is_2_with_changes_pending_and_0_after_apply(lab: LabFleet) -> None:
    """`plan --detailed-exitcode` exits 2 while changes are pending and 0 once applied."""
    pending = run_plumb(lab.root, "plan", "--detailed-exitcode")
    assert pending.returncode == 2, pending.stderr
    assert "243 change(s) on 45 of 45 device(s)" in pending.stdout
    assert lab.apply(lab.plan()).ok()
    clean = run_plumb(lab.root, "plan", "--detailed-exitcode")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "0 change(s)" in clean.stdout


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("unknown device", (), "UNKNOWN leaf-r3"),
        ("no lab", (), "run `plumb lab init "),
        ("bad select", ("--select", "colour=red"), "unknown key 'colour'"),
    ],
)
def test_detailed_exitcode_is_1_on_any_error(
    orion: FleetCopy, setup: str, args: tuple[str, ...], message: str
) -> None:
    """`plan --detailed-exitcode` exits 1 on an error, never 2 (which means changes)."""
    if setup != "no lab":
        lab = LabFleet.create(orion)
        if setup == "unknown device":
            lab.store.add_fault(Fault("leaf-r3", FaultKind.unreachable))
        lab.close()
    done = run_plumb(orion.path, "plan", "--detailed-exitcode", *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("plan", "--bogus", "--detailed-exitcode"), 1),
        (("plan", "--detailed-exitcode", "--select"), 1),
        (("drift", "--bogus"), 1),
        (("drift", "extra", "arguments"), 1),
        (("plan", "--bogus"), 2),
    ],
)
def test_usage_errors_never_read_as_changes_pending(
    orion: FleetCopy, args: tuple[str, ...], code: int
) -> None:
    """Where exit 2 means changes pending, a usage error exits 1; elsewhere 2."""
    done = run_plumb(orion.path, *args)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Error: " in done.stderr and "Traceback" not in done.stderr


def test_plan_json_is_plumb_plan_v1_with_the_documented_keys(lab: LabFleet) -> None:
    """`plan --format json` is a `plumb.plan/v1` document with exactly the documented keys."""
    done = run_plumb(lab.root, "plan", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) == PLAN_KEYS
    assert (doc["schema"], doc["fleet"], doc["intent_commit"]) == ("plumb.plan/v1", "orion", None)
    assert doc["empty"] is False and doc["refused"] is None
    assert set(doc["summary"]) == SUMMARY_KEYS
    assert doc["summary"]["devices"] == 45 and doc["summary"]["changes"] == 243
    assert [s["index"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    assert all(set(step) == STEP_KEYS for step in doc["steps"])
    assert sum(s["changes"] for s in doc["steps"]) == 243
    assert all(set(device) == DEVICE_KEYS for device in doc["devices"].values())
    assert doc["hash"].startswith("sha256:") and len(doc["hash"]) == 7 + 64
    change = doc["devices"]["leaf-r0"]["changes"][-1]
    assert set(change) == PLAN_CHANGE_KEYS
    firmware = next(s["index"] for s in doc["steps"] if s["phase"] == "firmware")
    assert change == {
        "path": "system/nos_version",
        "from": "4.31.2F",
        "to": "4.32.2F",
        "owner": "intent/groups.yaml:10:30",
        "step": firmware,
    }


def test_apply_json_is_plumb_apply_v1_with_the_documented_keys(lab: LabFleet) -> None:
    """`apply --format json` is a `plumb.apply/v1` document with exactly the documented keys."""
    done = run_plumb(lab.root, "apply", "--yes", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) == APPLY_KEYS
    assert (doc["schema"], doc["fleet"], doc["dry_run"], doc["ok"]) == (
        "plumb.apply/v1",
        "orion",
        False,
        True,
    )
    assert doc["stopped"] is None and doc["not_started"] == []
    assert doc["outcomes"] == {"applied": len(doc["results"])}
    assert doc["summary"] == {
        "changes": 243,
        "devices": 45,
        "devices_by_outcome": {"applied": 45},
    }
    assert all(set(result) == RESULT_KEYS for result in doc["results"])
    assert sum(len(r["changes"]) for r in doc["results"]) == 243
    assert all(set(c) == CHANGE_KEYS for r in doc["results"] for c in r["changes"])


def test_apply_without_yes_and_without_a_terminal_refuses(lab: LabFleet) -> None:
    """`apply` with no --yes and no terminal to ask on exits 1 and writes nothing."""
    counters = lab.store.counters()
    done = run_plumb(lab.root, "apply")
    assert done.returncode == 1
    assert "not applying without --yes: no terminal to ask on" in done.stderr
    assert lab.store.counters() == counters


def test_apply_dry_run_writes_nothing(lab: LabFleet) -> None:
    """`apply --dry-run` reports every device planned and leaves the lab counters as they were."""
    counters, running = lab.store.counters(), lab.running()
    done = run_plumb(lab.root, "apply", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "dry run: 243 change(s) on 45 device(s): 45 planned" in done.stdout
    assert lab.store.counters() == counters
    assert lab.running() == running


def test_select_plans_only_the_selected_devices(lab: LabFleet) -> None:
    """`--select role=leaf` plans the leaves and nothing else."""
    done = run_plumb(lab.root, "plan", "--format", "json", "--select", "role=leaf")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    leaves = {n for n, d in lab.fleet.devices.items() if d.role.value == "leaf"}
    assert doc["summary"]["devices"] == len(leaves) == 8
    assert set(doc["devices"]) <= leaves
    assert {d for step in doc["steps"] for d in step["devices"]} <= leaves


def test_a_selection_that_makes_the_order_unsafe_is_refused(orion: FleetCopy) -> None:
    """Raising host MTU fleet-wide but selecting only GPU nodes is refused, with the
    breach and what to do, and apply writes nothing."""
    orion.write("intent/mtu.yaml", _mtu(9100, 9000))
    lab = LabFleet.create(orion, drift=0, older_firmware=False)
    orion.write("intent/mtu.yaml", _mtu(9214, 9192))
    writes = lab.writes()
    planned = run_plumb(orion.path, "plan", "--select", "role=gpu-node")
    assert planned.returncode == 1
    assert "REFUSED: no safe order: after the mtu-host step" in planned.stdout
    assert "+ 22 >" in planned.stdout and "must change in the same plan" in planned.stdout
    applied = run_plumb(orion.path, "apply", "--yes", "--select", "role=gpu-node")
    assert applied.returncode == 1
    assert "not applying: the plan is refused" in applied.stderr
    assert lab.writes() == writes
    lab.close()


def test_a_selection_next_to_an_unobservable_device_is_refused(orion: FleetCopy) -> None:
    """A selected host whose MTU change faces a leaf that cannot be observed is refused
    by apply, which writes nothing, even though every observed peer would fit."""
    orion.write("intent/mtu.yaml", _mtu(9100, 9000))
    lab = LabFleet.create(orion, drift=0, older_firmware=False)
    orion.write("intent/mtu.yaml", _mtu(9214, 9192))
    for pl in lab.fleet.cabling.ports("gpu-n01"):
        if pl.peer.device.startswith("leaf-") and pl.peer.device != "leaf-r0":
            lab.store.commit(pl.peer.device, {f"interfaces/{pl.peer.port}/mtu": 9214}, save=True)
    lab.store.add_fault(Fault("leaf-r0", FaultKind.unreachable))
    writes = lab.writes()
    done = run_plumb(orion.path, "apply", "--yes", "--select", "name=gpu-n01")
    assert done.returncode == 1
    assert (
        "REFUSED: no safe order can be proved: gpu-n01:eth0 changes in the mtu-host step "
        "but its peer leaf-r0 could not be observed"
    ) in done.stdout
    assert lab.writes() == writes
    lab.close()


def test_a_bad_select_is_a_usage_error(lab: LabFleet) -> None:
    """A malformed --select exits 2 and names the bad term."""
    done = run_plumb(lab.root, "plan", "--select", "role=leaf,colour=red")
    assert done.returncode == 2
    assert "error: unknown key 'colour'" in done.stderr
    assert "known: name, role, rack" in done.stderr


def test_drift_exit_codes(lab: LabFleet) -> None:
    """`drift` exits 2 with drift, 0 once applied, 1 when a device is unknown."""
    drifted = run_plumb(lab.root, "drift")
    assert drifted.returncode == 2, drifted.stderr
    assert "drift: 243 field(s) on 45 device(s); 0 unknown" in drifted.stdout
    assert "leaf-r0 system/nos_version: is '4.31.2F', intent '4.32.2F'" in drifted.stdout
    assert lab.apply(lab.plan()).ok()
    clean = run_plumb(lab.root, "drift")
    assert clean.returncode == 0, clean.stderr
    lab.store.add_fault(Fault("spine-2", FaultKind.unreachable))
    unknown = run_plumb(lab.root, "drift")
    assert unknown.returncode == 1
    assert "1 unknown" in unknown.stdout


def test_drift_exits_1_on_an_error(orion: FleetCopy) -> None:
    """`drift` exits 1 when it cannot run, never 2 (which means drift)."""
    done = run_plumb(orion.path, "drift")
    assert done.returncode == 1
    assert "run `plumb lab init " in done.stderr


def test_the_expanded_text_plan_says_devices_were_cut_only_when_some_were(lab: LabFleet) -> None:
    """The expanded text plan notes that devices were left out only when it left some out."""
    plan = lab.plan()
    entries = sum(len(step.changes) for step in plan.steps)
    cut = "devices shown; --format json has all"
    assert cut not in plan_text(plan, fleet="orion", expand=True, max_devices=entries)
    shorter = plan_text(plan, fleet="orion", expand=True, max_devices=entries - 1)
    assert f"(first {entries - 1} {cut})" in shorter


def test_the_text_plan_groups_identical_changes_across_devices(lab: LabFleet) -> None:
    """One line per identical change with its count by role and its intent line; a
    change on one device keeps its device's name; --expand lists every device."""
    grouped = run_plumb(lab.root, "plan")
    assert grouped.returncode == 0, grouped.stderr
    assert (
        "  firmware/bios: '1.6.2' -> '1.8.0' on 32 gpu-node(s)  [intent/groups.yaml:7:30]\n"
    ) in grouped.stdout
    assert "on 1 frontend(s), 4 leaf(s), 4 spine(s)  [intent/groups.yaml:10:30]" in grouped.stdout
    assert "  leaf-r5 bgp/maximum_paths: 16 -> 64  [intent/bgp.yaml:6:18]" in grouped.stdout
    assert "gpu-n07 firmware/bios" not in grouped.stdout
    expanded = run_plumb(lab.root, "plan", "--expand")
    assert expanded.returncode == 0, expanded.stderr
    bios = [line for line in expanded.stdout.splitlines() if " firmware/bios: " in line]
    assert len(bios) == 32 and all(line.startswith("  gpu-n") for line in bios)
