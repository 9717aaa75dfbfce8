"""linux-frr's renderer and parsers (pure): FRR running config <-> flat BGP state, the
candidate keeps what plumb does not own, ECN refused where the kernel has no RED, and
long port names map to Linux interface names."""

from __future__ import annotations

from lab.realfabric.layout import ifname
from reconciler.capabilities import checker
from reconciler.drivers.linux_frr_config import bgp_state, candidate

RUNNING = """Building configuration...

Current configuration:
!
frr version 8.4.4
hostname leaf-r0
!
router bgp 64601
 bgp router-id 10.255.0.5
 timers bgp 3 9
 neighbor 10.0.0.0 remote-as 64600
 neighbor 10.0.0.0 timers connect 2
 neighbor 10.0.0.2 remote-as 64600
 !
 address-family ipv4 unicast
  redistribute connected
  neighbor 10.0.0.0 route-map FABRIC-IN in
  maximum-paths 64
 exit-address-family
exit
!
route-map FABRIC-IN permit 10
exit
!
end
"""


def test_running_config_reads_as_flat_bgp_state() -> None:
    """ASN, router id, ECMP width, each neighbour's AS and inbound filter."""
    assert bgp_state(RUNNING, 256) == {
        "bgp/asn": 64601,
        "bgp/router_id": "10.255.0.5",
        "bgp/maximum_paths": 64,
        "bgp/neighbors/10.0.0.0/remote_as": 64600,
        "bgp/neighbors/10.0.0.0/inbound_filter": "FABRIC-IN",
        "bgp/neighbors/10.0.0.2/remote_as": 64600,
        "bgp/neighbors/10.0.0.2/inbound_filter": "",
    }


def test_no_maximum_paths_line_is_the_builds_default() -> None:
    """FRR hides a value equal to its default: the build's --enable-multipath."""
    text = RUNNING.replace("  maximum-paths 64\n", "")
    assert bgp_state(text, 256)["bgp/maximum_paths"] == 256


def test_candidate_changes_what_plumb_owns_and_keeps_the_rest() -> None:
    """Re-rendering keeps timers, redistribution, route-maps and a kept neighbour's
    options; a removed neighbour takes its own lines with it."""
    target = bgp_state(RUNNING, 256)
    target["bgp/maximum_paths"] = 32
    target["bgp/neighbors/10.0.0.0/remote_as"] = None
    text = candidate(RUNNING, target)
    assert "  maximum-paths 32" in text
    assert "10.0.0.0" not in text
    for kept in (" timers bgp 3 9", "  redistribute connected", "route-map FABRIC-IN permit 10"):
        assert kept in text
    expected = {p: v for p, v in target.items() if "10.0.0.0" not in p}
    assert bgp_state(text, 256) == expected


def test_ecn_is_refused_where_the_kernel_has_no_red() -> None:
    """A switch that reports linux-frr is judged by its rule, whatever the inventory says."""
    probe = "this kernel has no prio or red qdisc (tc: Error: Specified qdisc kind is unknown.)"
    observed = {
        "system/runs_platform": "linux-frr",
        "system/qdisc_red": "no",
        "system/qdisc_probe": probe,
    }
    refuses = checker("eos", observed)
    reason = refuses("qos/ecn/3/kmin_kb")
    assert reason is not None and reason.startswith(probe)
    assert checker("eos", {**observed, "system/qdisc_red": "yes"})("qos/ecn/3/kmin_kb") is None
    assert refuses("interfaces/Ethernet1/mtu") is None


def test_long_or_slashed_port_names_map_to_short_stable_interface_names() -> None:
    """Linux names hold 15 characters and no '/': the map is deterministic."""
    assert ifname("Ethernet12") == "Ethernet12"
    mapped = ifname("Ethernet1/1/1")
    assert len(mapped) <= 15 and "/" not in mapped and mapped == ifname("Ethernet1/1/1")
    assert ifname("HundredGigE1/0/0/12") != ifname("HundredGigE1/0/0/13")
