"""SONiC IPv6 and unnumbered BGP peers written through config_db: ``BGP_NEIGHBOR|default|
fc00::1`` activated in ``ipv6_unicast``, ``BGP_NEIGHBOR|default|Ethernet0`` (FRR's
``neighbor Ethernet0 interface``) with the port's IPv6 link-local turned on; checked by
the simulator's sonic-yang rules and FRR rendering, and applied over SSH."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from inventory.problems import UNKNOWN
from reconciler.drivers.base import Outcome
from reconciler.drivers.safevalues import SafeValues
from reconciler.drivers.sonic_bgp import parse_bgpraw
from reconciler.drivers.sonic_caps import sonic_inexpressible
from reconciler.drivers.sonic_jsonpatch import apply_json_patch
from reconciler.drivers.sonic_parse import parse_running
from reconciler.drivers.sonic_patch import patch_steps
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.sonicboot import boot_sonic
from tests.switchsim.sonic_bgp import frr_running_config
from tests.switchsim.sonic_yang import YangError, validate_config

RUNNING = (
    Path(__file__).resolve().parent.parent / "fixtures" / "sonic" / "show_runningconfiguration_all"
)


def frrcfgd() -> dict[str, Any]:
    """A 202405 switch in frrcfgd mode (one port, Ethernet0, numbered to 10.0.0.1)."""
    data: dict[str, Any] = json.loads((RUNNING / "frrcfgd-202405" / "output.json").read_text())
    return data


def written(data: dict[str, Any], changes: dict[str, Scalar]) -> dict[str, Any]:
    """``data`` after the patches plumb writes for ``changes``."""
    values = SafeValues("leaf")
    settings = [values.setting(path, value) for path, value in changes.items()]
    after = data
    for patch in patch_steps("leaf", data, parse_running(data), settings):
        after = apply_json_patch(after, patch)
    return after


def routed(data: dict[str, Any]) -> dict[str, Any]:
    """The tables sonic-yang checks peers and addresses against (the fixture's QoS maps
    name tables it leaves out)."""
    return {k: v for k, v in data.items() if k in ("PORT", "INTERFACE", "BGP_NEIGHBOR")}


UNNUMBERED: dict[str, Scalar] = {
    "bgp/neighbors/10.0.0.1/remote_as": None,
    "bgp/neighbors/10.0.0.1/inbound_filter": None,
    "bgp/neighbors/Ethernet0/remote_as": 64600,
    "bgp/neighbors/Ethernet0/inbound_filter": "FROM_SPINE",
}


def test_an_unnumbered_peer_is_keyed_by_its_port_and_reads_back() -> None:
    """The numbered peer goes, ``default|Ethernet0`` comes with the port's link-local on;
    the result passes sonic-yang and reads back as the wanted state."""
    after = written(frrcfgd(), UNNUMBERED)
    assert after["BGP_NEIGHBOR"]["default|Ethernet0"] == {"asn": "64600", "admin_status": "up"}
    assert "default|10.0.0.1" not in after["BGP_NEIGHBOR"]
    assert after["BGP_NEIGHBOR_AF"]["default|Ethernet0|ipv4_unicast"] == {
        "route_map_in": ["FROM_SPINE"]
    }
    assert after["INTERFACE"]["Ethernet0"] == {"ipv6_use_link_local_only": "enable"}
    validate_config(routed(after))
    state = parse_running(after)
    assert {path: state.get(path) for path in UNNUMBERED} == UNNUMBERED


def test_frr_runs_an_interface_peer_as_neighbor_interface() -> None:
    """frrcfgd renders the row as FRR's ``neighbor Ethernet0 interface remote-as N``."""
    after = written(frrcfgd(), UNNUMBERED)
    text = frr_running_config(after, "8.5.4")
    assert " neighbor Ethernet0 interface remote-as 64600" in text.splitlines()
    assert "  neighbor Ethernet0 route-map FROM_SPINE in" in text.splitlines()
    assert parse_bgpraw(text)["maps"]["Ethernet0"] == "FROM_SPINE"


