"""The SONiC parsers, patch builder and capability rules, on fixtures written from
SONiC's documented formats (sample config_db files, FRR running configs, ``show
version``): ``tests/fixtures/sonic/<command>/<case>/``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.drivers.safevalues import SafeValues
from reconciler.drivers.sonic_caps import sonic_inexpressible
from reconciler.drivers.sonic_jsonpatch import apply_json_patch, pointer
from reconciler.drivers.sonic_parse import parse_running, parse_version
from reconciler.drivers.sonic_patch import patch_steps
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sonic"
RUNNING = FIXTURES / "show_runningconfiguration_all"


def cases(command: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / command).iterdir() if p.is_dir())


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


def running(case: str) -> dict[str, Any]:
    data: dict[str, Any] = load(RUNNING / case, "output.json")
    return data


@pytest.mark.parametrize("case", cases("show_runningconfiguration_all"), ids=lambda p: p.name)
def test_running_configuration(case: Path) -> None:
    """config_db JSON (single or multi-ASIC) gives ports, QoS over active ports and BGP."""
    assert parse_running(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_version"), ids=lambda p: p.name)
def test_show_version(case: Path) -> None:
    """``show version``: the branch is the NOS version, the whole string the build."""
    assert parse_version((case / "output.txt").read_text()) == load(case, "expected.json")


@pytest.mark.parametrize(
    "broken",
    [
        {"PORT": ["Ethernet0"]},
        {"PORT": {"Ethernet0": {"mtu": "big"}}},
        {"PORT": {"Ethernet0": {}}, "QUEUE": {"Ethernet0|3": {"wred_profile": "MISSING"}}},
        {"localhost": {}, "asic0": "not an object"},
    ],
)
def test_malformed_configuration_raises(broken: dict[str, Any]) -> None:
    """Wrong types and dangling references raise, for the driver to make a device error."""
    with pytest.raises((ValueError, KeyError, TypeError)):
        parse_running(broken)


LOOKUP = Path(__file__).resolve().parent.parent / "switchsim" / "pg_profile_lookup"


def steps(
    data: dict[str, Any], changes: Mapping[str, Scalar], **before: Scalar
) -> list[list[dict[str, Any]]]:
    values = SafeValues("leaf-r1")
    hwsku = data.get("localhost", data)["DEVICE_METADATA"]["localhost"]["hwsku"]
    state = parse_running(data) | {"system/model": hwsku}
    state |= {k.replace("__", "/"): v for k, v in before.items()}
    lookup = LOOKUP / f"{hwsku}.ini"
    settings = [values.setting(p, v) for p, v in changes.items()]
    text = lookup.read_text() if lookup.exists() else None
    return patch_steps("leaf-r1", data, state, settings, text)


def applied(data: dict[str, Any], patches: list[list[dict[str, Any]]]) -> dict[str, Any]:
    for patch in patches:
        data = apply_json_patch(data, patch)
    return data


def moved(data: dict[str, Any], changes: dict[str, Scalar]) -> dict[str, Scalar]:
    before = parse_running(data)
    after = parse_running(applied(data, steps(data, changes)))
    return {p: after.get(p) for p in set(before) | set(after) if before.get(p) != after.get(p)}


def test_a_patch_changes_exactly_the_requested_paths() -> None:
    """edit -> patch -> apply -> parse differs from before only as asked."""
    data = running("static-202405")
    changes: dict[str, Scalar] = {
        "interfaces/Ethernet0/mtu": 9000,
        "interfaces/Ethernet8/address": "192.0.2.0/31",
        "interfaces/Ethernet24/pfc_priorities": "3",
        "qos/dscp/48": 5,
        "qos/ecn/3/kmin_kb": 900,
        "qos/ecn/4/kmin_kb": 900,
        "qos/pfc_headroom_kb": 180,
        "bgp/neighbors/10.0.0.3/remote_as": 64700,
    }
    assert moved(data, changes) == changes


def test_pfc_on_a_priority_group_without_lossless_buffer_is_refused() -> None:
    """Static buffers: PG 3-4 of Ethernet0 are lossless, PG 5 is not carved. PFC on 3,4
    stays writable; adding 5 (identity priority-to-PG) would pause into no headroom."""
    data = running("static-202405")
    data["PORT_QOS_MAP"]["Ethernet0"].pop("tc_to_pg_map")
    assert steps(data, {"interfaces/Ethernet0/pfc_priorities": "3"})
    with pytest.raises(ConfigRejected, match="group 5 of Ethernet0, which has no lossless"):
        steps(data, {"interfaces/Ethernet0/pfc_priorities": "3,4,5"})


def test_pfc_on_the_dynamic_buffer_model_is_left_to_the_buffer_manager() -> None:
    data = running("dynamic-202405")
    port = next(iter(data["PORT_QOS_MAP"]))
    assert steps(data, {f"interfaces/{port}/pfc_priorities": "3,4,5"})


def test_an_ipv4_change_keeps_the_ipv6_addresses() -> None:
    """Only the IPv4 INTERFACE key moves; the port's IPv6 key stays."""
    data = running("static-202405")
    [patch] = steps(data, {"interfaces/Ethernet0/address": "192.0.2.0/31"})
    assert {(op["op"], op["path"]) for op in patch} == {
        ("remove", pointer("INTERFACE", "Ethernet0|10.0.0.0/31")),
        ("add", pointer("INTERFACE", "Ethernet0|192.0.2.0/31")),
    }
    assert "Ethernet0|fc00::1/126" in applied(data, [patch])["INTERFACE"]


