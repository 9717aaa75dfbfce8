"""The safety story on a real network (Linux + FRR in namespaces, veths at the
inventory's MTUs): a generated fleet of 8 nodes in 2 racks, committed in git.

* An MTU raise applied in plumb's proven order keeps every DF probe between the racks
  arriving at every step; the same changes with the hosts first black-hole jumbo
  frames, and the probe says so.
* A leaf ASN renumbering rolled out ahead of the spines drops the canary's sessions:
  the wave aborts on the data plane's evidence and the rollback brings them back.
* ``plumb verify`` reports what the network says, and exits 1 when it is not well.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from intent.fleet import Fleet, load_fleet
from lab.realfabric.dataplane import fault_counts, plan_probes, verify
from reconciler.loop import apply_plan, observe_all
from reconciler.order import Step
from reconciler.plan import Plan, build_plan
from reconciler.render import render_device
from reconciler.state.db import open_state_db
from reconciler.state.journal import RolloutStatus, TargetStatus
from reconciler.targets import Targets
from tests.realfabric.fabric import fabric_up, lab_state, require_real_lab, run_plumb
from tests.rollouts.gitfleet import git

LOW = """mtu:
  host-leaf:
    switch_port: 4222
    host: 4200
    rdma: 4096
  leaf-spine:
    switch_port: 9214
  frontend:
    switch_port: 9214
    host: 9000
"""
SPEC = """rollout:
  name: leaf-bgp
  description: A BGP change on the rail leaves, leaf by leaf.
  targets:
    select: role=leaf
    paths: ["bgp/*"]
  strata:
    canary_per_stratum: 1
  caps:
    per_wave: 2
  bake:
    mode: fixed
    fixed_minutes: 15.0
    min_minutes: 15.0
  drain: false
  abort:
    hard_faults: [bgp_down, path_mtu, unreachable, unknown]
    aa_noise_floor: false
  rollback:
    scope: wave
    automatic: true
  seed: 7
