"""The SONiC driver against every SONiC release profile of the switch simulator: ORION's
leaf-r1 (drifted in MTU, an address, ECN, headroom, a DSCP mapping and a peer's AS) is
reached through the real driver factory, planned with the real fleet, applied, and
observed again with nothing left to do. On the device's config_db only plumb's fields
moved: the lossy PG 0 profile, IPv6 INTERFACE keys, BGP_NEIGHBOR fields plumb does not
own, yellow/red WRED thresholds and the other namespaces of a multi-ASIC switch stay.
What a profile cannot express is refused in the plan and never sent, and refused again
when forced through stage; the generic config updater's own refusal (a HwSKU it does
not list) reaches the caller with the device's reason."""

from __future__ import annotations

import copy
import dataclasses
import ipaddress
import itertools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from intent.fleet import Fleet
from reconciler.drivers import sonic_patch
from reconciler.drivers.base import DeviceRef, Driver, Outcome
from reconciler.drivers.netmiko_sonic import SonicDriver
from reconciler.drivers.safevalues import ECN_FIELDS
from reconciler.errors import ConfigRejected
from reconciler.plan import DevicePlan, build_plan
from reconciler.render import render_device
from reconciler.settings import Change, as_desired_state
from reconciler.targets import Targets
from tests.conformance.switch_harness import (
    PASSWORD_ENV,
    USER_ENV,
    USERNAME,
    drifted,
    driver_rule,
    environment,
)
from tests.drivers.simflat import state_from_flat
from tests.fleetcopy import copy_orion
from tests.switchsim import DeviceSpec, SwitchSim, sonic_profiles, sonic_qos

LEAF = "leaf-r1"
PASSWORD = "sw-profiles-0b7d51c2"
MOVED_PORT, MOVED_ADDRESS = "Ethernet1", "10.254.1.0/31"  # an IPv4 address drifted by hand
NAMED = sorted(name for name in sonic_profiles.PROFILES if name)
UNLISTED = "sonic-202405-unlisted-sku"
_serial = itertools.count(1)
_NAMESPACE = re.compile(r"^(?:localhost|asic[0-9]+)$")
_IPV4_NEIGHBOR = re.compile(r"^\s*neighbor [0-9]+(?:\.[0-9]+){3} ")


@dataclass
class Leaf:
    fleet: Fleet
    driver: Driver
    ref: DeviceRef
    sim: SwitchSim
    sim_name: str

    def plan(self) -> DevicePlan:
        observed = self.driver.observe(self.ref)
        desired = {LEAF: render_device(self.fleet, LEAF)}
        plan = build_plan(self.fleet, desired, {LEAF: observed})
        assert plan.refused is None, plan.refused
        return plan.devices[LEAF]

    def config_db(self) -> dict[str, Any]:
        """The switch's running config_db, as the switch prints it."""
        assert isinstance(self.driver, SonicDriver)
        with self.driver.exec.session(self.ref) as session:
            result = session.run("show runningconfiguration all")
        assert result.status == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data


@contextmanager
def orion_leaf(sim: SwitchSim, tmp: Path, profile: str) -> Iterator[Leaf]:
    """ORION's leaf-r1, drifted, simulated as ``profile`` and reached through the factory."""
    fleet_copy = copy_orion(tmp)
    # the leaf's bundle pins the branch the profile runs: no NOS upgrade in these tests
    branch = sonic_profiles.PROFILES[profile].build_version.split(".")[0]
    fleet_copy.replace("intent/firmware.yaml", '{nos: "202411"}', f'{{nos: "{branch}"}}')
    # headroom no lower than what the platform computes for the cables the ports use
    fleet_copy.replace(
        "intent/qos.yaml", "pfc_headroom_kb: 128", f"pfc_headroom_kb: {headroom_for(profile)}"
    )
    fleet = fleet_copy.load()
    start = drifted(as_desired_state(render_device(fleet, LEAF)))
    start[f"interfaces/{MOVED_PORT}/address"] = MOVED_ADDRESS
    device = fleet.devices[LEAF]
    initial = state_from_flat(start, hostname=LEAF, dialect="sonic", model=device.model)
    sim_name = f"{LEAF}-{next(_serial)}"  # one simulated switch per test
    spec = DeviceSpec(
        name=sim_name,
        dialect="sonic",
        username=USERNAME,
        password=PASSWORD,
        initial=initial,
        profile=profile,
        reboot_seconds=0.3,
    )
    port = sim.add_device(spec)
    (tmp / "known_hosts").write_text(sim.host_key_line(sim_name) + "\n")
    (tmp / "mgmt.json").write_text(json.dumps({LEAF: {"host": sim.host, "port": port}}))
    fleet_copy.set_drivers("drivers:\n" + driver_rule("sonic", "sonic", tmp))
    with environment({USER_ENV: USERNAME, PASSWORD_ENV: PASSWORD}):
        fleet = fleet_copy.load()
        targets = Targets.for_fleet(fleet)
        try:
            yield Leaf(fleet, targets.driver(LEAF), targets.ref(LEAF), sim, sim_name)
        finally:
            targets.close()


