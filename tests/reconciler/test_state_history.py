"""Deleting .plumb/plumb.db while the state directory remains does not silently start
a new history (freeze lifted, audit "ok: 0 records"): plumb refuses and says how to
restore or how to start afresh on purpose, which is audited."""

from __future__ import annotations

from tests.reconciler.labfleet import LabFleet, run_plumb


def test_a_deleted_state_database_is_refused_not_recreated(lab: LabFleet) -> None:
    frozen = run_plumb(lab.root, "freeze", "--reason", "INC-7: rail 3")
    assert frozen.returncode == 0, frozen.stderr
    database = lab.root / ".plumb" / "plumb.db"
    assert (lab.root / ".plumb" / "plumb.db.history").is_file()
    database.unlink()
    for args in (("plan",), ("apply", "--yes"), ("audit", "verify")):
        done = run_plumb(lab.root, *args)
        assert done.returncode in (1, 2), (args, done.stdout + done.stderr)
        assert "is gone, but the fleet's state history began there" in done.stderr
        assert "plumb state new-history --reason" in done.stderr
        assert not database.exists()  # nothing was created in its place


def test_a_new_history_is_started_on_purpose_and_audited(lab: LabFleet) -> None:
    assert run_plumb(lab.root, "plan").returncode == 0
    (lab.root / ".plumb" / "plumb.db").unlink()
    refused = run_plumb(lab.root, "state", "new-history")
    assert refused.returncode == 2 and "--reason is required" in refused.stderr
    done = run_plumb(lab.root, "state", "new-history", "--reason", "disk replaced, no backup")
    assert done.returncode == 0, done.stderr
    shown = run_plumb(lab.root, "audit", "show", "--kind", "decision")
    assert "new history" in shown.stdout and "disk replaced, no backup" in shown.stdout
    assert run_plumb(lab.root, "plan").returncode == 0
    again = run_plumb(lab.root, "state", "new-history", "--reason", "x")
    assert again.returncode == 1 and "its history goes on" in again.stderr