def test_a_numbered_ipv6_peer_is_activated_in_ipv6_unicast() -> None:
    """A new IPv6 peer gets its row and ``ipv6_unicast`` activation; its route map sits
    in that family; the port's /127 is added beside its IPv4 address."""
    changes: dict[str, Scalar] = {
        "interfaces/Ethernet0/ipv6_address": "fc00::2/127",
        "bgp/neighbors/fc00::3/remote_as": 64600,
        "bgp/neighbors/fc00::3/inbound_filter": "FROM_SPINE",
    }
    after = written(frrcfgd(), changes)
    assert after["BGP_NEIGHBOR"]["default|fc00::3"] == {"asn": "64600", "admin_status": "up"}
    assert after["BGP_NEIGHBOR_AF"]["default|fc00::3|ipv6_unicast"] == {
        "admin_status": "up",
        "route_map_in": ["FROM_SPINE"],
    }
    assert {"Ethernet0|10.0.0.0/31", "Ethernet0|fc00::2/127"} <= set(after["INTERFACE"])
    validate_config(routed(after))
    state = parse_running(after)
    assert {path: state.get(path) for path in changes} == changes


def test_a_port_ipv6_address_replaces_the_global_one_and_keeps_link_local() -> None:
    """Only the global IPv6 key moves; a link-local key and the IPv4 one stay."""
    data = frrcfgd()
    data["INTERFACE"]["Ethernet0|fc00::8/127"] = {}
    data["INTERFACE"]["Ethernet0|fe80::1/64"] = {}
    after = written(data, {"interfaces/Ethernet0/ipv6_address": "fc00::2/127"})
    keys = {k for k in after["INTERFACE"] if k.startswith("Ethernet0|")}
    assert keys == {"Ethernet0|10.0.0.0/31", "Ethernet0|fe80::1/64", "Ethernet0|fc00::2/127"}


def test_bgpcfgd_refuses_an_interface_peer_but_writes_an_ipv6_one() -> None:
    """bgpcfgd's templates render peers by address: an interface key is frrcfgd's only."""
    bgpcfgd = {"system/bgp_config": "bgpcfgd"}
    reason = sonic_inexpressible("bgp/neighbors/Ethernet0/remote_as", bgpcfgd)
    assert reason is not None and "frrcfgd" in reason
    assert sonic_inexpressible("bgp/neighbors/fc00::3/remote_as", bgpcfgd) is None
    assert sonic_inexpressible("bgp/neighbors/fe80::1/remote_as", {}) is not None


@pytest.mark.parametrize(
    ("key", "row", "why"),
    [
        ("Ethernet0", {"asn": "64600"}, "ip-address"),  # the bgpcfgd list: addresses only
        ("default|Ethernet99", {"asn": "64600"}, "ip-address"),  # no such port
        ("default|Ethernet0", {"name": "x"}, "asn"),
        ("default|Ethernet0", {"peer_type": "sideways"}, "peer_type"),
    ],
)
def test_sonic_yang_refuses_what_it_refuses(key: str, row: dict[str, str], why: str) -> None:
    """An interface key needs the VRF form and an existing port, and an AS or peer type."""
    data = routed(copy.deepcopy(frrcfgd()))
    validate_config(data)
    data["BGP_NEIGHBOR"][key] = row
    with pytest.raises(YangError, match=why):
        validate_config(data)


def test_unnumbered_applies_over_ssh_and_replans_empty(switches: Switches) -> None:
    """On the simulated frrcfgd switch the driver moves the numbered peer to the port,
    and the next plan is empty."""
    keep = ("DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE")
    doc = {t: rows for t, rows in frrcfgd().items() if t.startswith("BGP_") or t in keep}
    ref = boot_sonic(switches, doc, "sonic-202405")
    driver = switches.driver("sonic")
    desired = {path: Owned(value, UNKNOWN) for path, value in UNNUMBERED.items()}
    plan = diff(desired, driver.observe(ref))
    assert {c.path for c in plan} == set(UNNUMBERED)
    result = driver.apply(ref, plan, dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