def platform_floor_kb(profile: str) -> int:
    """The largest lossless xoff the HwSKU's table gives the simulated ports (KB)."""
    sim_profile = sonic_profiles.PROFILES[profile]
    rows = sonic_qos.lookup_rows(sim_profile.hwsku)
    cables = sonic_qos.cables(sim_profile)
    xoffs = [int(rows.get((sim_profile.port_speed, c), {"xoff": "0"})["xoff"]) for c in cables]
    return -(-max(xoffs) // 1024)


def headroom_for(profile: str) -> int:
    return max(128, platform_floor_kb(profile) + 16)


# -- what plumb owns in config_db -----------------------------------------------------------


def namespaces(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if doc and "localhost" in doc and all(_NAMESPACE.match(k) for k in doc):
        return list(doc.values())
    return [doc]


def _is_ipv4(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 4
    except ValueError:
        return False


def _lossless_profiles(db: dict[str, Any]) -> set[str]:
    """Profiles of the priority groups that are not PG 0 (the lossy group)."""
    return {
        str(row.get("profile"))
        for key, row in db.get("BUFFER_PG", {}).items()
        if key.split("|")[-1] != "0" and isinstance(row, dict)
    }


def untouched(doc: dict[str, Any]) -> dict[str, Any]:
    """The config_db with plumb's own fields taken out: what must never move."""
    kept = copy.deepcopy(doc)
    for db in namespaces(kept):
        lossless = _lossless_profiles(db)
        for row in db.get("PORT", {}).values():
            row.pop("mtu", None)
        for row in db.get("PORT_QOS_MAP", {}).values():
            row.pop("pfc_enable", None)
        for name in db.get("DSCP_TO_TC_MAP", {}):
            db["DSCP_TO_TC_MAP"][name] = "owned"
        for row in db.get("WRED_PROFILE", {}).values():
            for field in ("green_min_threshold", "green_max_threshold", "green_drop_probability"):
                row.pop(field, None)
        for name, row in db.get("BUFFER_PROFILE", {}).items():
            if name in lossless:
                row.pop("xoff", None)
        interfaces = db.get("INTERFACE", {})
        for key in [k for k in interfaces if "|" in k and _is_ipv4(k.split("|")[1].split("/")[0])]:
            del interfaces[key]
        for peer, row in db.get("BGP_NEIGHBOR", {}).items():
            if _is_ipv4(peer.split("|")[-1]):
                row.pop("asn", None)
        db.get("DEVICE_METADATA", {}).get("localhost", {}).pop("bgp_asn", None)
        if isinstance(db.get("bgpraw"), str):
            lines = db["bgpraw"].splitlines()
            db["bgpraw"] = [line for line in lines if not _IPV4_NEIGHBOR.match(line)]
    return kept


def moved_tables(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """Tables (in any namespace) whose content changed."""
    pairs = zip(namespaces(before), namespaces(after), strict=True)
    return {t for b, a in pairs for t in set(b) | set(a) if b.get(t) != a.get(t)}


# -- per profile -----------------------------------------------------------------------------

BGPCFGD = {"bgp/router_id", "bgp/maximum_paths", "qos/pfc_xoff_kb"}
EXPECTED_MOVES = {"PORT", "INTERFACE", "WRED_PROFILE", "DSCP_TO_TC_MAP", "BGP_NEIGHBOR"}


@pytest.mark.parametrize("profile", NAMED)
def test_one_apply_converges_and_moves_only_plumbs_fields(
    profile: str, sim: SwitchSim, tmp_path: Path
) -> None:
    """observe -> plan -> apply -> observe: nothing left to do, and on config_db only the
    owned fields moved; what the profile cannot express was refused and never sent."""
    dynamic = profile.endswith("-dynamic")
    with orion_leaf(sim, tmp_path, profile) as leaf:
        dp = leaf.plan()
        refused = {i.path for i in dp.inexpressible if not i.path.endswith("/inbound_filter")}
        assert refused == BGPCFGD | ({"qos/pfc_headroom_kb"} if dynamic else set())
        planned = {c.path for c in dp.changes}
        assert not planned & {i.path for i in dp.inexpressible}
        assert ("qos/pfc_headroom_kb" in planned) is not dynamic
        before = leaf.config_db()
        result = leaf.driver.apply(leaf.ref, list(dp.changes), dry_run=False, confirm_within=30)
        assert result.outcome is Outcome.applied, result.error
        assert leaf.plan().changes == ()
        after = leaf.config_db()
        assert untouched(after) == untouched(before)
        moved = moved_tables(before, after)
        assert moved >= EXPECTED_MOVES | (set() if dynamic else {"BUFFER_PROFILE"})
        assert dynamic is not bool({"BUFFER_PROFILE", "BUFFER_PG"} & moved)
        record = json.loads((leaf.sim.state_dir / f"{leaf.sim_name}.json").read_text())
        assert record["running"] == record["startup"]  # confirmed and saved


FORCED = {name: "bgp/maximum_paths" for name in NAMED} | {
    "sonic-202405-dynamic": "qos/pfc_headroom_kb"
}


@pytest.mark.parametrize("profile", NAMED)
def test_a_refused_path_forced_through_stage_is_refused_there(
    profile: str, sim: SwitchSim, tmp_path: Path
) -> None:
    """A path the plan refuses (dynamic buffers: headroom; bgpcfgd: maximum-paths), sent
    to the driver anyway, is refused at stage with the plan's reason and never written."""
    with orion_leaf(sim, tmp_path, profile) as leaf:
        path = FORCED[profile]
        refused = {i.path: i for i in leaf.plan().inexpressible}
        assert path in refused
        writes = leaf.sim.write_count(leaf.sim_name)
        change = Change(path, None, refused[path].value)
        with pytest.raises(ConfigRejected) as caught:
            leaf.driver.apply(leaf.ref, [change], dry_run=False, confirm_within=30)
        assert refused[path].reason in str(caught.value)
        assert leaf.sim.write_count(leaf.sim_name) == writes


def test_an_unlisted_hwsku_is_refused_by_the_plan_stage_and_the_device(
    sim: SwitchSim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a HwSKU the generic config updater does not list, headroom and ECN are NOT
    EXPRESSIBLE in the plan and refused at stage; a driver that let the patch through
    would get the device's own refusal from the dry run, and nothing is written."""
    unlisted = dataclasses.replace(
        sonic_profiles.PROFILES["sonic-202405"], name=UNLISTED, hwsku="Acme-X9000-64x400G"
    )
    monkeypatch.setitem(sonic_profiles.PROFILES, UNLISTED, unlisted)
    with orion_leaf(sim, tmp_path, UNLISTED) as leaf:
        dp = leaf.plan()
        refused = {i.path: i.reason for i in dp.inexpressible}
        assert "Acme-X9000-64x400G" in refused["qos/pfc_headroom_kb"]
        assert all("Acme-X9000-64x400G" in refused[f"qos/ecn/3/{f}"] for f in ECN_FIELDS)
        writes = leaf.sim.write_count(leaf.sim_name)
        forced = [Change("qos/pfc_headroom_kb", None, 128)]
        with pytest.raises(ConfigRejected, match="config apply-patch of 202405 refuses"):
            leaf.driver.apply(leaf.ref, forced, dry_run=False)
        monkeypatch.setattr(sonic_patch, "sonic_inexpressible", lambda path, observed: None)
        ecn = [
            Change(f"qos/ecn/3/{field}", None, value)
            for field, value in zip(ECN_FIELDS, (300, 900, 20), strict=True)
        ]
        with pytest.raises(ConfigRejected) as caught:
            leaf.driver.apply(leaf.ref, ecn, dry_run=False)
        assert "apply-patch --dry-run: exit status" in str(caught.value)
        assert "Modification of WRED_PROFILE table is illegal" in str(caught.value)
        assert leaf.sim.write_count(leaf.sim_name) == writes


def test_headroom_below_what_the_platform_computes_is_refused_at_stage(
    sim: SwitchSim, tmp_path: Path
) -> None:
    """On a Tomahawk-4 leaf (traditional buffers) a headroom below the xoff its
    pg_profile_lookup.ini gives for a port's 400G cable is refused, naming the cable;
    nothing is written."""
    profile = "sonic-202405"
    with orion_leaf(sim, tmp_path, profile) as leaf:
        writes = leaf.sim.write_count(leaf.sim_name)
        low = platform_floor_kb(profile) - 8
        change = Change("qos/pfc_headroom_kb", None, low)
        with pytest.raises(ConfigRejected, match=r"below the \d+ KB of headroom .* 400000 over"):
            leaf.driver.apply(leaf.ref, [change], dry_run=False, confirm_within=30)
        assert leaf.sim.write_count(leaf.sim_name) == writes