def test_ecn_replaces_green_fields_of_the_referenced_profile() -> None:
    """ECN is three field replacements on the lossless queues' own WRED profile."""
    data = running("static-202405")
    change = {"qos/ecn/3/kmin_kb": 512, "qos/ecn/4/kmin_kb": 512}
    [patch] = steps(data, change)
    assert patch == [
        {
            "op": "replace",
            "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold",
            "value": str(512 * 1024),
        }
    ]


def test_a_profile_shared_by_queues_meant_to_differ_is_refused() -> None:
    """Queues 3 and 4 share AZURE_LOSSLESS: moving one alone cannot be expressed."""
    with pytest.raises(ConfigRejected, match="also serves queue 4"):
        steps(running("static-202405"), {"qos/ecn/3/kmin_kb": 512})


def test_headroom_replaces_xoff_of_the_lossless_profile_only() -> None:
    """Headroom is the lossless PG profiles' xoff; lossy PG 0's profile is untouched."""
    data = running("static-202205")
    [patch] = steps(data, {"qos/pfc_headroom_kb": 200})
    assert sorted(op["path"] for op in patch) == [
        "/BUFFER_PROFILE/pg_lossless_100000_300m_profile/xoff",
        "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff",
    ]
    assert {op["op"] for op in patch} == {"replace"}


def test_a_peer_whose_as_changes_is_removed_then_re_added_with_its_fields() -> None:
    """Two patches: remove the peer, then add it back with name, local_addr... kept."""
    data = running("static-202405")
    first, second = steps(data, {"bgp/neighbors/10.0.0.1/remote_as": 64999})
    assert first == [{"op": "remove", "path": "/BGP_NEIGHBOR/10.0.0.1"}]
    assert second == [
        {
            "op": "add",
            "path": "/BGP_NEIGHBOR/10.0.0.1",
            "value": data["BGP_NEIGHBOR"]["10.0.0.1"] | {"asn": "64999"},
        }
    ]


def test_a_new_peer_gets_its_local_address_from_the_connected_interface() -> None:
    """bgpcfgd wants local_addr: the interface address on the peer's subnet."""
    data = running("static-202405")
    [patch] = steps(data, {"bgp/neighbors/10.0.0.7/remote_as": 64601})
    assert patch[0]["value"] == {
        "asn": "64601",
        "admin_status": "up",
        "local_addr": "10.0.0.6",
        "name": "10.0.0.7",
    }


def test_multi_asic_writes_use_namespaced_paths() -> None:
    """A port's settings and a peer live in their ASIC namespace: /asic1/..."""
    data = running("multiasic-202405")
    [patch] = steps(data, {"interfaces/Ethernet8/mtu": 9000})
    assert patch == [{"op": "replace", "path": "/asic1/PORT/Ethernet8/mtu", "value": "9000"}]
    first, _ = steps(data, {"bgp/neighbors/10.0.0.3/remote_as": 64999})
    assert first == [{"op": "remove", "path": "/asic1/BGP_NEIGHBOR/10.0.0.3"}]


def test_frrcfgd_mode_writes_router_id_paths_and_route_maps() -> None:
    """In frrcfgd mode router-id, maximum-paths and inbound maps are config_db fields."""
    data = running("frrcfgd-202405")
    changes: dict[str, Scalar] = {
        "bgp/router_id": "10.1.0.99",
        "bgp/maximum_paths": 32,
        "bgp/neighbors/10.0.0.1/inbound_filter": "OTHER-IN",
    }
    assert moved(data, changes) == changes


