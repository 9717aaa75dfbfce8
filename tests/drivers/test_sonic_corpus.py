"""The SONiC driver and simulator on a corpus of public SONiC device data
(``tests/fixtures/corpus/sonic``, sources and licences in ``MANIFEST.json``).

For every file: the driver's own parser for it reads it without an error (what it cannot
read is a per-field unknown). For every config_db besides: the simulator boots it as
``config load`` stores it, prints it back unchanged in ``show runningconfiguration all``
and the driver observes it. For every config_db with ports: observe -> plan -> apply ->
observe converges in one apply, and on config_db nothing outside plumb's owned fields
moved. One simulator serves the module.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import pytest

from inventory.problems import UNKNOWN
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.eos_parse import natural
from reconciler.drivers.lldp_parse import parse_sonic_lldp
from reconciler.drivers.netmiko_sonic import SonicDriver
from reconciler.drivers.sonic_bgp import parse_bgpraw
from reconciler.drivers.sonic_buffers import parse_lookup
from reconciler.drivers.sonic_parse import (
    dscp_map_name,
    front_ports,
    parse_running,
    parse_version,
)
from reconciler.drivers.sonic_parse import namespaces as sonic_namespaces
from reconciler.drivers.sonic_version import release
from reconciler.errors import ConfigRejected
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.sonicboot import boot_sonic
from tests.switchsim.sonic_device import loaded_config_db
from tests.switchsim.sonic_profiles import profile_named

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "sonic"
MANIFEST: list[dict[str, str]] = json.loads((CORPUS / "MANIFEST.json").read_text())["files"]
LICENCES = {"Apache-2.0", "MIT", "BSD-3-Clause"}
KINDS = {"config-db", "show-version", "frr-config", "lldpctl-json", "pg-profile-lookup"}
PROFILES = {"sonic-202205", "sonic-202405", "sonic-202405-dynamic", "sonic-202405-multiasic"}
_NAMESPACE = re.compile(r"^(?:localhost|asic[0-9]+)$")
TEST_NET = "198.51.100.0/31"  # RFC 5737: an address no corpus switch uses


def entry_id(entry: dict[str, str]) -> str:
    return entry["file"]


def text_of(entry: dict[str, str]) -> str:
    return (CORPUS / entry["file"]).read_text()


def document(entry: dict[str, str]) -> Any:
    """The config_db a file holds (its ``select`` member when it holds more)."""
    data = json.loads(text_of(entry))
    return data[entry["select"]] if "select" in entry else data


def namespaces(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if doc and "localhost" in doc and all(_NAMESPACE.match(k) for k in doc):
        return list(doc.values())
    return [doc]


def has_ports(entry: dict[str, str]) -> bool:
    return any(db.get("PORT") for db in namespaces(document(entry)))


CONFIGS = [e for e in MANIFEST if e["kind"] == "config-db"]
CONVERGING = [e for e in CONFIGS if has_ports(e) and "invalid" not in e]
INVALID = [e for e in CONFIGS if "invalid" in e]


def test_every_file_is_in_the_manifest_with_its_source_and_licence() -> None:
    """Each corpus file names its repository, path, commit, a permissive licence, its
    kind, and (a config_db) the simulator profile it boots on."""
    files = {p.name for p in CORPUS.iterdir() if p.name != "MANIFEST.json"}
    assert files == {e["file"] for e in MANIFEST}
    for entry in MANIFEST:
        assert entry["repository"].startswith("https://github.com/")
        assert entry["path"] and re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
        assert entry["licence"] in LICENCES
        assert entry["kind"] in KINDS
        assert entry["release"] and entry["platform"]
        assert (entry["kind"] == "config-db") is (entry.get("profile") in PROFILES)
    assert len(MANIFEST) >= 40


def _config_db(entry: dict[str, str]) -> None:
    doc = document(entry)
    state = parse_running(doc)
    assert state["bgp/asn"] is None or isinstance(state["bgp/asn"], int)
    for port in front_ports(sonic_namespaces(doc)):
        assert isinstance(state[f"interfaces/{port}/mtu"], int)
        assert state[f"interfaces/{port}/mode"] in ("routed", "switched", "lag-member")


def _show_version(entry: dict[str, str]) -> None:
    assert parse_version(text_of(entry))["system/nos_version"] is not None


def _frr_config(entry: dict[str, str]) -> None:
    found = parse_bgpraw(text_of(entry))
    assert found["router_id"] is None or ipaddress.ip_address(found["router_id"])


def _lldpctl(entry: dict[str, str]) -> None:
    state = parse_sonic_lldp(json.loads(text_of(entry)))
    assert all(isinstance(v, str) for v in state.values())


def _lookup(entry: dict[str, str]) -> None:
    rows = parse_lookup(text_of(entry))
    assert rows and all("xoff" in row for row in rows.values())


CHECKS = {
    "config-db": _config_db,
    "show-version": _show_version,
    "frr-config": _frr_config,
    "lldpctl-json": _lldpctl,
    "pg-profile-lookup": _lookup,
}


@pytest.mark.parametrize("entry", MANIFEST, ids=entry_id)
def test_the_driver_parses_every_file(entry: dict[str, str]) -> None:
    """Each document parses through the driver's own parser for it without an error."""
    CHECKS[entry["kind"]](entry)


