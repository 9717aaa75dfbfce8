"""EOS IPv6 and interface (unnumbered) BGP neighbours: read from running-config text in
EOS's own form (``neighbor interface Et1-4 peer-group G remote-as N``, ``neighbor
fe80::1%Et1``), written as EOS takes them, and applied to the simulator over SSH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inventory.problems import UNKNOWN
from reconciler.drivers.base import Outcome
from reconciler.drivers.eos_ranges import expand
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.drivers.safevalues import SafeValues
from reconciler.errors import ConfigRejected
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.eosboot import boot_eos
from tests.drivers.eostext import applied, lines_for, state_of
from tests.switchsim.eos_config import GLOBAL, apply_line
from tests.switchsim.eos_render import running_config
from tests.switchsim.eos_view import boot_config
from tests.switchsim.replies import CliError

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "eos"

UNNUMBERED = """\
router bgp 65101
   router-id 10.255.0.5
   neighbor SPINES peer group
   neighbor SPINES send-community
   neighbor interface Et1-2,Et5 peer-group SPINES remote-as 65100
   neighbor interface Et49/1-50/1 peer-group SPINES peer-filter PF-SPINES
   neighbor fe80::1%Et7 remote-as 65007
   !
   address-family ipv4
      neighbor SPINES activate
      neighbor SPINES next-hop address-family ipv6 originate
      neighbor SPINES route-map FABRIC-IN in
!
"""

NUMBERED = """\
hostname leaf-r0
interface Ethernet1
   no switchport
   ip address 10.0.0.1/31
!
interface Ethernet2
   no switchport
   ip address 10.0.0.3/31
!
router bgp 65101
   router-id 10.255.0.5
   neighbor 10.0.0.0 remote-as 65100
   neighbor 10.0.0.0 route-map FABRIC-IN in
   neighbor 10.0.0.2 remote-as 65100
   neighbor 10.0.0.2 route-map FABRIC-IN in
!
"""


def test_interface_ranges_expand_as_eos_writes_them() -> None:
    """``Et1-2,Et5``, ``Et1/1-4``, ``Et49/1-52/1`` name every port they span."""
    assert expand("Et1-2,Et5") == ["Ethernet1", "Ethernet2", "Ethernet5"]
    assert expand("Et1/1-3") == ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
    assert expand("Et49/1-51/1") == ["Ethernet49/1", "Ethernet50/1", "Ethernet51/1"]
    assert expand("Ethernet7") == ["Ethernet7"]
    assert expand("Vlan10") == [] and expand("Et4-2") == [] and expand("1-2") == []


def test_interface_neighbours_are_read_one_per_port() -> None:
    """Each port of a ``neighbor interface`` range is a neighbour keyed by its full name,
    its route map the group's under ``address-family ipv4``; a peer filter reads as its
    text; a link-local neighbour is keyed with its zone spelled out."""
    state = state_of(UNNUMBERED)
    for port in ("Ethernet1", "Ethernet2", "Ethernet5"):
        assert state[f"bgp/neighbors/{port}/remote_as"] == 65100
        assert state[f"bgp/neighbors/{port}/inbound_filter"] == "FABRIC-IN"
    assert state["bgp/neighbors/Ethernet50/1/remote_as"] == "peer-filter PF-SPINES"
    assert state["bgp/neighbors/fe80::1%Ethernet7/remote_as"] == 65007
    assert "bgp/neighbors/SPINES/remote_as" not in state


def test_a_public_rfc5549_fabric_config_is_read() -> None:
    """AVD's RFC 5549 spine (one ``neighbor interface`` line per leaf port) gives each
    port's remote AS."""
    text = (CORPUS / "avd-rfc5549-dc1-spine1.cfg").read_text()
    state = state_of(text)
    assert state["bgp/neighbors/Ethernet1/remote_as"] == 65101
    assert state["bgp/neighbors/Ethernet7/remote_as"] == 65105
    assert state["bgp/neighbors/Ethernet1/inbound_filter"] == ""