@pytest.mark.parametrize(
    ("case", "path", "value", "reason"),
    [
        ("static-202405", "bgp/router_id", "10.1.0.9", "bgpcfgd"),
        ("static-202405", "bgp/neighbors/10.0.0.1/inbound_filter", "X", "bgpcfgd"),
        ("static-202405", "qos/pfc_xoff_kb", 100, "pause threshold"),
        ("dynamic-202405", "qos/pfc_headroom_kb", 100, "dynamic buffer model"),
    ],
)
def test_stage_refuses_what_the_platform_cannot_express(
    case: str, path: str, value: Scalar, reason: str
) -> None:
    """The same rule as the plan refuses the path before any patch is built."""
    with pytest.raises(ConfigRejected, match=reason):
        steps(running(case), {path: value})


def test_nothing_to_change_is_no_patch() -> None:
    """Writing the values a switch already holds produces no patch at all."""
    data = running("static-202405")
    assert steps(data, {"interfaces/Ethernet0/mtu": 9100, "qos/pfc_headroom_kb": 162}) == []


def test_pointers_escape_slashes() -> None:
    """Keys such as ``Ethernet0|10.0.0.0/31`` become valid JSON pointers."""
    assert pointer("INTERFACE", "Ethernet0|10.0.0.0/31") == "/INTERFACE/Ethernet0|10.0.0.0~131"


def test_bgp_mode_decides_router_id() -> None:
    """router-id is inexpressible in bgpcfgd mode and expressible in frrcfgd mode."""
    assert sonic_inexpressible("bgp/router_id", {"system/bgp_config": "bgpcfgd"})
    assert sonic_inexpressible("bgp/router_id", {"system/bgp_config": "frrcfgd"}) is None


@settings(max_examples=40, deadline=None)
@given(
    mtu=st.integers(68, 9216),
    kmin=st.integers(1, 500),
    span=st.integers(0, 500),
    pmax=st.integers(1, 100),
    headroom=st.integers(75, 4096),
)
def test_applying_the_patch_gives_the_desired_values(
    mtu: int, kmin: int, span: int, pmax: int, headroom: int
) -> None:
    """For any valid values, the patched config_db parses back to exactly them."""
    data = running("static-202405")
    changes: dict[str, Scalar] = {"interfaces/Ethernet0/mtu": mtu, "qos/pfc_headroom_kb": headroom}
    for queue in (3, 4):
        changes |= {
            f"qos/ecn/{queue}/kmin_kb": kmin,
            f"qos/ecn/{queue}/kmax_kb": kmin + span,
            f"qos/ecn/{queue}/pmax_percent": pmax,
        }
    after = parse_running(applied(data, steps(data, changes)))
    assert {p: after[p] for p in changes} == changes


def test_a_shared_profile_refusal_says_how_to_get_there() -> None:
    """The refusal names the other queue and what it keeps, and the two ways out (the
    same ECN for both, or a profile of the queue's own)."""
    with pytest.raises(ConfigRejected) as refused:
        steps(running("static-202405"), {"qos/ecn/3/kmin_kb": 512})
    message = str(refused.value)
    assert "also serves queue 4, which this plan leaves at 1024/2048/5" in message
    assert "give queue 4 the same ECN in qos.ecn" in message
    assert "bind queue 3 to a WRED profile of its own" in message


def test_dscp_is_written_into_the_map_of_ports_carrying_qos_only() -> None:
    """Ports without QUEUE or BUFFER_PG rows (a LAG member, an unused port) get no map."""
    data = running("static-202405")
    live = {k.split("|")[0] for k in data.get("QUEUE", {})} | {
        k.split("|")[0] for k in data.get("BUFFER_PG", {})
    }
    patches = steps(data, {"qos/dscp/10": 3})
    after = applied(data, patches)
    bound = {p for p, row in after.get("PORT_QOS_MAP", {}).items() if "dscp_to_tc_map" in row}
    assert bound - {"global"} <= live
    assert all(
        after["DSCP_TO_TC_MAP"][m]["10"] == "3"
        for m in after["DSCP_TO_TC_MAP"]
        if "10" in after["DSCP_TO_TC_MAP"][m]
    )


def test_dscp_on_a_switch_without_qos_is_refused_not_bound_everywhere() -> None:
    """No port carries QoS and no DSCP map exists: none is created or bound; the refusal
    says what to do."""
    data = running("static-202405")
    for name in ("QUEUE", "BUFFER_PG", "PORT_QOS_MAP", "DSCP_TO_TC_MAP"):
        data.pop(name, None)
    with pytest.raises(ConfigRejected, match=r"no port carries QoS here.*no\s+DSCP_TO_TC_MAP"):
        steps(data, {"qos/dscp/26": 3})