def running(driver: SonicDriver, ref: DeviceRef) -> dict[str, Any]:
    """The switch's ``show runningconfiguration all`` without FRR's text (``bgpraw``)."""
    with driver.exec.session(ref) as session:
        result = session.run("show runningconfiguration all")
    assert result.status == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    for db in namespaces(data):
        db.pop("bgpraw", None)
    return data


def loaded(entry: dict[str, str]) -> dict[str, Any]:
    doc = document(entry)
    if entry["profile"].endswith("-multiasic"):
        return {space: loaded_config_db(db) for space, db in doc.items()}
    return loaded_config_db(doc)


@pytest.mark.parametrize("entry", CONFIGS, ids=entry_id)
def test_the_simulator_boots_every_config_db(entry: dict[str, str], switches: Switches) -> None:
    """The switch keeps every table as ``config load`` stored it, prints it back in
    ``show runningconfiguration all``, and the driver observes it."""
    ref = boot_sonic(switches, document(entry), entry["profile"])
    driver: SonicDriver = switches.driver("sonic")
    assert running(driver, ref) == loaded(entry)
    observed = driver.observe(ref)
    assert release(observed["system/nos_version"]) == entry["profile"].split("-")[1]
    hwsku = namespaces(document(entry))[0].get("DEVICE_METADATA", {}).get("localhost", {})
    assert observed["system/model"] == hwsku.get("hwsku", profile_named(entry["profile"]).hwsku)


# -- what plumb owns in config_db -------------------------------------------------------------


