"""`plumb apply` when it is interrupted or when another writer is about: it plans under
the lease, releases the lease on SIGTERM and on a full disk, and a re-run after a crash
confirms the commits the dead run left awaiting confirmation."""

from __future__ import annotations

import json
import math
import resource
import signal
import time

from lab.fleet import Fault, FaultKind
from reconciler.state.audit import AuditKind
from tests.reconciler.labfleet import LabFleet, run_plumb, start_plumb


def _changed_devices(lab: LabFleet) -> list[str]:
    plan = json.loads(run_plumb(lab.root, "plan", "--format", "json").stdout)
    return sorted(n for n, d in plan["devices"].items() if d["changes"])


def _slow(lab: LabFleet, device: str, latency_ms: int) -> None:
    """Every operation on ``device`` (observe, stage, compare, commit, confirm) sleeps."""
    lab.store.add_fault(Fault(device, FaultKind.latency, latency_ms=latency_ms))


def _wait(condition: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _pending(lab: LabFleet) -> set[str]:
    """Devices whose last commit still awaits confirmation (reverts when its window ends)."""
    return {p.device for p in lab.store.expired_pending(math.inf)}


def test_apply_observes_and_plans_while_holding_the_lease(lab: LabFleet) -> None:
    """The plan an apply acts on is made under its lease: in the audit log its `plan`
    record comes after the lease's `acquire` and before its `release`."""
    done = run_plumb(lab.root, "apply", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    db = lab.state_db()
    records = db.audit.records(500)
    db.close()
    order = [
        (r.kind, r.detail.get("action"))
        for r in records
        if r.kind is AuditKind.plan or r.kind is AuditKind.lease
    ]
    assert order == [
        (AuditKind.lease, "acquire"),
        (AuditKind.plan, None),
        (AuditKind.lease, "release"),
    ], order


def test_a_rerun_after_a_crash_confirms_the_commit_left_awaiting_confirmation(
    lab: LabFleet,
) -> None:
    """Killed between a device's commit and its confirm, the apply leaves a commit the
    device would revert; after the lease is broken, `apply` again confirms it (and says
    so) instead of reporting "nothing to do" and letting the device revert."""
    victim = _changed_devices(lab)[0]
    _slow(lab, victim, 1500)
    apply = start_plumb(lab.root, "apply", "--yes", "--confirm-within", "600")
    try:
        _wait(lambda: victim in _pending(lab), f"{victim}'s commit")
        apply.send_signal(signal.SIGKILL)
        apply.communicate(timeout=30)
    finally:
        apply.kill()
    assert victim in _pending(lab)  # committed, never confirmed: the crash we wanted
    lab.store.clear_faults()
    broken = run_plumb(lab.root, "lease", "break", "--reason", "the apply was killed")
    assert broken.returncode == 0, broken.stderr
    again = run_plumb(lab.root, "apply", "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (
        f"interrupted write on {victim}: all" in again.stderr
        and "its commit awaiting confirmation is confirmed" in again.stderr
    ), again.stderr
    assert _pending(lab) == set()  # nothing left to revert by itself
    third = run_plumb(lab.root, "apply", "--yes")
    assert "interrupted write" not in third.stderr  # settled once, recorded as settled


def test_sigterm_releases_the_lease(lab: LabFleet) -> None:
    """SIGTERM to a running `plumb apply` unwinds it: exit 143, no further device
    started, and `plumb lease show` shows the lease released."""
    for device in _changed_devices(lab):
        _slow(lab, device, 700)
    apply = start_plumb(lab.root, "apply", "--yes", "--concurrency", "1")
    try:
        _wait(lambda: lab.writes() > 0, "the first device write")
        apply.send_signal(signal.SIGTERM)
        _, err = apply.communicate(timeout=60)
    finally:
        apply.kill()
    assert apply.returncode == 143, err
    assert "terminated (SIGTERM)" in err
    shown = run_plumb(lab.root, "lease", "show")
    assert shown.stdout.strip() == "no lease held", shown.stdout + shown.stderr
    db = lab.state_db()
    actions = [r.detail.get("action") for r in db.audit.records(500, kind="lease")]
    db.close()
    assert actions[-2:] == ["acquire", "release"]


def test_ctrl_c_says_what_was_written_and_what_was_not(lab: LabFleet) -> None:
    """Ctrl-C (SIGINT) during `plumb apply`: exit 130, the device in flight is let
    finish, and one block says which devices were written and which never started,
    agreeing with the devices' own write counts."""
    changed = _changed_devices(lab)
    for device in changed:
        _slow(lab, device, 400)
    apply = start_plumb(lab.root, "apply", "--yes", "--concurrency", "1")
    try:
        _wait(lambda: lab.writes() > 0, "the first device write")
        apply.send_signal(signal.SIGINT)
        _, err = apply.communicate(timeout=120)
    finally:
        apply.kill()
    assert apply.returncode == 130, err
    assert "interrupted: no further device was started" in err
    written = lab.store.device_writes()
    touched = sorted(d for d in changed if written.get(d, 0) > 0)
    assert f"  written: {len(touched)} device(s)" in err, err
    assert f"  not started: {len(changed) - len(touched)} device(s)" in err, err
    assert 0 < len(touched) < len(changed)
    assert "in flight when stopped, let finish: 1 (" in err
    assert "Traceback" not in err


def test_a_full_disk_stops_apply_with_exit_2_and_releases_the_lease(lab: LabFleet) -> None:
    """When the state files cannot grow any more (the file size limit lowered under a
    running apply, as a filling disk would), apply exits 2 saying so, and the lease is
    released: the next writer is not locked out."""
    devices = _changed_devices(lab)
    for device in devices:
        _slow(lab, device, 400)
    state = lab.root / ".plumb"
    apply = start_plumb(lab.root, "apply", "--yes", "--concurrency", "1")
    try:
        db = lab.state_db()
        _wait(lambda: db.lease.current() is not None, "the apply's lease")
        db.close()
        # Room for the database to take in its log, not for the log to grow past it.
        limit = (state / "plumb.db").stat().st_size + 8 * 1024
        resource.prlimit(apply.pid, resource.RLIMIT_FSIZE, (limit, limit))
        _, err = apply.communicate(timeout=120)
    finally:
        apply.kill()
    assert apply.returncode == 2, err
    assert "Traceback" not in err
    assert "free space and run the command again" in err, err
    shown = run_plumb(lab.root, "lease", "show")
    assert shown.stdout.strip() == "no lease held", shown.stdout + shown.stderr