def test_a_first_interface_neighbour_creates_plumbs_group() -> None:
    """On a switch with no interface neighbours plumb creates UNNUMBERED, activated for
    IPv4 with IPv6 next hops, and puts the port and the route map there."""
    lines = lines_for(
        NUMBERED,
        {
            "bgp/neighbors/Ethernet1/remote_as": 65100,
            "bgp/neighbors/Ethernet1/inbound_filter": "FABRIC-IN",
        },
    )
    assert lines == [
        "router bgp 65101",
        "neighbor UNNUMBERED peer group",
        "neighbor interface Ethernet1 peer-group UNNUMBERED remote-as 65100",
        "address-family ipv4",
        "neighbor UNNUMBERED activate",
        "neighbor UNNUMBERED next-hop address-family ipv6 originate",
        "neighbor UNNUMBERED route-map FABRIC-IN in",
    ]


def test_switching_a_numbered_switch_to_unnumbered_round_trips() -> None:
    """Removing the address neighbours and adding the interface ones, as the plan does,
    gives a config that reads back as the wanted state."""
    wanted: dict[str, Scalar] = {
        "bgp/neighbors/10.0.0.0/remote_as": None,
        "bgp/neighbors/10.0.0.2/remote_as": None,
    }
    for port in ("Ethernet1", "Ethernet2"):
        wanted[f"bgp/neighbors/{port}/remote_as"] = 65100
        wanted[f"bgp/neighbors/{port}/inbound_filter"] = "FABRIC-IN"
    after = state_of(applied(NUMBERED, lines_for(NUMBERED, wanted)))
    assert {path: after.get(path) for path in wanted} == wanted
    assert not any(p.startswith("bgp/neighbors/10.") for p in after)


def test_new_interface_neighbours_join_the_switchs_group() -> None:
    """The one group the switch's interface neighbours use is the new port's too; a
    changed AS rewrites the port's line."""
    lines = lines_for(
        UNNUMBERED,
        {"bgp/neighbors/Ethernet3/remote_as": 65100, "bgp/neighbors/Ethernet1/remote_as": 65200},
    )
    assert lines == [
        "router bgp 65101",
        "neighbor interface Ethernet3 peer-group SPINES remote-as 65100",
        "neighbor interface Ethernet1 peer-group SPINES remote-as 65200",
    ]
    after = state_of(applied(UNNUMBERED, lines))
    assert after["bgp/neighbors/Ethernet1/remote_as"] == 65200
    assert after["bgp/neighbors/Ethernet2/remote_as"] == 65100
    assert after["bgp/neighbors/Ethernet3/remote_as"] == 65100


def test_removing_an_interface_neighbour_keeps_the_rest_of_its_range() -> None:
    """``no neighbor interface Ethernet2`` leaves Ethernet1 and Ethernet5 of the range."""
    lines = lines_for(UNNUMBERED, {"bgp/neighbors/Ethernet2/remote_as": None})
    assert lines == ["router bgp 65101", "no neighbor interface Ethernet2"]
    after = state_of(applied(UNNUMBERED, lines))
    assert "bgp/neighbors/Ethernet2/remote_as" not in after
    assert after["bgp/neighbors/Ethernet5/remote_as"] == 65100


def test_interface_neighbours_in_several_groups_are_refused() -> None:
    """plumb does not choose between two groups for a new port."""
    text = UNNUMBERED.replace(
        "   neighbor SPINES send-community\n",
        "   neighbor SPINES send-community\n   neighbor LEAVES peer group\n"
        "   neighbor interface Et9 peer-group LEAVES remote-as 65009\n",
    )
    with pytest.raises(ConfigRejected, match="peer groups LEAVES, SPINES"):
        lines_for(text, {"bgp/neighbors/Ethernet3/remote_as": 65100})


def test_a_route_map_other_members_keep_is_refused() -> None:
    """The group holds the route map of all its interface neighbours: changing it for
    one port while the others keep theirs is refused; for every member it is written
    once, on the group."""
    with pytest.raises(ConfigRejected, match="Ethernet2 in that group keeps FABRIC-IN"):
        lines_for(UNNUMBERED, {"bgp/neighbors/Ethernet1/inbound_filter": "OTHER"})
    everyone = {
        f"bgp/neighbors/{port}/inbound_filter": "OTHER"
        for port in ("Ethernet1", "Ethernet2", "Ethernet5", "Ethernet49/1", "Ethernet50/1")
    }
    lines = lines_for(UNNUMBERED, everyone)
    assert lines == [
        "router bgp 65101",
        "address-family ipv4",
        "neighbor SPINES route-map OTHER in",
    ]


