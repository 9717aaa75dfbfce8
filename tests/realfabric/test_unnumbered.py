"""BGP unnumbered on a real network (FRR in namespaces): a generated fleet of 8 nodes in
2 racks whose switches peer over IPv6 link-local only (no address on a switch-to-switch
veth), brought up with ``plumb lab init --real``'s builder. Sessions come up under the
interfaces' names and carry IPv4 routes with IPv6 link-local next hops (RFC 8950),
jumbo frames cross the racks, ``plumb verify`` agrees; then ``plumb apply`` moves the
fleet to numbered IPv6 (/127s) and back, each time to an empty plan and every session
Established again."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from intent.fleet import load_fleet
from lab.realfabric.layout import expected_peers
from lab.realfabric.probes import df_ping, wait_for_bgp
from lab.realfabric.state import FabricState
from tests.peeringfleet import IPV6_POOL, peering_fleet
from tests.realfabric.fabric import fabric_up, lab_state, require_real_lab, run_plumb

LEAF = "leaf-r0"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_real_lab()
    root = tmp_path_factory.mktemp("unnumbered") / "fleet"
    peering_fleet(root, "unnumbered", nodes=8, link_local_only=True)
    with fabric_up(root):
        yield root


def _ip_json(state: FabricState, device: str, *args: str) -> list[dict[str, object]]:
    shown = subprocess.run(
        ["ip", "-n", state.namespace(device), "-j", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[dict[str, object]] = json.loads(shown.stdout)
    return found


def _converged(root: Path) -> set[str]:
    """Every expected session Established with routes; the keys FRR lists them under."""
    expected = expected_peers(load_fleet(root))
    bgp = wait_for_bgp(lab_state(root), expected, timeout=60)
    assert bgp.converged, {d.device: sorted(d.missing) for d in bgp.devices.values()}
    assert bgp.sessions_established() == sum(len(peers) for peers in expected.values())
    return set(bgp.devices[LEAF].sessions)


def test_sessions_run_on_the_interfaces_with_link_local_addresses_only(root: Path) -> None:
    """Every session is Established with routes, keyed by the Linux interface; the
    switch-to-switch veths hold no address but their link-local one."""
    state = lab_state(root)
    uplinks = _converged(root)
    assert len(uplinks) > 1 and uplinks <= set(state.devices[LEAF].ports.values())
    for entry in _ip_json(state, LEAF, "address", "show"):
        if entry["ifname"] in uplinks:
            scopes = {str(a["scope"]) for a in entry["addr_info"]}  # type: ignore[attr-defined]
            assert scopes == {"link"}, entry


def test_ipv4_routes_have_ipv6_link_local_next_hops(root: Path) -> None:
    """Another leaf's loopback is reached over every spine, each next hop a link-local
    IPv6 address (RFC 8950: IPv4 routes over IPv6 sessions)."""
    fleet = load_fleet(root)
    other = str(fleet.addresses.router_ids["leaf-r1"].value)
    routes = _ip_json(lab_state(root), LEAF, "route", "show", other)
    assert routes, f"no route to {other}"
    hops = routes[0].get("nexthops") or [routes[0]]
    assert isinstance(hops, list) and len(hops) >= 1
    for hop in hops:
        via = hop["via"]
        assert via["family"] == "inet6" and via["host"].startswith("fe80:"), hop


def test_a_jumbo_df_ping_crosses_between_racks(root: Path) -> None:
    """9000 bytes with DF set from a node in one rack to another rack's node on another
    rail: host, leaf, spine (unnumbered), leaf, host."""
    fleet = load_fleet(root)
    ends = fleet.cabling.ends
    source = fleet.addresses.text_at(ends("gpu-n01")["eth0"])
    target = fleet.addresses.text_at(ends("gpu-n05")["eth1"])
    assert source is not None and target is not None
    result = df_ping(
        lab_state(root), "gpu-n01", target.split("/")[0], 8972, source_address=source.split("/")[0]
    )
    assert result.ok and result.packet_bytes == 9000, result


def test_verify_finds_the_unnumbered_fabric_well(root: Path) -> None:
    code, out = run_plumb(root, "verify", ".", "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    assert report["ok"] and report["bgp"]["switches"] == 12 and not report["bgp"]["down"]


def _apply_then_plan(root: Path) -> None:
    code, out = run_plumb(root, "apply", ".", "--yes", "--confirm-within", "0")
    assert code == 0, out
    assert re.search(r"apply: \d+ change\(s\) on 12 device\(s\): 12 applied", out), out
    code, out = run_plumb(root, "plan", ".")
    assert re.search(r"plan for \S+: 0 change\(s\)", out), out


def test_apply_moves_the_fleet_to_numbered_ipv6_and_back(root: Path) -> None:
    """Peering ipv6 with /127s (and the /31s back, for the hosts' IPv4 next hops):
    applied through ``plumb apply``, the plan is empty afterwards and the sessions run
    between the /127s; moved back to unnumbered, they run on the interfaces again."""
    addressing, bgp = root / "intent" / "addressing.yaml", root / "intent" / "bgp.yaml"
    before = {addressing: addressing.read_text(), bgp: bgp.read_text()}
    uplinks = _converged(root)
    addressing.write_text(
        before[addressing].replace("  pools:\n", "  pools:\n    leaf-spine: 10.0.0.0/16\n")
        + f"  ipv6_pools:\n    leaf-spine: {IPV6_POOL}\n"
    )
    bgp.write_text(before[bgp].replace("peering: unnumbered", "peering: ipv6"))
    try:
        _apply_then_plan(root)
        numbered = _converged(root)
        assert all(key.startswith("fc00:") for key in numbered), numbered
        code, out = run_plumb(root, "verify", ".")
        assert code == 0, out
    finally:
        bgp.write_text(before[bgp])
    _apply_then_plan(root)
    assert _converged(root) == uplinks
    code, out = run_plumb(root, "verify", ".")
    assert code == 0, out
