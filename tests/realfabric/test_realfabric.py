"""The real-network lab and the linux-frr driver against real FRR in namespaces: BGP
converges, DF pings cross the fabric, MTUs really change, a refused config changes
nothing, the revert timer reverts, confirm stops it, and `lab down` cleans up after an
interrupted init."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.genfleet import generate_fleet
from intent.fleet import load_fleet
from lab.realfabric import build
from lab.realfabric.build import _make_links, tear_down
from lab.realfabric.layout import expected_peers, plan_layout
from lab.realfabric.probes import df_ping, wait_for_bgp
from lab.realfabric.state import fabric_driver, load_state, save_state
from reconciler.errors import ConfigRejected
from reconciler.settings import Change
from tests.realfabric.fabric import (
    Fabric,
    build_fabric,
    remove_fabric,
    require_real_lab,
    shared_fabric,
)

LEAF = "leaf-r1"


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return shared_fabric()


def _running(fabric: Fabric, device: str) -> str:
    entry = fabric.state.devices[device]
    return subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            entry.namespace,
            "vtysh",
            "--vty_socket",
            str(entry.vty_socket),
            "-c",
            "show running-config",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _mtu(fabric: Fabric, device: str, ifname: str) -> int:
    entry = fabric.state.devices[device]
    shown = subprocess.run(
        ["ip", "-n", entry.namespace, "-j", "link", "show", "dev", ifname],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    return int(json.loads(shown.stdout)[0]["mtu"])


def _uplink(fabric: Fabric, device: str) -> tuple[str, str]:
    ports = fabric.state.devices[device].ports
    port = next(p for p in ports if p >= "Ethernet33")
    return port, ports[port]


def test_every_session_is_established_with_routes(fabric: Fabric) -> None:
    """Every switch has an Established session, with routes, to each intended peer."""
    bgp = wait_for_bgp(fabric.state, expected_peers(fabric.fleet), timeout=60)
    assert bgp.converged, {d.device: sorted(d.missing) for d in bgp.devices.values()}
    assert bgp.sessions_established() == 2 * 32


def test_df_ping_crosses_the_fabric_at_jumbo_size(fabric: Fabric) -> None:
    """A 9000-byte DF ping goes from one leaf's loopback to another's over a spine."""
    src = str(fabric.fleet.addresses.router_ids["leaf-r0"].value)
    dst = str(fabric.fleet.addresses.router_ids["leaf-r2"].value)
    result = df_ping(fabric.state, "leaf-r0", dst, 8972, source_address=src)
    assert result.ok, result
    assert result.packet_bytes == 9000


def test_df_ping_larger_than_the_host_mtu_fails_locally(fabric: Fabric) -> None:
    """From a GPU node (NIC MTU 9000) a 9100-byte DF packet is refused, not sent."""
    leaf_port = fabric.fleet.addresses.text_at(
        next(iter(fabric.fleet.cabling.ends("gpu-n01").values())) ^ 1
    )
    assert leaf_port is not None
    result = df_ping(fabric.state, "gpu-n01", leaf_port.split("/")[0], 9100 - 28, count=1)
    assert not result.ok and result.received == 0
    assert result.mtu_error is not None, result


def test_apply_really_changes_the_mtu_in_the_namespace(fabric: Fabric) -> None:
    """An MTU change through the driver is what `ip link` shows afterwards."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    port, ifname = _uplink(fabric, LEAF)
    path = f"interfaces/{port}/mtu"
    before = driver.observe(ref)[path]
    try:
        result = driver.apply(ref, [Change(path, before, 9000)], dry_run=False)
        assert result.outcome.value == "applied", result.error
        assert _mtu(fabric, LEAF, ifname) == 9000
    finally:
        driver.apply(ref, [Change(path, 9000, before)], dry_run=False)


def test_a_refused_bgp_change_leaves_the_running_config_as_it_was(fabric: Fabric) -> None:
    """A route-map name FRR does not accept is ConfigRejected; nothing changes."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    before = _running(fabric, LEAF)
    peer = next(p.split("/")[2] for p in driver.observe(ref) if p.startswith("bgp/neighbors/"))
    path = f"bgp/neighbors/{peer}/inbound_filter"
    with pytest.raises(ConfigRejected):
        driver.apply(ref, [Change(path, "FABRIC-IN", "NO SUCH MAP")], dry_run=False)
    assert _running(fabric, LEAF) == before


def test_an_unconfirmed_commit_is_reverted_by_the_device(fabric: Fabric) -> None:
    """Committed with a window and never confirmed, MTU and BGP go back by themselves."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    port, ifname = _uplink(fabric, LEAF)
    state = driver.observe(ref)
    changes = [
        Change(f"interfaces/{port}/mtu", state[f"interfaces/{port}/mtu"], 4000),
        Change("bgp/maximum_paths", state["bgp/maximum_paths"], 8),
    ]
    candidate = driver.stage(ref, changes)
    driver.compare(ref, candidate)
    driver.commit(ref, candidate, confirm_within=1.0)
    assert _mtu(fabric, LEAF, ifname) == 4000
    pidfile = Path(fabric.state.devices[LEAF].workdir) / "revert.pid"
    while pidfile.exists():  # the timer removes it when it has restored
        time.sleep(0.1)
    after = driver.observe(ref)
    assert after[f"interfaces/{port}/mtu"] == state[f"interfaces/{port}/mtu"]
    assert after["bgp/maximum_paths"] == state["bgp/maximum_paths"]


