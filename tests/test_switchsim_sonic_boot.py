"""A simulated SONiC switch booted from a real config_db.json (the public corpus), and
what such documents showed the simulator had wrong: what ``config load`` keeps, the
HwSKU ``show version`` and the generic config updater read, bgpcfgd's peers keyed by
VRF, frrcfgd's running config, and a buffer pool shared by both directions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.switchsim import DeviceSpec
from tests.switchsim.sonic_apply import PatchRefused
from tests.switchsim.sonic_bgp import frr_running_config
from tests.switchsim.sonic_config import profile_state, render_profile_config
from tests.switchsim.sonic_device import SonicDevice, loaded_config_db, write_boot_record
from tests.switchsim.sonic_profiles import PROFILES
from tests.switchsim.sonic_yang import YangError, validate_config

GREEN_MIN = [
    {"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "value": "409600"}
]


def profile_config(profile: str) -> dict[str, Any]:
    """The config_db a named profile renders for its default switch."""
    chosen = PROFILES[profile]
    dbs = render_profile_config(profile_state("leaf", chosen), chosen, "00:1c:73:00:00:01")
    return dbs["localhost"]


def booted(tmp_path: Path, doc: Any, profile: str) -> SonicDevice:
    path = tmp_path / "leaf.json"
    write_boot_record(path, "leaf", doc, PROFILES[profile])
    return SonicDevice(DeviceSpec(name="leaf", dialect="sonic", profile=profile), path)


def test_config_load_keeps_every_field_as_text_and_no_empty_table() -> None:
    """ConfigDBConnector stores ``str(value)`` (a list stays a list) and writes no row
    for a table without any: a 201911 file's ``"bgp_asn": 65100`` runs as ``"65100"``."""
    doc = {
        "DEVICE_METADATA": {"localhost": {"bgp_asn": 65100, "hostname": "e582"}},
        "ACL_TABLE": {"DATAACL": {"ports": ["Ethernet0", "Ethernet4"], "type": "L3"}},
        "CRM": {},
    }
    assert loaded_config_db(doc) == {
        "DEVICE_METADATA": {"localhost": {"bgp_asn": "65100", "hostname": "e582"}},
        "ACL_TABLE": {"DATAACL": {"ports": ["Ethernet0", "Ethernet4"], "type": "L3"}},
    }
    with pytest.raises(ValueError, match="PORT"):
        loaded_config_db({"PORT": ["Ethernet0"]})


def test_the_running_hwsku_is_what_show_version_and_the_updater_read(tmp_path: Path) -> None:
    """``device_info.get_hwsku`` reads DEVICE_METADATA: a booted config naming a HwSKU
    the updater does not list has its WRED green thresholds refused, while the profile's
    own HwSKU (a Tomahawk-4) takes them."""
    doc = profile_config("sonic-202405")
    assert booted(tmp_path, doc, "sonic-202405").apply_patch_strict(GREEN_MIN).running
    other = copy.deepcopy(doc)
    other["DEVICE_METADATA"]["localhost"]["hwsku"] = "Acme-X9000-64x400G"
    device = booted(tmp_path, other, "sonic-202405")
    assert device.running_profile.hwsku == "Acme-X9000-64x400G"
    assert device.running_profile.release == "202405"
    with pytest.raises(PatchRefused) as refused:
        device.apply_patch_strict(GREEN_MIN)
    assert "Modification of WRED_PROFILE table is illegal" in refused.value.message


def test_bgpcfgd_puts_a_vrf_keyed_peer_in_its_instance() -> None:
    """``BGP_NEIGHBOR|default|<ip>`` is a default-VRF peer, ``Vrf1|<ip>`` one of Vrf1's
    instance; an interface key (BGP unnumbered) is no address for bgpcfgd's templates."""
    db = {
        "DEVICE_METADATA": {"localhost": {"bgp_asn": "64850", "hostname": "stone"}},
        "BGP_NEIGHBOR": {
            "10.0.0.1": {"asn": "65200"},
            "default|192.168.1.1": {"asn": "65300"},
            "Vrf1|10.10.246.254": {"asn": "65400"},
            "Ethernet0": {"peer_type": "external"},
        },
    }
    text = frr_running_config(db, "8.5.4")
    default, vrf = text.split("router bgp 64850 vrf Vrf1\n")
    assert " neighbor 192.168.1.1 remote-as 65300" in default.splitlines()
    assert " neighbor 10.0.0.1 remote-as 65200" in default.splitlines()
    assert " neighbor 10.10.246.254 remote-as 65400" in vrf.splitlines()
    assert "Ethernet0" not in text


def test_an_as_that_is_no_number_starts_no_bgp() -> None:
    """A supervisor's ``bgp_asn: "None"``: FRR runs no ``router bgp``."""
    db = {"DEVICE_METADATA": {"localhost": {"bgp_asn": "None"}}, "BGP_NEIGHBOR": {}}
    assert "router bgp" not in frr_running_config(db, "8.5.4")


def test_frrcfgd_renders_bgp_globals_and_neighbor_tables() -> None:
    """With ``frr_mgmt_framework_config`` the AS, router-id, maximum-paths and inbound
    route-maps come from BGP_GLOBALS* and BGP_NEIGHBOR*."""
    db = {
        "DEVICE_METADATA": {"localhost": {"frr_mgmt_framework_config": "true"}},
        "BGP_GLOBALS": {"default": {"local_asn": "64600", "router_id": "100.1.0.29"}},
        "BGP_GLOBALS_AF": {"default|ipv4_unicast": {"max_ebgp_paths": "64"}},
        "BGP_NEIGHBOR": {"default|10.10.246.254": {"asn": "64700"}},
        "BGP_NEIGHBOR_AF": {"default|10.10.246.254|ipv4_unicast": {"route_map_in": ["FROM_SPINE"]}},
    }
    lines = frr_running_config(db, "8.5.4").splitlines()
    for line in (
        "router bgp 64600",
        " bgp router-id 100.1.0.29",
        " neighbor 10.10.246.254 remote-as 64700",
        "  neighbor 10.10.246.254 route-map FROM_SPINE in",
        "  maximum-paths 64",
    ):
        assert line in lines


def test_a_buffer_pool_for_both_directions_is_valid_from_202405() -> None:
    """sonic-buffer-pool.yang's ``type`` gains ``both`` in 202405 (Jericho2 line cards
    share one pool), and 202205's models still refuse it."""
    db = {"BUFFER_POOL": {"ingress_lossless_pool": {"type": "both", "mode": "dynamic"}}}
    validate_config(db, "202405")
    with pytest.raises(YangError, match='Invalid value "both"'):
        validate_config(db, "202205")