"""


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """8 nodes in 2 racks, host MTU 4200 on 4222 leaf ports, committed; the real lab up."""
    require_real_lab()
    root = tmp_path_factory.mktemp("dataplane") / "fleet"
    from benchmarks.genfleet import generate_fleet

    generate_fleet(root, 8)
    mtu = root / "intent" / "mtu.yaml"
    mtu.write_text(re.sub(r"(?s)mtu:.*", LOW, mtu.read_text()))
    (root / ".gitignore").write_text(".plumb/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fleet at host MTU 4200")
    with fabric_up(root):
        yield root


def _plan(fleet: Fleet, targets: Targets) -> Plan:
    seen = observe_all(targets, list(fleet.devices))
    desired = {name: render_device(fleet, name) for name in fleet.devices}
    observed = {name: o.state for name, o in seen.items()}
    errors = {name: o.error for name, o in seen.items() if o.error}
    return build_plan(fleet, desired, observed, errors=errors)


def _mtu_paths(plan: Plan) -> Plan:
    """The plan's MTU changes only (the lab's hosts cannot hold firmware or RDMA MTU)."""
    steps: list[Step] = []
    for step in plan.steps:
        kept = {
            d: tuple(c for c in cs if c.path.endswith("/mtu") and "rdma" not in c.path)
            for d, cs in step.changes.items()
        }
        kept = {d: cs for d, cs in kept.items() if cs}
        if kept:
            steps.append(replace(step, index=len(steps), changes=kept))
    return replace(plan, steps=tuple(steps))


def test_the_probes_cover_every_rack_pair_and_a_spine(fleet_root: Path) -> None:
    fleet = load_fleet(fleet_root)
    probes = plan_probes(fleet)
    pairs = {(p.source, p.destination) for p in probes}
    assert pairs == {("gpu-n01", "gpu-n05"), ("gpu-n05", "gpu-n01")}
    assert any(any(d.startswith("spine-") for d in p.path) for p in probes)
    result = verify(fleet, lab_state(fleet_root), settle_s=30)
    assert result.ok, (result.sessions_down(), [p.ping for p in result.paths])
    assert {p.mtu for p in result.paths} == {4200}


def test_an_mtu_raise_in_plumbs_order_never_black_holes_a_path(fleet_root: Path) -> None:
    """Raise to 9214/9000 in plumb's order: every DF probe arrives after every step.
    Then back down (plumb's order again: hosts first), then up with the hosts first:
    the probes at the hosts' new MTU are lost until the leaf ports follow."""
    mtu = fleet_root / "intent" / "mtu.yaml"
    low = mtu.read_text()
    mtu.write_text(low.replace("4222", "9214").replace("host: 4200", "host: 9000"))
    fleet = load_fleet(fleet_root)
    targets = Targets.for_fleet(fleet)
    state = lab_state(fleet_root)
    try:
        plan = _mtu_paths(_plan(fleet, targets))
        assert plan.refused is None
        phases = [s.phase for s in plan.steps]
        assert len(phases) >= 2, phases
        seen = []
        for step in plan.steps:
            report = apply_plan(replace(plan, steps=(step,)), targets, dry_run=False)
            assert report.stopped is None, report.stopped
            result = verify(fleet, state, settle_s=0)
            seen.append((step.phase, sorted({p.mtu for p in result.paths if p.mtu})))
            assert not result.black_holes(), (step.phase, result.black_holes())
            assert result.ok
        assert seen[-1][1] == [9000], seen  # the probes ran at the new host MTU at the end

        mtu.write_text(low)  # back down, in plumb's order
        fleet = load_fleet(fleet_root)
        down = _mtu_paths(_plan(fleet, targets))
        for step in down.steps:
            apply_plan(replace(down, steps=(step,)), targets, dry_run=False)
            assert not verify(fleet, state, settle_s=0).black_holes(), step.phase

        mtu.write_text(low.replace("4222", "9214").replace("host: 4200", "host: 9000"))
        fleet = load_fleet(fleet_root)
        up = _mtu_paths(_plan(fleet, targets))
        hosts = {d: cs for s in up.steps for d, cs in s.changes.items() if d.startswith("gpu-")}
        switches = {
            d: cs for s in up.steps for d, cs in s.changes.items() if not d.startswith("gpu-")
        }
        wrong = replace(up, steps=(replace(up.steps[0], index=0, changes=hosts),))
        apply_plan(wrong, targets, dry_run=False)
        result = verify(fleet, state, settle_s=0)
        holes = result.black_holes()
        assert holes and all(p.mtu == 9000 for p in holes), [p.ping for p in result.paths]
        _, lost, blind = fault_counts(result, ["gpu-n01", "leaf-r0", "spine-1"])
        assert not blind and lost["gpu-n01"] > 0 and lost["leaf-r0"] > 0
        rest = replace(up, steps=(replace(up.steps[0], index=0, changes=switches),))
        apply_plan(rest, targets, dry_run=False)
        assert verify(fleet, state, settle_s=0).ok
    finally:
        mtu.write_text(low)
        fleet = load_fleet(fleet_root)
        back = _mtu_paths(_plan(fleet, targets))
        for step in back.steps:
            apply_plan(replace(back, steps=(step,)), targets, dry_run=False)
        targets.close()


def test_verify_says_what_the_network_says(fleet_root: Path) -> None:
    code, out = run_plumb(fleet_root, "verify", ".", "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    assert report["ok"] and report["bgp"]["switches"] == 12 and not report["bgp"]["down"]
    state = lab_state(fleet_root)
    leaf = state.devices["leaf-r3"]
    port = next(p for p in leaf.ports if p >= "Ethernet33")
    ifname = leaf.ports[port]
    link = ["ip", "netns", "exec", leaf.namespace, "ip", "link", "set", "dev", ifname]
    subprocess.run([*link, "down"], check=True)
    try:
        code, out = run_plumb(fleet_root, "verify", ".", "--settle", "0")
    finally:
        subprocess.run([*link, "up"], check=True)
        settled = verify(load_fleet(fleet_root), state, settle_s=60)  # for the next test
    assert code == 1, out
    assert settled.ok, settled.sessions_down()
    assert re.search(r"DOWN leaf-r3: spine-\d (?!Established)", out), out
    assert "data plane: NOT OK" in out


@contextlib.contextmanager
def _bgp_change(root: Path, edit: Callable[[str], str], message: str) -> Iterator[None]:
    """``edit`` applied to intent/bgp.yaml and committed with the leaf-bgp spec; the
    BGP intent committed back as it was afterwards."""
    bgp = root / "intent" / "bgp.yaml"
    original = bgp.read_text()
    bgp.write_text(edit(original))
    (root / "rollouts" / "leaf-bgp.yaml").write_text(SPEC)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    try:
        yield
    finally:
        bgp.write_text(original)
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"undo: {message}")


def test_a_renumbering_that_splits_bgp_pairs_is_refused_before_any_write(
    fleet_root: Path,
) -> None:
    """The leaves' ASNs renumbered, rolled out over the leaves only: the spines' side of
    every pair would lag, and the order proof refuses before a device is touched."""
    renumber = partial(re.sub, r"leaf-r(\d): 646(\d\d)", r"leaf-r\1: 647\2")
    with _bgp_change(fleet_root, renumber, "leaves to ASNs 647xx"):
        code, out = run_plumb(fleet_root, "rollout", "start", "leaf-bgp", ".")
        assert code == 1, out
        assert "bgp-pairs" in out and "The other end of each pair must change" in out, out
        with open_state_db(fleet_root / ".plumb" / "plumb.db") as db:
            assert db.journal.all() == []
        assert verify(load_fleet(fleet_root), lab_state(fleet_root), settle_s=30).ok


def test_a_wave_that_breaks_routing_aborts_on_the_data_plane_and_rolls_back(
    fleet_root: Path,
) -> None:
    """An inbound filter the switches do not have (what no model of the intent can
    see): the canary leaf's sessions stay up but accept no route, its racks' paths
    across the spines go dark, the wave aborts on that evidence, and the rollback
    brings the routes back."""

    def refilter(text: str) -> str:
        return text.replace("inbound_filter: FABRIC-IN", "inbound_filter: FABRIC-IN-V2")

    with _bgp_change(fleet_root, refilter, "fabric sessions to filter FABRIC-IN-V2"):
        code, out = run_plumb(fleet_root, "rollout", "start", "leaf-bgp", ".")
        assert code == 1, out
        with open_state_db(fleet_root / ".plumb" / "plumb.db") as db:
            rows = db.journal.all()
            assert rows, out
            rollout = rows[0]
            targets = db.journal.targets(rollout.id)
            waves = db.journal.waves(rollout.id)
        assert rollout.status is RolloutStatus.rolled_back, (rollout.status, out)
        canary = [t for t in targets if t.wave == 1]
        assert canary and all(t.status is TargetStatus.rolled_back for t in canary)
        assert all(t.writes == 2 for t in canary)  # once forward, once back
        evidence = json.dumps(waves[0].evidence)
        assert "bgp_down" in evidence and "failure_limit (0)" in evidence, evidence
        assert all(t.writes == 0 for t in targets if t.wave != 1)
        after = verify(load_fleet(fleet_root), lab_state(fleet_root), settle_s=60)
        assert after.ok, after.sessions_down()
