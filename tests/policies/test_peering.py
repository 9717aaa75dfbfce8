"""BGP session addressing (``bgp.peering``): numbered IPv4, numbered IPv6, unnumbered."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intent.sessions import all_sessions
from inventory.models import Role
from inventory.problems import InputError
from policies.engine import PolicyReport
from tests.fleetcopy import FleetCopy
from tests.peeringfleet import peering_fleet
from tests.policies.support import at, flagged, only, places, primary

MODES = ("ipv4", "ipv6", "unnumbered")
BGP_FILE = "intent/bgp.yaml"
DEVICES_FILE = "intent/devices.yaml"
ADDRESSING_FILE = "intent/addressing.yaml"


def _override(*addresses: str) -> str:
    """An ``overrides:`` block giving leaf-r0:Ethernet33 each address (block style: an
    IPv6 address's colons end a flow-style key)."""
    entries = "".join(
        f"    - device: leaf-r0\n      port: Ethernet33\n      address: {a}\n" for a in addresses
    )
    return "  overrides:\n" + entries


def _uplinks(fleet: FleetCopy, leaf: str) -> int:
    loaded = fleet.load()
    return sum(
        loaded.devices[pl.peer.device].role is Role.spine for pl in loaded.cabling.ports(leaf)
    )


def _bgp_findings(report: PolicyReport) -> list[str]:
    return [f"{v.policy}: {v.message}" for v in report.violations if v.policy.startswith("bgp.")]


@pytest.mark.parametrize("mode", MODES)
def test_generated_fleet_in_each_mode_is_clean(tmp_path: Path, mode: str) -> None:
    """A generated fleet peering ipv4, ipv6 or unnumbered satisfies every BGP policy."""
    assert _bgp_findings(peering_fleet(tmp_path, mode).evaluate()) == []


@pytest.mark.parametrize("mode", MODES)
def test_sessions_carry_the_mode_and_what_they_are_keyed_by(tmp_path: Path, mode: str) -> None:
    """Each session says its mode; its neighbour is the peer's address, or (unnumbered)
    its own port."""
    fleet = peering_fleet(tmp_path, mode).load()
    session = next(s for s in all_sessions(fleet) if s.device == "leaf-r0")
    assert session.mode == mode
    if mode == "unnumbered":
        assert (session.neighbor, session.local_ip, session.peer_ip) == (session.port, None, None)
    else:
        assert session.peer_ip is not None and session.local_ip is not None
        assert session.neighbor == str(session.peer_ip.value.ip)
        assert session.peer_ip.value.version == (4 if mode == "ipv4" else 6)
        assert session.local_ip.value.subnet == session.peer_ip.value.subnet


def test_one_switch_numbered_in_an_unnumbered_fleet_is_flagged_at_its_line(
    tmp_path: Path,
) -> None:
    """leaf-r0 peering ipv4 while its spines peer unnumbered: one finding per cable, at
    leaf-r0's peering line and the fleet's."""
    fleet = peering_fleet(tmp_path, "unnumbered")
    fleet.set_device_overrides("  leaf-r0:\n    bgp:\n      peering: ipv4\n")
    found = flagged(fleet.evaluate(), "bgp.peering-agree")
    assert len(found) == _uplinks(fleet, "leaf-r0")
    first = found[0]
    assert first.message.startswith("leaf-r0:Ethernet33 peers ipv4 but spine-")
    assert first.message.endswith("peers unnumbered: the session on this cable never comes up")
    assert places(first) == [
        at(fleet, DEVICES_FILE, "peering: ipv4"),
        at(fleet, BGP_FILE, "peering: unnumbered"),
    ]


def test_ipv6_without_an_ipv6_pool_is_flagged(tmp_path: Path) -> None:
    """Peering ipv6 with no IPv6 pool: every fabric cable lacks its /127."""
    fleet = peering_fleet(tmp_path, "ipv4")
    fleet.append(BGP_FILE, "  peering: ipv6\n")
    found = flagged(fleet.evaluate(), "bgp.peering-agree")
    assert len(found) == sum(_uplinks(fleet, leaf.name) for leaf in fleet.load().of_role(Role.leaf))
    assert found[0].message.endswith(
        "no IPv6 address (no addressing.ipv6_pools entry for the link)"
    )


def test_ipv6_override_outside_the_127_is_flagged_at_the_override(tmp_path: Path) -> None:
    """An IPv6 override moving one end out of its /127 is flagged at the override line."""
    fleet = peering_fleet(tmp_path, "ipv6")
    fleet.append(
        ADDRESSING_FILE,
        _override("fc00:0:9::1/127"),
    )
    violation = only(fleet.evaluate(), "bgp.peering-agree")
    assert "fc00:0:9::1/127 and fc00:0:1::/127 are not the two ends of one /127" in (
        violation.message
    )
    file, line = at(fleet, ADDRESSING_FILE, "fc00:0:9::1/127")
    assert primary(violation) == (file, line - 2)  # the entry's "- device:" line


def test_ipv6_overrides_and_ipv4_overrides_of_one_port_coexist(tmp_path: Path) -> None:
    """A port may carry one IPv4 and one IPv6 override; a second IPv6 one is a problem."""
    fleet = peering_fleet(tmp_path, "ipv6")
    fleet.append(
        ADDRESSING_FILE,
        _override("10.0.0.1/31", "fc00:0:1::1/127", "fc00:0:1::3/127"),
    )
    with pytest.raises(InputError) as raised:
        fleet.load()
    assert [str(p) for p in raised.value.problems] == [
        f"{ADDRESSING_FILE}:{at(fleet, ADDRESSING_FILE, 'fc00:0:1::3/127')[1] - 2}:7: "
        "leaf-r0:Ethernet33 is already overridden at "
        f"{ADDRESSING_FILE}:{at(fleet, ADDRESSING_FILE, 'fc00:0:1::1/127')[1] - 2}:7"
    ]


@pytest.mark.parametrize("mode", ["ipv6", "unnumbered"])
def test_missing_router_id_on_ipv6_only_sessions_points_at_the_peering(
    tmp_path: Path, mode: str
) -> None:
    """Without an IPv4 address on its sessions a switch needs a router id: the finding
    names the mode and sits at the peering line."""
    fleet = peering_fleet(tmp_path, mode)
    fleet.replace(BGP_FILE, "    leaf-r3: 10.255.0.8\n", "")
    fleet.replace(
        ADDRESSING_FILE, "  loopbacks: 10.255.0.0/22    # one /32 per spine and leaf\n", ""
    )
    violation = only(fleet.evaluate(), "bgp.router-id-unique")
    assert violation.message == (
        f"leaf-r3 has no router id: its {mode} sessions carry no IPv4 address, and the BGP "
        "identifier is a 32-bit dotted quad"
    )
    assert primary(violation) == at(fleet, BGP_FILE, f"peering: {mode}")


def test_an_ipv6_router_id_is_refused_at_its_line(tmp_path: Path) -> None:
    """The BGP identifier is 32 bits: an IPv6 router id is a schema error at its line."""
    fleet = peering_fleet(tmp_path, "unnumbered")
    fleet.replace(BGP_FILE, "    leaf-r3: 10.255.0.8\n", "    leaf-r3: fc00::8\n")
    with pytest.raises(InputError) as raised:
        fleet.load()
    line = at(fleet, BGP_FILE, "leaf-r3: fc00::8")[1]
    assert any(str(p).startswith(f"{BGP_FILE}:{line}:") for p in raised.value.problems), [
        str(p) for p in raised.value.problems
    ]


def test_unknown_peering_mode_is_refused(tmp_path: Path) -> None:
    """``peering: ipv5`` is a schema error naming the allowed modes."""
    fleet = peering_fleet(tmp_path, "ipv4")
    fleet.append(BGP_FILE, "  peering: ipv5\n")
    with pytest.raises(InputError) as raised:
        fleet.load()
    text = "\n".join(str(p) for p in raised.value.problems)
    assert f"{BGP_FILE}:{at(fleet, BGP_FILE, 'peering: ipv5')[1]}:" in text
    assert "'ipv4', 'ipv6' or 'unnumbered'" in text


def test_maximum_paths_counts_unnumbered_sessions(tmp_path: Path) -> None:
    """maximum-paths 2 on leaves with 4 unnumbered uplinks is flagged as before."""
    fleet = peering_fleet(tmp_path, "unnumbered")
    fleet.replace(BGP_FILE, "  maximum_paths: 64 ", "  maximum_paths: 2 ")
    found = flagged(fleet.evaluate(), "bgp.maximum-paths")
    uplinks = _uplinks(fleet, "leaf-r0")
    assert f"leaf-r0: maximum-paths 2 < {uplinks} equal-cost paths" in [v.message for v in found]


def test_remote_as_override_is_checked_on_unnumbered_sessions(tmp_path: Path) -> None:
    """A wrong remote-as toward a spine is flagged on an unnumbered fleet too."""
    fleet = peering_fleet(tmp_path, "unnumbered")
    fleet.set_device_overrides(
        "  leaf-r0:\n    bgp:\n      neighbors:\n        spine-1: {remote_as: 65000}\n"
    )
    found = flagged(fleet.evaluate(), "bgp.remote-as-match")
    assert found and all(v.message.startswith("leaf-r0 -> spine-1: remote-as 65000") for v in found)


def test_duplicate_leaf_asn_is_flagged_on_ipv6_fleet(tmp_path: Path) -> None:
    """Two leaves sharing an ASN are flagged whatever the peering."""
    fleet = peering_fleet(tmp_path, "ipv6")
    text = (fleet.path / BGP_FILE).read_text()
    leaf_r1 = next(line for line in text.splitlines() if line.startswith("    leaf-r1:"))
    leaf_r0 = next(line for line in text.splitlines() if line.startswith("    leaf-r0:"))
    fleet.replace(BGP_FILE, leaf_r1, "    leaf-r1: " + leaf_r0.split(":")[1].strip())
    assert only(fleet.evaluate(), "bgp.leaf-asn-unique").subject == "leaf-r1"


@settings(max_examples=12, deadline=None)
@given(
    nodes=st.sampled_from([8, 16, 32, 64]),
    seed=st.integers(0, 1000),
    block=st.integers(0, 0xFFFF),
)
def test_generated_127s_are_unique_and_both_ends_agree(nodes: int, seed: int, block: int) -> None:
    """Over any generated cabling and IPv6 pool, every fabric cable's ends share one /127
    no other cable uses, and each end's session names the other end's address."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = peering_fleet(Path(tmp), "ipv6", nodes=nodes, seed=seed)
        copy.replace(ADDRESSING_FILE, "fc00:0:1::/64", f"fd00:{block:x}::/64")
        fleet = copy.load()
        sessions = {(s.device, s.port): s for s in all_sessions(fleet)}
        subnets = set()
        for session in sessions.values():
            back = sessions[session.peer, session.peer_port]
            assert session.local_ip is not None and back.local_ip is not None
            assert session.neighbor == str(back.local_ip.value.ip)
            assert session.local_ip.value.subnet == back.local_ip.value.subnet
            subnets.add(session.local_ip.value.subnet)
        assert len(subnets) * 2 == len(sessions)
        assert flagged(_evaluate(copy), "bgp.peering-agree") == []


def _evaluate(fleet: FleetCopy) -> PolicyReport:
    return fleet.evaluate()


def test_an_override_of_neither_family_is_one_problem_at_its_line(tmp_path: Path) -> None:
    """An override address that is neither IPv4 nor IPv6 is one problem naming both
    families, not one per family."""
    fleet = peering_fleet(tmp_path, "ipv6")
    fleet.append(ADDRESSING_FILE, _override("fc00::zz/127"))
    with pytest.raises(InputError) as raised:
        fleet.load()
    line = at(fleet, ADDRESSING_FILE, "fc00::zz/127")[1]
    assert [str(p) for p in raised.value.problems] == [
        f"{ADDRESSING_FILE}:{line}:16: addressing.overrides.0.address: Value error, not an "
        "IPv4 or IPv6 interface address (e.g. 10.0.0.0/31, fc00::/127) (got 'fc00::zz/127')"
    ]
