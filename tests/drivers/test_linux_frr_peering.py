"""linux-frr's IPv6 and interface (unnumbered) BGP neighbours and port IPv6 addresses
(pure): FRR 8.4's running config and ``ip -j address show`` as flat state, the
candidate that writes them, and the capability rule that lets them through."""

from __future__ import annotations

import json

from reconciler.capabilities import checker
from reconciler.drivers.linux_frr_config import RA_LINES, bgp_state, candidate
from reconciler.drivers.linux_frr_sessions import parse_summary, sessions_state
from reconciler.drivers.linux_links import batch_lines, ports_state
from reconciler.settings import Change

# FRR 8.4.4's `show running-config` after `neighbor x1 interface remote-as 65002` and
# `neighbor fc00::1 remote-as 65002` (activated in IPv6): read from a namespace.
RUNNING = """Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults traditional
hostname vm
hostname a
service integrated-vtysh-config
!
router bgp 65001
 no bgp ebgp-requires-policy
 timers bgp 3 9
 neighbor x1 interface remote-as 65002
 neighbor fc00::1 remote-as 65002
 !
 address-family ipv4 unicast
  redistribute connected
  neighbor x1 route-map FABRIC-IN in
 exit-address-family
 !
 address-family ipv6 unicast
  neighbor fc00::1 activate
  neighbor fc00::1 route-map FABRIC-IN in
 exit-address-family
exit
!
route-map FABRIC-IN permit 10
exit
!
end
"""
PORTS = {"Ethernet1/1": "Ethernet11-1c2f3"}  # port -> Linux name, as the lab maps it
PORT_OF = {"x1": "Ethernet1/1"}


def test_ipv6_and_interface_neighbours_read_as_flat_state() -> None:
    """An interface neighbour is keyed by its port; an IPv6 one's filter is the IPv6
    family's route map."""
    state = bgp_state(RUNNING, 256, PORT_OF)
    assert state["bgp/neighbors/Ethernet1/1/remote_as"] == 65002
    assert state["bgp/neighbors/Ethernet1/1/inbound_filter"] == "FABRIC-IN"
    assert state["bgp/neighbors/fc00::1/remote_as"] == 65002
    assert state["bgp/neighbors/fc00::1/inbound_filter"] == "FABRIC-IN"
    assert not any("x1" in path for path in state)


def test_an_interface_neighbour_keeps_the_form_the_switch_declares() -> None:
    """Re-rendered unchanged, a neighbour declared ``interface`` without ``v6only``
    stays so (FRR would reset the session); a new one is ``v6only``."""
    target = bgp_state(RUNNING, 256)
    text = candidate(RUNNING, target)
    assert " neighbor x1 interface remote-as 65002" in text.splitlines()
    target["bgp/neighbors/x2/remote_as"] = 65002
    assert " neighbor x2 interface v6only remote-as 65002" in candidate(RUNNING, target)


def test_the_candidate_writes_ipv6_and_interface_neighbours_as_frr_holds_them() -> None:
    """From a switch without neighbours: `neighbor <ifname> interface remote-as` with RA
    on the interface, an IPv6 neighbour activated in IPv6 with its map there; the
    candidate reads back as the target."""
    bare = RUNNING.split(" neighbor x1")[0] + " !\n address-family ipv4 unicast\n"
    bare += "  redistribute connected\n exit-address-family\nexit\n!\nend\n"
    target = {
        "bgp/asn": 65001,
        "bgp/router_id": "10.255.0.1",
        "bgp/maximum_paths": 256,
        "bgp/neighbors/Ethernet1/1/remote_as": 65002,
        "bgp/neighbors/Ethernet1/1/inbound_filter": "FABRIC-IN",
        "bgp/neighbors/fc00::1/remote_as": 65002,
        "bgp/neighbors/fc00::1/inbound_filter": "FABRIC-IN",
    }
    text = candidate(bare, target, PORTS)
    lines = text.splitlines()
    assert " neighbor Ethernet11-1c2f3 interface v6only remote-as 65002" in lines
    assert " neighbor fc00::1 remote-as 65002" in lines
    ipv6 = lines[lines.index(" address-family ipv6 unicast") :]
    assert ipv6[1:3] == ["  neighbor fc00::1 activate", "  neighbor fc00::1 route-map FABRIC-IN in"]
    ipv4 = lines[lines.index(" address-family ipv4 unicast") : lines.index(ipv6[0])]
    assert "  neighbor Ethernet11-1c2f3 route-map FABRIC-IN in" in ipv4
    assert not any("fc00::1 route-map" in line for line in ipv4)
    at = lines.index("interface Ethernet11-1c2f3")
    assert lines[at + 1 : at + 4] == [*(f" {ra}" for ra in RA_LINES), "exit"]
    assert at < lines.index("router bgp 65001")
    port_of = {name: port for port, name in PORTS.items()}
    assert bgp_state(text, 256, port_of) == target


