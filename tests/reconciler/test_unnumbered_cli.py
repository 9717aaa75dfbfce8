"""ORION moved to unnumbered BGP as a user does it: `plumb validate`, `plumb plan` shows
the neighbour changes, apply on the lab, and the next plan is empty."""

from __future__ import annotations

from tests.reconciler.labfleet import LabFleet, run_plumb

BGP_FILE = "intent/bgp.yaml"


def test_orion_switched_to_unnumbered_validates_plans_and_converges(clean_lab: LabFleet) -> None:
    """Every leaf-spine session moves from the peer's /31 to the port: the plan adds the
    interface neighbours and drops the numbered ones, and after apply it is empty."""
    clean_lab.copy.append(BGP_FILE, "  peering: unnumbered\n")
    validated = run_plumb(clean_lab.root, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    pending = run_plumb(clean_lab.root, "plan", "--detailed-exitcode")
    assert pending.returncode == 2, pending.stdout + pending.stderr
    sessions = 2 * 8 * 32  # both ends of each of the 8 leaves' 32 uplinks
    assert f"{4 * sessions} change(s) on 12 of 45 device(s)" in pending.stdout
    assert "bgp/neighbors/Ethernet33/remote_as" in pending.stdout

    clean_lab.reload()
    plan = clean_lab.plan()
    changes = {c.path: c.after for c in plan.changes()["leaf-r0"]}
    assert changes["bgp/neighbors/Ethernet33/remote_as"] == 64600
    assert changes["bgp/neighbors/Ethernet33/inbound_filter"] == "FABRIC-IN"
    numbered = [p for p in changes if p.startswith("bgp/neighbors/10.")]
    assert numbered and all(changes[p] is None for p in numbered)
    assert clean_lab.apply(plan).ok()

    again = run_plumb(clean_lab.root, "plan", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 change(s)" in again.stdout