def test_dscp_without_qos_ports_edits_the_switchs_own_map_binding_nothing() -> None:
    """No port carries QoS but the switch has its AZURE map: that map's entry is
    replaced and no PORT_QOS_MAP binding appears."""
    data = running("static-202405")
    for name in ("QUEUE", "BUFFER_PG", "PORT_QOS_MAP"):
        data.pop(name, None)
    data["DSCP_TO_TC_MAP"] = {"AZURE": {str(d): "1" for d in range(64)}}
    [patch] = steps(data, {"qos/dscp/26": 3})
    assert patch == [{"op": "replace", "path": "/DSCP_TO_TC_MAP/AZURE/26", "value": "3"}]


def with_portchannel(data: dict[str, Any], port: str) -> dict[str, Any]:
    """``port`` made a member of PortChannel101 (its addresses move to the PortChannel)."""
    data["INTERFACE"] = {k: v for k, v in data["INTERFACE"].items() if k.split("|")[0] != port}
    data["PORTCHANNEL"] = {"PortChannel101": {"admin_status": "up", "mtu": "9100"}}
    data["PORTCHANNEL_MEMBER"] = {f"PortChannel101|{port}": {}}
    return data


def test_a_portchannel_member_is_a_lag_member_whose_mtu_and_address_are_not_its_own() -> None:
    """teammgrd sets each member's MTU to its PortChannel's (sonic-swss ``setLagMtu``),
    and ``config interface mtu`` / ``ip add`` refuse a member: its PORT mtu is not what
    runs, so plumb reports the port as a lag member and writes neither field."""
    state = parse_running(with_portchannel(running("static-202405"), "Ethernet0"))
    assert state["interfaces/Ethernet0/mode"] == "lag-member"
    for field in ("mtu", "address"):
        reason = sonic_inexpressible(f"interfaces/Ethernet0/{field}", state)
        assert reason is not None and "PortChannel" in reason
    assert sonic_inexpressible("interfaces/Ethernet0/pfc_priorities", state) is None
    assert sonic_inexpressible("interfaces/Ethernet8/mtu", state) is None


def test_a_vlan_member_takes_no_address() -> None:
    """``config interface ip add`` refuses a VLAN member (a switched port): an address
    would need it out of the VLAN first, which plumb never does implicitly."""
    data = running("static-202405")
    data["VLAN"] = {"Vlan1000": {"vlanid": "1000"}}
    data["VLAN_MEMBER"] = {"Vlan1000|Ethernet16": {"tagging_mode": "untagged"}}
    state = parse_running(data)
    assert state["interfaces/Ethernet16/mode"] == "switched"
    assert "VLAN" in str(sonic_inexpressible("interfaces/Ethernet16/address", state))
    assert sonic_inexpressible("interfaces/Ethernet16/mtu", state) is None


def with_shared_rows(data: dict[str, Any]) -> dict[str, Any]:
    """Ethernet0's and Ethernet8's QoS rows merged under keys listing both ports, as
    201911-era config_db files write them (``Ethernet0,Ethernet8|3-4``)."""
    for name in ("PORT_QOS_MAP", "QUEUE", "BUFFER_PG"):
        rows = data.get(name, {})
        for key in [k for k in rows if k.split("|")[0] == "Ethernet8"]:
            del rows[key]
        for key in [k for k in rows if k.split("|")[0] == "Ethernet0"]:
            rows[key.replace("Ethernet0", "Ethernet0,Ethernet8", 1)] = rows.pop(key)
    return data


def test_a_row_keyed_by_a_list_of_ports_applies_to_each() -> None:
    """orchagent splits a key's port part at commas (sonic-swss ``list_item_delimiter``):
    each listed port has that row's PFC priorities, queues and priority groups."""
    shared = parse_running(with_shared_rows(running("static-202405")))
    alone = parse_running(running("static-202405"))
    for port in ("Ethernet0", "Ethernet8"):
        path = f"interfaces/{port}/pfc_priorities"
        assert shared[path] == alone["interfaces/Ethernet0/pfc_priorities"] != ""
    assert shared["qos/ecn/3/kmin_kb"] == alone["qos/ecn/3/kmin_kb"] is not None
    assert shared["qos/dscp/46"] == alone["qos/dscp/46"]


def test_a_shared_row_is_not_split_by_a_write() -> None:
    """A PFC change for one port of a shared row is refused at stage (the row is every
    listed port's); a DSCP change edits the map the row names and adds no port row."""
    data = with_shared_rows(running("static-202405"))
    with pytest.raises(ConfigRejected, match="Ethernet0,Ethernet8"):
        steps(data, {"interfaces/Ethernet8/pfc_priorities": "3"})
    after = applied(data, steps(data, {"qos/dscp/26": 1}))
    assert "Ethernet8" not in after["PORT_QOS_MAP"]
    assert parse_running(after)["qos/dscp/26"] == 1