def test_moving_a_session_off_numbered_ipv4_replaces_its_neighbour() -> None:
    """The IPv4 neighbour goes with its lines; the interface neighbour's RA lines join
    an interface block zebra already has, once."""
    running = RUNNING.replace(
        "router bgp 65001", "interface x1\n ipv6 nd ra-interval 3\nexit\n!\nrouter bgp 65001"
    ).replace(" neighbor x1 interface remote-as 65002", " neighbor 10.0.0.0 remote-as 65002")
    running = running.replace("neighbor x1 route-map", "neighbor 10.0.0.0 route-map")
    target = bgp_state(running, 256)
    target["bgp/neighbors/10.0.0.0/remote_as"] = None
    target["bgp/neighbors/10.0.0.0/inbound_filter"] = None
    target["bgp/neighbors/x1/remote_as"] = 65002
    target["bgp/neighbors/x1/inbound_filter"] = "FABRIC-IN"
    text = candidate(running, target)
    assert "10.0.0.0" not in text
    assert text.count("interface x1\n") == 1 and text.count("ipv6 nd ra-interval 3") == 1
    assert "interface x1\n ipv6 nd ra-interval 3\n no ipv6 nd suppress-ra\nexit" in text
    assert bgp_state(text, 256) == {p: v for p, v in target.items() if "10.0.0.0" not in p}


def test_interface_sessions_are_observed_under_their_port() -> None:
    """FRR keys an interface peer by its Linux name in ``ipv4Unicast``; an IPv6 peer
    is listed in both families and counted once (its prefixes summed)."""
    summary = {
        "ipv4Unicast": {
            "peers": {
                "x1": {"remoteAs": 65002, "state": "Established", "pfxRcd": 1},
                "fc00::1": {"remoteAs": 65002, "state": "Established", "pfxRcd": 1},
            }
        },
        "ipv6Unicast": {
            "peers": {"fc00::1": {"remoteAs": 65002, "state": "Established", "pfxRcd": 0}}
        },
    }
    state = sessions_state(parse_summary(json.dumps(summary)), PORT_OF)
    assert state == {
        "bgp_session/Ethernet1/1/state": "Established",
        "bgp_session/Ethernet1/1/prefixes_received": 1,
        "bgp_session/fc00::1/state": "Established",
        "bgp_session/fc00::1/prefixes_received": 1,
    }


# `ip -j address show` of a veth with a /31, a /127 and its link-local (iproute2 6.1).
ADDRESSES = json.dumps(
    [
        {
            "ifname": "x2",
            "addr_info": [
                {"family": "inet", "local": "10.0.0.0", "prefixlen": 31, "scope": "global"},
                {"family": "inet6", "local": "fc00::4", "prefixlen": 127, "scope": "global"},
                {
                    "family": "inet6",
                    "local": "fe80::bceb:edff:fece:274a",
                    "prefixlen": 64,
                    "scope": "link",
                },
            ],
        },
        {
            "ifname": "x1",
            "addr_info": [
                {
                    "family": "inet6",
                    "local": "fe80::d865:72ff:fe15:a662",
                    "prefixlen": 64,
                    "scope": "link",
                },
            ],
        },
    ]
)
LINKS = json.dumps([{"ifname": "x1", "mtu": 9214}, {"ifname": "x2", "mtu": 9214}])


def test_a_switch_ports_ipv6_address_is_its_global_one() -> None:
    """Link-local is no address; a host's NICs report no IPv6 address field."""
    state = ports_state(LINKS, ADDRESSES, "interfaces", {})
    assert state["interfaces/x2/address"] == "10.0.0.0/31"
    assert state["interfaces/x2/ipv6_address"] == "fc00::4/127"
    assert state["interfaces/x1/address"] is None
    assert state["interfaces/x1/ipv6_address"] is None
    assert "nics/x2/ipv6_address" not in ports_state(LINKS, ADDRESSES, "nics", {})


def test_an_address_change_flushes_only_its_own_family() -> None:
    lines = batch_lines(
        [
            Change("interfaces/Ethernet1/1/ipv6_address", None, "fc00::1/127"),
            Change("interfaces/Ethernet1/1/address", "10.0.0.1/31", None),
        ],
        "interfaces",
        PORTS,
    )
    assert lines == [
        "address flush dev Ethernet11-1c2f3 scope global to ::/0",
        "address add fc00::1/127 dev Ethernet11-1c2f3",
        "address flush dev Ethernet11-1c2f3 scope global to 0.0.0.0/0",
    ]


def test_ipv6_and_interface_neighbours_are_expressible_on_linux_frr() -> None:
    """A global IPv6 neighbour and a port of the switch pass; a link-local address and
    a port the switch does not have are refused, each said why."""
    observed = {"system/runs_platform": "linux-frr", "interfaces/Ethernet1/1/mtu": 9214}
    refuses = checker("eos", observed)
    assert refuses("bgp/neighbors/fc00::1/remote_as") is None
    assert refuses("bgp/neighbors/10.0.0.1/inbound_filter") is None
    assert refuses("bgp/neighbors/Ethernet1/1/remote_as") is None
    assert refuses("interfaces/Ethernet1/1/ipv6_address") is None
    link_local = refuses("bgp/neighbors/fe80::1/remote_as")
    assert link_local is not None and "written as its interface" in link_local
    missing = refuses("bgp/neighbors/Ethernet9/remote_as")
    assert missing is not None and "no Ethernet9" in missing
