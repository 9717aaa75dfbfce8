"""EOS BGP route maps per address family: read at every level, reported as the one in
force, written where the one in force lives, and taken from what the device reports.

Configuration texts are in EOS's documented syntax (``address-family ipv4`` blocks
under ``router bgp``, ``neighbor X route-map NAME in|out``); the device answers come
from the switch simulator over SSH.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inventory.problems import UNKNOWN
from reconciler.drivers.base import Outcome
from reconciler.drivers.eos_bgp_parse import parse_bgp_peers, reported_policies
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.errors import ConfigRejected
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.eosboot import boot_eos
from tests.drivers.eostext import applied, lines_for, state_of

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "eos"

FOUR_LEVELS = """\
router bgp 65101
   neighbor SPINE peer group
   neighbor SPINE remote-as 65000
   neighbor SPINE route-map RM-GROUP in
   neighbor 10.0.0.1 peer group SPINE
   neighbor 10.0.0.1 route-map RM-OWN in
   neighbor 10.0.0.3 peer group SPINE
   neighbor 10.0.0.5 peer group SPINE
   neighbor 10.0.0.7 remote-as 65007
   neighbor fc00::1 remote-as 65000
   !
   address-family ipv4
      neighbor SPINE route-map RM-GROUP-AF out
      neighbor 10.0.0.5 route-map RM-OWN-AF in
   !
   address-family ipv6
      neighbor fc00::1 activate
      neighbor fc00::1 route-map RM-V6-IN in
      neighbor 10.0.0.7 activate
      neighbor 10.0.0.7 route-map RM-6PE-IN in
!
"""

AF_POLICY = """\
hostname leaf-af
interface Ethernet1
   no switchport
   ip address 10.0.0.0/31
!
router bgp 65101
   router-id 10.255.0.1
   neighbor 10.0.0.1 remote-as 65000
   neighbor 10.0.0.1 route-map RM-ROUTER-IN in
   !
   address-family ipv4
      neighbor 10.0.0.1 activate
      neighbor 10.0.0.1 route-map RM-AF-IN in
!
"""


def test_the_route_map_in_force_is_the_most_specific_level() -> None:
    """Own line under the family, then the group's there, then own router-level, then the
    group's: each neighbour reports the first that is set, per direction."""
    state = state_of(FOUR_LEVELS)
    assert state["bgp/neighbors/10.0.0.1/inbound_filter"] == "RM-OWN"
    assert state["bgp/neighbors/10.0.0.3/inbound_filter"] == "RM-GROUP"
    assert state["bgp/neighbors/10.0.0.5/inbound_filter"] == "RM-OWN-AF"
    assert state["bgp/neighbors/10.0.0.3/outbound_filter"] == "RM-GROUP-AF"
    assert state["bgp/neighbors/10.0.0.7/inbound_filter"] == ""


def test_each_family_a_neighbour_is_active_in_is_reported() -> None:
    """An IPv6 neighbour reports its IPv6 policy; an IPv4 neighbour activated under
    `address-family ipv6` reports that family's too, apart from its own."""
    state = state_of(FOUR_LEVELS)
    assert state["bgp/neighbors/fc00::1/inbound_filter"] == "RM-V6-IN"
    assert state["bgp/neighbors/10.0.0.7/ipv6_inbound_filter"] == "RM-6PE-IN"
    assert "bgp/neighbors/10.0.0.3/ipv6_inbound_filter" not in state


def test_a_route_map_under_the_family_is_replaced_there() -> None:
    """The neighbour's own line under `address-family ipv4` holds the one in force: the
    new route map goes there, not to the router level where it would not be in force."""
    lines = lines_for(AF_POLICY, {"bgp/neighbors/10.0.0.1/inbound_filter": "RM-NEW"})
    assert lines == [
        "router bgp 65101",
        "address-family ipv4",
        "neighbor 10.0.0.1 route-map RM-NEW in",
    ]


def test_a_group_route_map_under_the_family_is_overridden_on_the_neighbour_there() -> None:
    """Over a peer group's line under the family the neighbour gets its own line under the
    family (a router-level line would stay beneath the group's); the group is untouched."""
    text = FOUR_LEVELS.replace("RM-GROUP-AF out", "RM-GROUP-AF in")
    lines = lines_for(text, {"bgp/neighbors/10.0.0.3/inbound_filter": "RM-NEW"})
    assert lines == [
        "router bgp 65101",
        "address-family ipv4",
        "neighbor 10.0.0.3 route-map RM-NEW in",
    ]
    assert lines_for(text, {"bgp/neighbors/10.0.0.3/inbound_filter": "RM-GROUP-AF"}) == [
        "router bgp 65101"
    ]


def test_router_level_route_maps_are_written_at_router_level() -> None:
    """Own router-level line: replaced there; equal to the group's: inherited (own line
    removed); group's in force: overridden on the neighbour at router level."""
    assert lines_for(FOUR_LEVELS, {"bgp/neighbors/10.0.0.1/inbound_filter": "RM-X"}) == [
        "router bgp 65101",
        "neighbor 10.0.0.1 route-map RM-X in",
    ]
    assert lines_for(FOUR_LEVELS, {"bgp/neighbors/10.0.0.1/inbound_filter": "RM-GROUP"}) == [
        "router bgp 65101",
        "no neighbor 10.0.0.1 route-map RM-OWN in",
    ]
    assert lines_for(FOUR_LEVELS, {"bgp/neighbors/10.0.0.3/inbound_filter": "RM-X"}) == [
        "router bgp 65101",
        "neighbor 10.0.0.3 route-map RM-X in",
    ]


