"""End to end: ``plumb apply --yes`` then ``plumb plan --detailed-exitcode``
against ORION's switches simulated over SSH (all 13 observed, an EOS leaf, a SONiC leaf
and a spine selected), reached through ``drivers:`` rules in plumb.yaml (EOS and SONiC,
``mgmt_map`` to the simulator's ports); GPU nodes stay in the lab fleet."""

from __future__ import annotations

import json

from reconciler.settings import as_desired_state
from tests.drivers.conftest import FleetRun


def test_plan_shows_work_on_the_selected_switches(fleet_run: FleetRun) -> None:
    """The first plan observes the drifted switches over SSH and plans changes on each."""
    run = fleet_run.runs["plan_json"]
    assert run.exit_code == 0, run.output
    text = json.dumps(json.loads(run.output))
    assert all(f'"{name}"' in text for name in ("leaf-r0", "leaf-r1", "spine-1"))


def test_apply_then_plan_is_empty(fleet_run: FleetRun) -> None:
    """apply converges every switch as far as it can be written: the next plan has no
    change left. The SONiC leaf runs SONiC's default bgpcfgd mode and a WRED profile
    its release's updater does not let plumb edit, so what ORION intends there for
    router-id, maximum-paths, route-maps and ECN is reported as CANNOT REACH INTENT
    (exit 2), never as converged."""
    applied = fleet_run.runs["apply"]
    assert applied.exit_code == 0, applied.output
    assert "applied" in applied.output and "failed" not in applied.output
    after = fleet_run.runs["plan_after"]
    assert after.exit_code == 2, after.output
    assert "0 change(s)" in after.output
    stuck = [line for line in after.output.splitlines() if line.startswith("CANNOT REACH")]
    assert stuck and all("(leaf-r1)" in line for line in stuck)
    paths = {line.split()[3] for line in stuck}
    assert {"bgp/router_id", "bgp/maximum_paths"} <= paths
    assert all(p.startswith(("bgp/", "qos/ecn/")) for p in paths)


def test_the_switches_hold_their_intent(fleet_run: FleetRun) -> None:
    """The simulator's own records show intent on an EOS and on a SONiC leaf."""
    from intent.fleet import load_fleet
    from reconciler.render import render_device

    fleet = load_fleet(fleet_run.repo)
    eos = fleet_run.sim.running("leaf-r0")
    desired = as_desired_state(render_device(fleet, "leaf-r0"))
    assert eos.interfaces["Ethernet1"].mtu == desired["interfaces/Ethernet1/mtu"]
    assert eos.bgp is not None and eos.bgp.maximum_paths == desired["bgp/maximum_paths"]
    sonic = fleet_run.sim.record("leaf-r1")
    assert sonic["running"] == sonic["startup"]  # confirmed and saved
    mtu = as_desired_state(render_device(fleet, "leaf-r1"))["interfaces/Ethernet1/mtu"]
    assert sonic["running"]["PORT"]["Ethernet1"]["mtu"] == str(mtu)
