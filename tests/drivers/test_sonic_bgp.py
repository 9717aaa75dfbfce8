"""SONiC BGP peers keyed by an interface name (BGP unnumbered, as AI fabrics run it):
``BGP_NEIGHBOR|Ethernet0`` in bgpcfgd mode, ``BGP_NEIGHBOR|default|Vlan100`` with a
``peer_type`` in frrcfgd mode (sonic-bgp-neighbor.yang: the key's ``neighbor`` is an
address, a port, a PortChannel or a VLAN). They are parsed, reported under their
interface name, written only in frrcfgd mode (test_sonic_unnumbered.py), and the switch
stays observable."""

from __future__ import annotations

import copy
import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.drivers.safevalues import SafeValues
from reconciler.drivers.sonic_bgp import is_address, parse_bgpraw, peer_of
from reconciler.drivers.sonic_caps import sonic_inexpressible
from reconciler.drivers.sonic_jsonpatch import apply_json_patch
from reconciler.drivers.sonic_parse import parse_running
from reconciler.drivers.sonic_patch import patch_steps

RUNNING = (
    Path(__file__).resolve().parent.parent / "fixtures" / "sonic" / "show_runningconfiguration_all"
)


def running(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUNNING / case / "output.json").read_text())
    return data


def with_unnumbered(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    data["BGP_NEIGHBOR"]["Ethernet0"] = {"asn": "65301", "name": "spine-1", "admin_status": "up"}
    data["BGP_NEIGHBOR"]["Vlan100"] = {"peer_type": "external", "name": "gpu-rack"}
    return data


@pytest.mark.parametrize(
    ("key", "peer"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("default|fc00::0002", "fc00::2"),
        ("Ethernet0", "Ethernet0"),
        ("default|Vlan100", "Vlan100"),
        ("default|PortChannel0001", "PortChannel0001"),
        ("not a peer", ""),
    ],
)
def test_a_peer_key_names_an_address_or_an_interface(key: str, peer: str) -> None:
    """Addresses are normalised, interface names kept; anything else is no peer."""
    assert peer_of(key)[1] == peer


def test_unnumbered_peers_are_reported_and_the_rest_still_observed() -> None:
    """A switch with interface-keyed peers is observed whole: its MTUs, its numbered
    peers and the unnumbered ones (AS, or the peer type FRR's remote-as takes)."""
    data = with_unnumbered(running("static-202405"))
    state = parse_running(data)
    assert state["bgp/neighbors/Ethernet0/remote_as"] == 65301
    assert state["bgp/neighbors/Vlan100/remote_as"] == "external"
    assert (
        state["bgp/neighbors/10.0.0.1/remote_as"]
        == parse_running(running("static-202405"))["bgp/neighbors/10.0.0.1/remote_as"]
    )
    assert state["interfaces/Ethernet0/mtu"] == 9100
    assert state["bgp/neighbors/Ethernet0/inbound_filter"] == ""  # FRR holds none for it


def test_frrcfgd_unnumbered_peers_are_reported() -> None:
    """frrcfgd keys peers by VRF: ``default|Ethernet8``."""
    data = copy.deepcopy(running("frrcfgd-202405"))
    data["BGP_NEIGHBOR"]["default|Ethernet8"] = {"peer_type": "internal"}
    assert parse_running(data)["bgp/neighbors/Ethernet8/remote_as"] == "internal"


def test_unnumbered_peers_are_refused_in_bgpcfgd_mode_and_kept_by_other_writes() -> None:
    """bgpcfgd renders peers by address, so writing one keyed by an interface is refused
    there; a patch for something else leaves them be."""
    bgpcfgd = {"system/bgp_config": "bgpcfgd"}
    assert sonic_inexpressible("bgp/neighbors/Ethernet0/remote_as", bgpcfgd) is not None
    data = with_unnumbered(running("static-202405"))
    state = parse_running(data)
    values = SafeValues("leaf")
    changes = [values.setting("bgp/neighbors/10.0.0.1/remote_as", 64999)]
    after = data
    for patch in patch_steps("leaf", data, state, changes):
        after = apply_json_patch(after, patch)
    assert after["BGP_NEIGHBOR"]["Ethernet0"] == data["BGP_NEIGHBOR"]["Ethernet0"]
    assert after["BGP_NEIGHBOR"]["Vlan100"] == data["BGP_NEIGHBOR"]["Vlan100"]


def test_frr_interface_neighbours_are_read() -> None:
    """``neighbor Ethernet0 interface peer-group G`` joins the group like any peer."""
    text = "\n".join(
        [
            "router bgp 65100",
            " neighbor FABRIC peer-group",
            " neighbor Ethernet0 interface peer-group FABRIC",
            " address-family ipv4 unicast",
            "  neighbor FABRIC route-map FROM-FABRIC in",
            " exit-address-family",
        ]
    )
    assert parse_bgpraw(text)["maps"]["Ethernet0"] == "FROM-FABRIC"


def _by_ipaddress(peer: str) -> bool:
    try:
        ipaddress.ip_address(peer)
    except ValueError:
        return False
    return True


_OCTETS = st.one_of(
    st.integers(0, 300).map(str), st.sampled_from(["00", "01", "007", "", "-1", " 1", "1a"])
)


@given(
    st.one_of(
        st.lists(_OCTETS, min_size=3, max_size=5).map(".".join),
        st.text(alphabet="0123456789abcdef:.Ethernt/", max_size=24),
    )
)
def test_is_address_agrees_with_ipaddress(peer: str) -> None:
    """The dotted-quad fast path answers exactly what parsing an address answers,
    leading zeros, octets over 255 and interface names included."""
    assert is_address(peer) == _by_ipaddress(peer)


@pytest.mark.parametrize("mode", ["static-202405", "frrcfgd-202405"])
@pytest.mark.parametrize("asn", ["None", "AS65100"])
def test_an_as_number_that_is_not_a_number_is_no_as(mode: str, asn: str) -> None:
    """A chassis supervisor's minigraph gives ``bgp_asn: "None"`` (sonic-mgmt's
    ``vlab-t2-sup``): BGP is unconfigured there, so the AS is unknown and the rest of the
    switch is still observed, never the device's failure."""
    data = copy.deepcopy(running(mode))
    data["DEVICE_METADATA"]["localhost"]["bgp_asn"] = asn
    data.get("BGP_GLOBALS", {}).get("default", {})["local_asn"] = asn
    state = parse_running(data)
    assert state["bgp/asn"] is None
    mtu = parse_running(running(mode))["interfaces/Ethernet0/mtu"]
    assert state["interfaces/Ethernet0/mtu"] == mtu