def test_clearing_removes_every_own_level_and_refuses_a_group_one() -> None:
    """No route map: the neighbour's own lines go at both levels; one its group gives
    (under the family or at router level) cannot be cleared for one neighbour."""
    text = AF_POLICY
    assert lines_for(text, {"bgp/neighbors/10.0.0.1/inbound_filter": ""}) == [
        "router bgp 65101",
        "no neighbor 10.0.0.1 route-map RM-ROUTER-IN in",
        "address-family ipv4",
        "no neighbor 10.0.0.1 route-map RM-AF-IN in",
    ]
    with pytest.raises(ConfigRejected, match="peer group SPINE"):
        lines_for(FOUR_LEVELS, {"bgp/neighbors/10.0.0.3/inbound_filter": ""})


@given(
    own_af=st.sampled_from(["", "RM-A"]),
    group_af=st.sampled_from(["", "RM-B"]),
    own=st.sampled_from(["", "RM-C"]),
    group=st.sampled_from(["", "RM-D"]),
    wanted=st.sampled_from(["RM-A", "RM-B", "RM-C", "RM-D", "RM-E"]),
)
def test_writing_any_route_map_puts_it_in_force(
    own_af: str, group_af: str, own: str, group: str, wanted: str
) -> None:
    """Whatever levels hold route maps, the lines written make the wanted one the one in
    force, and leave every other neighbour's as it was."""
    lines = ["router bgp 65101", "   neighbor G peer group", "   neighbor G remote-as 65000"]
    lines += [f"   neighbor G route-map {group} in"] if group else []
    lines += ["   neighbor 10.0.0.1 peer group G", "   neighbor 10.0.0.3 peer group G"]
    lines += [f"   neighbor 10.0.0.1 route-map {own} in"] if own else []
    lines += ["   !", "   address-family ipv4"]
    lines += [f"      neighbor G route-map {group_af} in"] if group_af else []
    lines += [f"      neighbor 10.0.0.1 route-map {own_af} in"] if own_af else []
    text = "\n".join(lines) + "\n"
    before = state_of(text)
    written = lines_for(text, {"bgp/neighbors/10.0.0.1/inbound_filter": wanted})
    after = state_of(applied(text, written))
    assert after["bgp/neighbors/10.0.0.1/inbound_filter"] == wanted
    assert (
        after["bgp/neighbors/10.0.0.3/inbound_filter"]
        == before["bgp/neighbors/10.0.0.3/inbound_filter"]
    )


def test_the_device_report_wins_over_what_config_implies() -> None:
    """Route maps the device reports in force (revision 2 of `show bgp neighbors vrf all`,
    a public capture) replace the inferred ones for the neighbours it reports."""
    data = json.loads((CORPUS / "anta-show-bgp-neighbors-vrf-all-rev2.json").read_text())
    reported = parse_bgp_peers(data)
    assert reported["10.100.0.8"] == ("RM-MLAG-PEER-IN", "RM-MLAG-PEER-OUT")
    state: dict[str, Scalar] = {
        "bgp/neighbors/10.100.0.8/remote_as": 65000,
        "bgp/neighbors/10.100.0.8/inbound_filter": "FROM-CONFIG",
        "bgp/neighbors/10.9.9.9/remote_as": 65000,
        "bgp/neighbors/10.9.9.9/inbound_filter": "KEPT",
    }
    merged = reported_policies(state, reported)
    assert merged["bgp/neighbors/10.100.0.8/inbound_filter"] == "RM-MLAG-PEER-IN"
    assert merged["bgp/neighbors/10.100.0.8/outbound_filter"] == "RM-MLAG-PEER-OUT"
    assert merged["bgp/neighbors/10.9.9.9/inbound_filter"] == "KEPT"
    assert "bgp/neighbors/fd00:dc:1::1/inbound_filter" not in merged


def test_a_policy_under_the_family_changes_in_force_and_replans_empty(
    switches: Switches,
) -> None:
    """On a switch whose policy lives under `address-family ipv4`, applying a new inbound
    route map changes the one the switch has in force, and the next plan is empty."""
    ref = boot_eos(switches, AF_POLICY)
    driver: EosDriver = switches.driver("eos")
    observed = driver.observe(ref)
    assert observed["bgp/neighbors/10.0.0.1/inbound_filter"] == "RM-AF-IN"
    desired = {"bgp/neighbors/10.0.0.1/inbound_filter": Owned("RM-NEW", UNKNOWN)}
    result = driver.apply(ref, diff(desired, observed), dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    with driver.pool.session(ref) as session:
        report = json.loads(session.run("show bgp neighbors vrf all | json revision 2"))
    in_force = report["vrfs"]["default"]["peerList"][0]["routeMapInbound"]
    assert in_force == "RM-NEW"
    assert diff(desired, driver.observe(ref)) == []


def test_an_as_number_that_is_not_one_is_that_fields_unknown() -> None:
    """`remote-as 65555.100` or `router bgp 1.2.3` (no valid asdot) reads as its text,
    never a failure of the device, and no change is written from it."""
    text = "router bgp 1.2.3\n   neighbor 10.0.0.1 remote-as 65555.100\n!\n"
    state = state_of(text)
    assert (state["bgp/asn"], state["bgp/neighbors/10.0.0.1/remote_as"]) == ("1.2.3", "65555.100")
    with pytest.raises(ConfigRejected, match="bgp/asn"):
        lines_for(text, {"bgp/neighbors/10.0.0.1/remote_as": 65001})