def _is_ipv4(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 4
    except ValueError:
        return False


def _prefix_is_ipv4(key: str) -> bool:
    return "|" in key and _is_ipv4(key.split("|")[-1].split("/")[0])


GREEN = ("green_min_threshold", "green_max_threshold", "green_drop_probability")


def untouched(doc: dict[str, Any], moved_ports: set[str]) -> dict[str, Any]:
    """The config_db with plumb's own fields taken out: what must never move. (A port
    whose address moved may gain or lose its bare ``INTERFACE|<port>`` row.)"""
    kept = copy.deepcopy(doc)
    for db in namespaces(kept):
        lossless = {
            str(row.get("profile"))
            for key, row in db.get("BUFFER_PG", {}).items()
            if key.split("|")[-1] != "0"
        }
        for row in db.get("PORT", {}).values():
            row.pop("mtu", None)
        for row in db.get("PORT_QOS_MAP", {}).values():
            row.pop("pfc_enable", None)
            row.pop("dscp_to_tc_map", None)
        db.pop("DSCP_TO_TC_MAP", None)
        for row in db.get("WRED_PROFILE", {}).values():
            for field in GREEN:
                row.pop(field, None)
        for name, row in db.get("BUFFER_PROFILE", {}).items():
            if name in lossless:
                row.pop("xoff", None)
        interfaces = db.get("INTERFACE", {})
        for key in [k for k in interfaces if _prefix_is_ipv4(k) or k in moved_ports]:
            del interfaces[key]
        for key, row in db.get("BGP_NEIGHBOR", {}).items():
            if _is_ipv4(key.split("|")[-1]):
                row.pop("asn", None)
        for row in db.get("BGP_NEIGHBOR_AF", {}).values():
            row.pop("route_map_in", None)
        db.get("DEVICE_METADATA", {}).get("localhost", {}).pop("bgp_asn", None)
        db.get("BGP_GLOBALS", {}).get("default", {}).pop("router_id", None)
        db.get("BGP_GLOBALS_AF", {}).get("default|ipv4_unicast", {}).pop("max_ebgp_paths", None)
        for name in ("PORT_QOS_MAP", "BGP_NEIGHBOR_AF", "BGP_GLOBALS_AF"):
            rows = {k: v for k, v in db.get(name, {}).items() if v}
            db.pop(name, None)
            db.update({name: rows} if rows else {})
        for name in [t for t, rows in db.items() if rows == {}]:
            del db[name]
    return kept


def other_value(have: Scalar, choices: tuple[int, ...]) -> int:
    return next(c for c in choices if c != have)


def queued_ports(doc: dict[str, Any]) -> set[str]:
    """Ports carrying QoS: those with QUEUE or BUFFER_PG rows."""
    return {
        key.partition("|")[0]
        for db in namespaces(doc)
        for table in ("QUEUE", "BUFFER_PG")
        for key in db.get(table, {})
    }


def port_changes(observed: dict[str, Scalar], doc: dict[str, Any]) -> dict[str, Scalar]:
    """An MTU on the first port that is no PortChannel member, an address on the first
    routed port that has one, PFC on the first port without queues (plumb carves no
    lossless buffers for a port that has them)."""
    ports = sorted(
        (p.split("/")[1] for p in observed if p.startswith("interfaces/") and p.endswith("/mode")),
        key=natural,
    )
    routed = [p for p in ports if observed[f"interfaces/{p}/mode"] == "routed"]
    own = [p for p in ports if observed[f"interfaces/{p}/mode"] != "lag-member"]
    want: dict[str, Scalar] = {}
    if own:
        have = observed[f"interfaces/{own[0]}/mtu"]
        want[f"interfaces/{own[0]}/mtu"] = other_value(have, (9000, 9100))
    addressed = [p for p in routed if observed.get(f"interfaces/{p}/address")]
    if addressed:
        want[f"interfaces/{addressed[0]}/address"] = TEST_NET
    queued = queued_ports(doc)
    idle = [
        p for p in ports if p not in queued and observed[f"interfaces/{p}/pfc_priorities"] != "3,4"
    ]
    if idle:
        want[f"interfaces/{idle[0]}/pfc_priorities"] = "3,4"
    return want


def changes_for(observed: dict[str, Scalar], doc: dict[str, Any]) -> dict[str, Scalar]:
    """A change of every owned kind the switch has something to change in, that the
    platform can express and plumb writes there (headroom aside: its floor is the HwSKU's
    table)."""
    want = port_changes(observed, doc)
    host = namespaces(doc)[0]
    if queued_ports(doc) or dscp_map_name(host) in host.get("DSCP_TO_TC_MAP", {}):
        # plumb edits the DSCP map of ports carrying QoS, else the switch's own; it never
        # turns QoS on
        want["qos/dscp/46"] = other_value(observed.get("qos/dscp/46"), (5, 6))
    if isinstance(observed.get("qos/ecn/3/kmin_kb"), int):  # with the queues sharing its profile
        profile = observed.get("qos/ecn/3/wred_profile")
        for queue in [q for q in range(8) if observed.get(f"qos/ecn/{q}/wred_profile") == profile]:
            ecn = {"kmin_kb": 200, "kmax_kb": 800, "pmax_percent": 20}
            want |= {f"qos/ecn/{queue}/{field}": value for field, value in ecn.items()}
    if isinstance(observed.get("bgp/asn"), int):
        peers = sorted(
            p.split("/")[2]
            for p, v in observed.items()
            if p.endswith("/remote_as") and _is_ipv4(p.split("/")[2]) and isinstance(v, int)
        )
        if peers:
            have = observed[f"bgp/neighbors/{peers[0]}/remote_as"]
            want[f"bgp/neighbors/{peers[0]}/remote_as"] = other_value(have, (64999, 64998))
            maps = sorted(
                {k.split("|")[0] for db in namespaces(doc) for k in db.get("ROUTE_MAP", {})}
            )
            if maps:
                want[f"bgp/neighbors/{peers[0]}/inbound_filter"] = maps[0]
        want["bgp/maximum_paths"] = other_value(observed.get("bgp/maximum_paths"), (128, 64))
        want["bgp/router_id"] = "192.0.2.1"
    return {p: v for p, v in want.items() if inexpressible("sonic", p, observed) is None}


@pytest.mark.parametrize("entry", CONVERGING, ids=entry_id)
def test_observe_plan_apply_converges_and_touches_nothing_else(
    entry: dict[str, str], switches: Switches
) -> None:
    """Every expressible owned field the switch has reaches intent in one apply, the next
    plan is empty, and on config_db only plumb's fields moved."""
    doc = document(entry)
    ref = boot_sonic(switches, doc, entry["profile"])
    driver: SonicDriver = switches.driver("sonic")
    observed = driver.observe(ref)
    desired = {p: Owned(v, UNKNOWN) for p, v in changes_for(observed, doc).items()}
    changes = diff(desired, observed)
    assert changes
    before = running(driver, ref)
    result = driver.apply(ref, changes, dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
    after = running(driver, ref)
    moved = {c.path.split("/")[1] for c in changes if c.path.endswith("/address")}
    assert untouched(after, moved) == untouched(before, moved)


@pytest.mark.parametrize("entry", INVALID, ids=entry_id)
def test_a_config_db_its_yang_models_refuse_takes_no_patch(
    entry: dict[str, str], switches: Switches
) -> None:
    """config apply-patch validates the whole patched config_db against the YANG models:
    where the running one already breaks them (``invalid`` says how), every patch is
    refused by the switch's own dry run, the reason reaches the caller and nothing is
    written; the switch is still observed."""
    doc = document(entry)
    ref = boot_sonic(switches, doc, entry["profile"])
    driver: SonicDriver = switches.driver("sonic")
    observed = driver.observe(ref)
    desired = {p: Owned(v, UNKNOWN) for p, v in changes_for(observed, doc).items()}
    writes = switches.sim.write_count(ref.name)
    with pytest.raises(ConfigRejected, match="apply-patch --dry-run: exit status"):
        driver.apply(ref, diff(desired, observed), dry_run=False, confirm_within=30)
    assert switches.sim.write_count(ref.name) == writes
