"""The lease, the freeze switch and the audit log as `plumb` enforces them: a second
writer is refused, a freeze stops a running apply cleanly, the audit log is complete
and catches an edited row."""

from __future__ import annotations

import json
import sqlite3
import time

import git
import pytest

from lab.fleet import Fault, FaultKind
from reconciler.errors import FencedOut
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import ACTOR, LabFleet, run_plumb, start_plumb

HOLDER = "alice@build-07 pid 31337"


def test_a_second_apply_refuses_at_once_naming_the_lease_holder(lab: LabFleet) -> None:
    """While someone holds the fleet's lease, `apply` exits 1 at once, names the holder
    and writes nothing."""
    db = lab.state_db()
    db.lease.acquire(HOLDER, "rollout r-12")
    writes = lab.writes()
    done = run_plumb(lab.root, "apply", "--yes")  # the lease is held for good: a wait never ends
    assert done.returncode == 1
    assert f"fleet lease is held by {HOLDER} for 'rollout r-12'" in done.stderr
    assert "plumb lease break --reason" in done.stderr
    assert lab.writes() == writes
    db.close()


def test_breaking_the_lease_lets_apply_run_and_fences_the_old_holder(lab: LabFleet) -> None:
    """`lease break --reason` ends the stale lease, apply then runs, and the old
    holder's token is fenced out."""
    db = lab.state_db()
    token = db.lease.acquire(HOLDER, "rollout r-12")
    broken = run_plumb(lab.root, "lease", "break", "--reason", "build-07 powered off, INC-4411")
    assert broken.returncode == 0, broken.stderr
    assert f"broke lease of {HOLDER} (token {token.value})" in broken.stdout
    applied = run_plumb(lab.root, "apply", "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    with pytest.raises(FencedOut, match=f"was broken by {ACTOR} at .*: build-07 powered off"):
        db.lease.check(token)
    assert db.lease.current() is None
    db.close()


def test_breaking_a_lease_needs_a_reason(lab: LabFleet) -> None:
    """`lease break` without a reason is refused (exit 2) and the lease stays."""
    db = lab.state_db()
    token = db.lease.acquire(HOLDER, "rollout r-12")
    done = run_plumb(lab.root, "lease", "break")
    assert done.returncode == 2
    assert "--reason is required" in done.stderr
    db.lease.check(token)
    db.close()


def test_a_frozen_fleet_refuses_apply_with_the_reason(lab: LabFleet) -> None:
    """After `freeze --reason`, `apply` exits 1 with who froze it and why, writing nothing."""
    frozen = run_plumb(lab.root, "freeze", "--reason", "INC-4411: packet loss on rail 3")
    assert frozen.returncode == 0, frozen.stderr
    writes = lab.writes()
    done = run_plumb(lab.root, "apply", "--yes")
    assert done.returncode == 1
    assert f"fleet frozen by {ACTOR} since" in done.stderr
    assert "INC-4411: packet loss on rail 3" in done.stderr
    assert lab.writes() == writes


def test_plan_of_a_frozen_fleet_says_apply_will_refuse(lab: LabFleet) -> None:
    """`plumb plan` still plans a frozen fleet, and says the freeze is on and why."""
    run_plumb(lab.root, "freeze", "--reason", "INC-4411: packet loss on rail 3")
    done = run_plumb(lab.root, "plan")
    assert done.returncode == 0, done.stderr
    assert "note: fleet frozen by" in done.stderr
    assert "INC-4411" in done.stderr and "until `plumb unfreeze`" in done.stderr
    run_plumb(lab.root, "unfreeze")
    assert "frozen" not in run_plumb(lab.root, "plan").stderr


def test_apply_of_a_selection_with_nothing_pending_says_so(lab: LabFleet) -> None:
    """A --select whose devices are at intent does not claim the whole fleet is."""
    first = run_plumb(lab.root, "apply", "--yes", "--select", "role=frontend")
    assert first.returncode == 0, first.stdout + first.stderr
    done = run_plumb(lab.root, "apply", "--yes", "--select", "role=frontend")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing to do on --select 'role=frontend'" in done.stdout
    assert "the fleet is at its intent" not in done.stdout


def _wait_for_first_write(lab: LabFleet, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while lab.writes() == 0:
        assert time.monotonic() < deadline, "the apply never wrote"
        time.sleep(0.05)


def test_freezing_during_an_apply_stops_it_at_the_next_device(lab: LabFleet) -> None:
    """A freeze during an apply stops it before its next device write: exit 1, the
    report says Frozen, devices not started are untouched and still planned."""
    for name in lab.fleet.devices:  # every stage, compare and commit takes 300 ms
        lab.store.add_fault(Fault(name, FaultKind.latency, path_glob="*", latency_ms=300))
    before = lab.running()
    apply = start_plumb(lab.root, "apply", "--yes", "--concurrency", "1", "--format", "json")
    try:
        _wait_for_first_write(lab)
        frozen = run_plumb(lab.root, "freeze", "--reason", "INC-9: stop the change")
        assert frozen.returncode == 0, frozen.stderr
        out, err = apply.communicate(timeout=120)
    finally:
        apply.kill()
    assert apply.returncode == 1, err
    report = json.loads(out)
    assert report["stopped"].startswith("Frozen: fleet frozen by")
    assert report["stopped"].endswith("INC-9: stop the change")
    assert {r["outcome"] for r in report["results"]} == {"applied"}
    assert lab.writes() == len(report["results"])
    started = {r["device"] for r in report["results"]}
    untouched = set(report["not_started"]) - started
    assert untouched
    after = lab.running()
    assert all(after[name] == before[name] for name in untouched)
    plan = json.loads(run_plumb(lab.root, "plan", "--format", "json").stdout)
    assert set(report["not_started"]) <= {n for n, d in plan["devices"].items() if d["changes"]}


def _tamper(db_path: str, seq: int) -> None:
    """Edit one audit row the way an intruder with the file would: past the trigger."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE audit SET after = '9216' WHERE seq = ?", (seq,))
        (trigger,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'audit_no_update'"
        ).fetchone()
        conn.execute("DROP TRIGGER audit_no_update")
        conn.execute("UPDATE audit SET after = '9216' WHERE seq = ?", (seq,))
        conn.execute(trigger)
    finally:
        conn.close()


def test_audit_verify_passes_after_apply_and_names_an_edited_row(lab: LabFleet) -> None:
    """`audit verify` passes after an apply; after one row is edited it exits 1 naming
    that row's seq and no other."""
    assert run_plumb(lab.root, "apply", "--yes").returncode == 0
    good = run_plumb(lab.root, "audit", "verify")
    assert good.returncode == 0, good.stdout
    assert good.stdout.startswith("audit chain ok: ")
    db = lab.state_db()
    seq = db.audit.records(1, kind="write")[0].seq
    db.close()
    _tamper(str(lab.root / ".plumb" / "plumb.db"), seq)
    bad = run_plumb(lab.root, "audit", "verify")
    assert bad.returncode == 1
    assert bad.stdout.splitlines() == [
        f"BAD seq {seq}: hash mismatch: row content differs from its hash"
    ]


def test_audit_show_lists_plan_write_and_result_records_with_the_intent_commit(
    orion: FleetCopy,
) -> None:
    """`audit show` lists the plan, every write and every result, each with the git
    commit of the intent that was applied."""
    orion.write(".gitignore", ".plumb/\n")
    repo = git.Repo.init(orion.path)
    repo.git.add("--all")
    author = git.Actor("Test", "test@example.com")
    commit = repo.index.commit("orion intent", author=author, committer=author).hexsha
    lab = LabFleet.create(orion)
    planned = lab.plan()
    assert run_plumb(orion.path, "plan").returncode == 0
    assert run_plumb(orion.path, "apply", "--yes").returncode == 0
    shown = run_plumb(orion.path, "audit", "show", "--json", "--limit", "10000")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    kinds = [r["kind"] for r in records]
    assert {"plan", "write", "result", "decision", "lease"} <= set(kinds)
    assert kinds.index("plan") < kinds.index("write") < kinds.index("result")
    for record in records:
        assert record["actor"].startswith(ACTOR)
        if record["kind"] != "lease":
            assert record["intent_commit"] == commit, record
    writes = {(r["device"], r["field"]): (r["before"], r["after"]) for r in records if r["field"]}
    expected = {
        (device, c.path): (c.before, c.after)
        for device, changes in planned.changes().items()
        for c in changes
    }
    assert writes == expected
    results = [r for r in records if r["kind"] == "result"]
    assert {r["detail"]["outcome"] for r in results} == {"applied"}
    assert sum(r["detail"]["changes"] for r in results) == len(expected)
    lab.close()


def test_apply_records_the_plan_it_applies(lab: LabFleet) -> None:
    """`plumb apply` audits the plan it is about to apply, before the first write."""
    changes = lab.plan().change_count()
    assert run_plumb(lab.root, "apply", "--yes").returncode == 0
    shown = run_plumb(lab.root, "audit", "show", "--json", "--limit", "10000")
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    plans = [r for r in records if r["kind"] == "plan"]
    assert [p["detail"]["changes"] for p in plans] == [changes]
    first_write = next(r["seq"] for r in records if r["kind"] == "write")
    assert plans[0]["seq"] < first_write


def test_confirm_within_zero_commits_without_a_window(lab: LabFleet) -> None:
    """`--confirm-within 0` commits plainly: nothing is left pending, the fleet converges."""
    assert run_plumb(lab.root, "apply", "--yes", "--confirm-within", "0").returncode == 0
    assert lab.store.expired_pending(float("inf")) == []
    assert lab.plan().is_empty()