def test_a_new_ipv6_neighbour_is_activated_in_its_family() -> None:
    """EOS activates only IPv4 by default: a new IPv6 neighbour gets ``activate`` under
    ``address-family ipv6``, its route map there too."""
    lines = lines_for(
        NUMBERED,
        {
            "bgp/neighbors/fc00::1/remote_as": 65100,
            "bgp/neighbors/fc00::1/inbound_filter": "FABRIC-IN",
        },
    )
    assert lines == [
        "router bgp 65101",
        "neighbor fc00::1 remote-as 65100",
        "neighbor fc00::1 route-map FABRIC-IN in",
        "address-family ipv6",
        "neighbor fc00::1 activate",
    ]
    after = state_of(applied(NUMBERED, lines))
    assert after["bgp/neighbors/fc00::1/remote_as"] == 65100
    assert after["bgp/neighbors/fc00::1/inbound_filter"] == "FABRIC-IN"


def test_a_port_ipv6_address_is_replaced_not_added() -> None:
    """A port holds several IPv6 addresses: the old one goes before the new one."""
    text = NUMBERED.replace(
        "   ip address 10.0.0.1/31\n", "   ip address 10.0.0.1/31\n   ipv6 address fc00::1/127\n"
    )
    assert state_of(text)["interfaces/Ethernet1/ipv6_address"] == "fc00::1/127"
    lines = lines_for(text, {"interfaces/Ethernet1/ipv6_address": "fc00::3/127"})
    assert lines == [
        "interface Ethernet1",
        "no ipv6 address fc00::1/127",
        "ipv6 address fc00::3/127",
    ]
    assert state_of(applied(text, lines))["interfaces/Ethernet1/ipv6_address"] == "fc00::3/127"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("bgp/neighbors/fe80::1/remote_as", "link-local peer is written as its interface"),
        ("bgp/neighbors/Vlan10/remote_as", "not a dotted-quad IPv4 address"),
        ("bgp/neighbors/Ethernet1;reload/remote_as", "not an Ethernet interface name"),
    ],
)
def test_a_neighbour_plumb_cannot_write_is_refused_by_name(path: str, why: str) -> None:
    """A link-local address without its interface, or a key that is no neighbour."""
    with pytest.raises(ConfigRejected, match=why):
        SafeValues("leaf").setting(path, 65100)


def test_the_simulator_refuses_a_link_local_neighbour_without_its_interface() -> None:
    """``neighbor fe80::1 remote-as`` is refused as EOS refuses it; with ``%Et1`` it is
    taken."""
    config, _ = boot_config("router bgp 65101\n!\n", ("tx-queue",))
    context, _ = apply_line(config, GLOBAL, "router bgp 65101")
    with pytest.raises(CliError, match="requires an interface"):
        apply_line(config, context, "neighbor fe80::1 remote-as 65001")
    apply_line(config, context, "neighbor fe80::1%Et1 remote-as 65001")
    assert "neighbor fe80::1%Et1 remote-as 65001" in running_config(
        config, "DCS-7280CR3-32P4", "4.32.1F"
    )


def test_unnumbered_applies_over_ssh_and_replans_empty(switches: Switches) -> None:
    """On the simulated switch, the driver moves a numbered leaf to interface neighbours
    and the next plan is empty."""
    ref = boot_eos(switches, NUMBERED)
    driver: EosDriver = switches.driver("eos")
    desired: dict[str, Owned] = {}
    for port in ("Ethernet1", "Ethernet2"):
        desired[f"bgp/neighbors/{port}/remote_as"] = Owned(65100, UNKNOWN)
        desired[f"bgp/neighbors/{port}/inbound_filter"] = Owned("FABRIC-IN", UNKNOWN)
    for peer in ("10.0.0.0", "10.0.0.2"):  # as render drops the numbered neighbours
        desired[f"bgp/neighbors/{peer}/remote_as"] = Owned(None, UNKNOWN)
        desired[f"bgp/neighbors/{peer}/inbound_filter"] = Owned(None, UNKNOWN)
    plan = diff(desired, driver.observe(ref))
    assert {c.path for c in plan} == set(desired)
    result = driver.apply(ref, plan, dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
    with driver.pool.session(ref) as session:
        v4 = json.loads(session.run("show ip bgp summary | json"))["vrfs"]["default"]["peers"]
        v6 = json.loads(session.run("show bgp ipv6 unicast summary | json"))["vrfs"]["default"]
    assert {peer: v4[peer]["asn"] for peer in v4} == {
        "fe80::1%Et1": "65100",
        "fe80::1%Et2": "65100",
    }
    assert v6["peers"] == {}