def test_confirm_stops_the_revert_timer(fabric: Fabric) -> None:
    """After a confirmed apply no timer process is left in the namespace."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    state = driver.observe(ref)
    paths = state["bgp/maximum_paths"]
    result = driver.apply(
        ref, [Change("bgp/maximum_paths", paths, 12)], dry_run=False, confirm_within=60
    )
    assert result.outcome.value == "applied", result.error
    namespace = fabric.state.devices[LEAF].namespace
    pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True)
    assert sorted(map(int, pids.stdout.split())) == sorted(fabric.state.pids[LEAF])
    driver.apply(ref, [Change("bgp/maximum_paths", 12, paths)], dry_run=False)


def test_a_confirmed_change_is_saved_in_the_routers_own_directory(fabric: Fabric) -> None:
    """After confirm, `write memory` puts the running config in the per-router
    directory's bgpd.conf (what bgpd starts from), never in /etc/frr."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    saved = Path(fabric.state.devices[LEAF].workdir) / "bgpd.conf"
    paths = driver.observe(ref)["bgp/maximum_paths"]
    etc = Path("/etc/frr/frr.conf")
    etc_before = etc.read_bytes() if etc.exists() else None
    try:
        result = driver.apply(
            ref, [Change("bgp/maximum_paths", paths, 7)], dry_run=False, confirm_within=60
        )
        assert result.outcome.value == "applied", result.error
        assert "  maximum-paths 7" in saved.read_text()
    finally:
        driver.apply(ref, [Change("bgp/maximum_paths", 7, paths)], dry_run=False)
    assert "maximum-paths 7" not in saved.read_text()
    assert (etc.read_bytes() if etc.exists() else None) == etc_before


def test_bgp_sessions_are_observed_read_only(fabric: Fabric) -> None:
    """Every intended peer's session is observed Established with prefixes, through the
    driver; the veths answer no DCB and this kernel has no RED, each said why."""
    driver = fabric_driver(fabric.state)
    ref = fabric.ref(LEAF)
    state = driver.observe(ref)
    peers = expected_peers(fabric.fleet)[LEAF]
    sessions = driver.bgp_sessions(ref)
    assert peers <= set(sessions)
    for peer in peers:
        assert state[f"bgp_session/{peer}/state"] == "Established"
        assert state[f"bgp_session/{peer}/prefixes_received"] == sessions[peer].prefixes_received
    port, _ = _uplink(fabric, LEAF)
    assert "Operation not supported" in str(state[f"interfaces/{port}/dcb"])
    if state["system/qdisc_red"] == "no":
        assert "Specified qdisc kind is unknown" in str(state["system/qdisc_probe"])


def test_lab_down_removes_what_an_interrupted_init_made(tmp_path: Path) -> None:
    """Namespaces recorded and made, daemons never started (the process died): down
    removes every one."""
    require_real_lab()
    generate_fleet(tmp_path / "fleet", 4)
    fleet = load_fleet(tmp_path / "fleet")
    state_dir = tmp_path / "fleet" / ".plumb"
    layout = plan_layout(fleet)
    save_state(state_dir, build._initial_state(fleet, layout))
    _make_links(layout)
    assert all(os.path.exists(f"/run/netns/{ns}") for ns in layout.namespaces())
    report = tear_down(state_dir)
    assert report.namespaces == len(layout.namespaces())
    assert not any(os.path.exists(f"/run/netns/{ns}") for ns in layout.namespaces())
    assert load_state(state_dir) is None


def test_removing_a_test_fabric_deletes_its_directory(tmp_path: Path) -> None:
    """The shared fabric's temporary directory goes with the fabric, not only its lab."""
    require_real_lab()
    top = tmp_path / "plumb-realfabric-x"
    generate_fleet(top / "fleet", 4)
    fleet = load_fleet(top / "fleet")
    layout = plan_layout(fleet)
    save_state(top / "fleet" / ".plumb", build._initial_state(fleet, layout))
    _make_links(layout)
    remove_fabric(top)
    assert not top.exists()
    assert not any(os.path.exists(f"/run/netns/{ns}") for ns in layout.namespaces())


@pytest.mark.slow
def test_orion_shape_converges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The full ORION fleet (8 leaves, 4 spines, 32 nodes x 8 NICs) comes up with every
    eBGP session Established; the time it took is printed, never asserted."""
    require_real_lab()
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "orion", tmp_path / "o")
    start = time.monotonic()
    try:
        made = build_fabric(tmp_path / "o", nodes=0)
    finally:
        elapsed = time.monotonic() - start
        tear_down(tmp_path / "o" / ".plumb")
    with capsys.disabled():
        print(
            f"\nORION real fabric: {len(made.state.namespaces)} namespaces, BGP converged "
            f"{elapsed:.1f} s after init started"
        )
