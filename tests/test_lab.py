"""The lab fleet: a real SQLite store, the lab driver with its fault injection and
commit-confirm, and the initial lab state derived from a fleet. No mocks: every test
uses a database file in tmp_path."""

from __future__ import annotations

import json
import re
import sqlite3
import string
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from intent.fleet import Fleet, load_fleet
from lab.driver import LabDriver, create_lab, lab_refs
from lab.fleet import (
    UNMANAGED_PATTERNS,
    Fault,
    FaultKind,
    initial_lab_states,
    is_unmanaged,
    lab_db_path,
    snapshot_document,
    states_from_snapshot,
)
from lab.store import LabSchemaError, LabStore
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.errors import (
    ConfigRejected,
    ConnectionLost,
    DeviceAuthError,
    DeviceError,
    DeviceTimeout,
    DeviceUnreachable,
)
from reconciler.render import render_desired
from reconciler.settings import Change, Scalar, diff
from tests.fleetcopy import ORION, FleetCopy

LEAF = DeviceRef(name="leaf-1", platform="eos", role="leaf", host="lab")
NODE = DeviceRef(name="node-1", platform="linux", role="gpu-node", host="lab")
START: dict[str, Scalar] = {
    "interfaces/Ethernet1/mtu": 1500,
    "bgp/maximum_paths": 16,
    "system/hostname": "leaf-1",
    "qos/ecn/3/kmin_kb": 200,
}
PLAN = [Change("interfaces/Ethernet1/mtu", 1500, 9216), Change("bgp/maximum_paths", 16, 64)]


@pytest.fixture(scope="module")
def orion_fleet() -> Fleet:
    """ORION loaded once, read-only (labs built from it live in tmp_path)."""
    return load_fleet(ORION)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LabStore]:
    """A two-device lab: a leaf and a GPU node."""
    lab = LabStore(tmp_path / "lab.db")
    lab.create(
        [("leaf-1", "eos", "leaf"), ("node-1", "linux", "gpu-node")],
        {"leaf-1": START, "node-1": {"nics/eth0/mtu": 1500}},
    )
    yield lab
    lab.close()


@pytest.fixture
def driver(store: LabStore) -> LabDriver:
    return LabDriver(store)


def fault(store: LabStore, kind: FaultKind, device: str = "leaf-1", **fields: Any) -> Fault:
    """Inject ``kind`` on ``device`` (the leaf by default)."""
    return store.add_fault(Fault(device, kind, **fields))


# -- the store ----------------------------------------------------------------------------

PATHS = st.text(alphabet=string.ascii_letters + string.digits + "/_.-:", min_size=1, max_size=40)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(state=st.dictionaries(PATHS, SCALARS, max_size=20))
def test_any_state_round_trips_exactly(tmp_path: Path, state: dict[str, Scalar]) -> None:
    """Whatever path -> scalar mapping goes in comes back with the same types and values."""
    with_types = sorted((p, type(v).__name__, repr(v)) for p, v in state.items())
    lab = LabStore(tmp_path / "roundtrip.db")
    try:
        lab.create([("d", "eos", "leaf")], {"d": state})
        for read in (lab.read_running("d"), lab.read_startup("d"), lab.read_all_running()["d"]):
            assert sorted((p, type(v).__name__, repr(v)) for p, v in read.items()) == with_types
    finally:
        lab.close()


def test_create_replaces_the_previous_lab(store: LabStore) -> None:
    """create() wipes devices, settings, faults and counters of an earlier lab."""
    fault(store, FaultKind.unreachable)
    store.commit("leaf-1", {"bgp/asn": 65001}, save=True)
    store.create([("x", "sonic", "spine")], {"x": {"a": 1}})
    assert store.device_names() == ["x"]
    assert store.faults_for(None) == [] and store.counters() == {}
    assert store.read_all_running() == {"x": {"a": 1}}


def test_commit_counts_one_write_and_its_fields(store: LabStore) -> None:
    """Each commit is one write and len(values) fields, whatever it changes."""
    store.commit("leaf-1", {"a": 1, "b": "x", "c": None}, save=True)
    store.commit("node-1", {"nics/eth0/mtu": 9000}, save=False)
    assert store.write_count() == 2
    assert store.counters()["fields_written"] == 4


def test_unsaved_change_is_lost_on_reboot(store: LabStore) -> None:
    """save=False writes running only; reboot restores startup; save_startup keeps it."""
    store.commit("leaf-1", {"bgp/maximum_paths": 64, "new/path": 1}, save=False)
    assert store.read_running("leaf-1")["bgp/maximum_paths"] == 64
    store.reboot("leaf-1")
    assert store.read_running("leaf-1") == START
    store.commit("leaf-1", {"bgp/maximum_paths": 64}, save=False)
    store.save_startup("leaf-1")
    store.reboot("leaf-1")
    assert store.read_running("leaf-1")["bgp/maximum_paths"] == 64


def test_unknown_device_is_a_key_error_in_the_store(store: LabStore) -> None:
    """The store refuses reads and writes of a device it does not hold."""
    with pytest.raises(KeyError):
        store.read_running("nope")
    with pytest.raises(KeyError):
        store.commit("nope", {"a": 1}, save=True)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    """A lab.db written by another schema version is not silently reused."""
    LabStore(tmp_path / "lab.db").close()
    with sqlite3.connect(tmp_path / "lab.db") as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with pytest.raises(LabSchemaError, match="version 99"):
        LabStore(tmp_path / "lab.db")


SCHEMA_1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE devices (name TEXT PRIMARY KEY, platform TEXT NOT NULL, role TEXT NOT NULL);
CREATE TABLE settings (
    device TEXT NOT NULL, path TEXT NOT NULL, running TEXT, startup TEXT,
    PRIMARY KEY (device, path)) WITHOUT ROWID;
INSERT INTO devices VALUES ('leaf-1', 'eos', 'leaf'), ('node-1', 'linux', 'gpu-node');
INSERT INTO settings VALUES
    ('leaf-1', 'bgp/maximum_paths', '64', '16'),
    ('leaf-1', 'interfaces/Ethernet1/description', '"spine-1 Ethernet3"', NULL),
    ('leaf-1', 'qos/ecn/3/kmin_kb', NULL, '200'),
    ('leaf-1', 'system/fan', 'null', 'null');
"""


def test_a_lab_of_schema_1_is_upgraded_in_place(tmp_path: Path) -> None:
    """A lab.db of one row per device and setting (schema 1) opens with every running and
    startup value as it was, absent where SQL NULL stood, and is schema 2 afterwards."""
    with sqlite3.connect(tmp_path / "lab.db") as conn:
        conn.executescript(SCHEMA_1)
    conn.close()
    lab = LabStore(tmp_path / "lab.db")
    try:
        assert lab.read_running("leaf-1") == {
            "bgp/maximum_paths": 64,
            "interfaces/Ethernet1/description": "spine-1 Ethernet3",
            "system/fan": None,
        }
        assert lab.read_startup("leaf-1") == {
            "bgp/maximum_paths": 16,
            "qos/ecn/3/kmin_kb": 200,
            "system/fan": None,
        }
        assert lab.read_all_running() == {
            "leaf-1": lab.read_running("leaf-1"),
            "node-1": {},
        }
        lab.commit("node-1", {"nics/eth0/mtu": 9000}, save=True)
        assert lab.read_startup("node-1") == {"nics/eth0/mtu": 9000}
    finally:
        lab.close()
    with sqlite3.connect(tmp_path / "lab.db") as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (2,)
    conn.close()
    LabStore(tmp_path / "lab.db").close()  # opened again, nothing left to upgrade


# -- the driver contract --------------------------------------------------------------------


def test_dry_run_writes_nothing(store: LabStore, driver: LabDriver) -> None:
    """A dry-run apply is planned and leaves the write counter and the state alone."""
    result = driver.apply(LEAF, PLAN, dry_run=True)
    assert result.outcome is Outcome.planned
    assert store.write_count() == 0 and store.read_running("leaf-1") == START


def test_apply_then_observe_shows_the_change(store: LabStore, driver: LabDriver) -> None:
    """After apply, observe returns the new values, saved to startup as well."""
    assert driver.apply(LEAF, PLAN, dry_run=False).outcome is Outcome.applied
    observed = driver.observe(LEAF)
    assert observed["interfaces/Ethernet1/mtu"] == 9216 and observed["bgp/maximum_paths"] == 64
    assert store.read_startup("leaf-1") == observed
    assert store.write_count() == 1


def test_compare_reports_only_fields_that_would_change(driver: LabDriver) -> None:
    """A change already in place is not part of the candidate's difference."""
    candidate = driver.stage(LEAF, [*PLAN, Change("qos/ecn/3/kmin_kb", 200, 200)])
    assert [c.path for c in driver.compare(LEAF, candidate)] == [c.path for c in PLAN]
    driver.discard(LEAF, candidate)


def test_orion_lab_converges_in_one_pass(orion_fleet: Fleet, tmp_path: Path) -> None:
    """Applying diff(desired, observed) everywhere leaves an empty second diff."""
    store = LabStore(tmp_path / "lab.db")
    create_lab(store, orion_fleet)
    driver = LabDriver(store)
    desired = render_desired(orion_fleet)
    for ref in lab_refs(store):
        changes = diff(desired[ref.name], driver.observe(ref))
        assert changes, f"{ref.name}: a fresh lab should need work"
        assert driver.apply(ref, changes, dry_run=False).outcome is Outcome.applied
    for ref in lab_refs(store):
        observed = driver.observe(ref)
        assert diff(desired[ref.name], observed) == []
        assert observed["system/hostname"] == ref.name  # unmanaged, untouched
    assert store.write_count() == len(desired)
    assert "unmanaged_writes" not in store.counters()
    store.close()


def test_writing_an_unmanaged_field_is_counted(store: LabStore, driver: LabDriver) -> None:
    """The lab records writes to fields plumb must never own, so tests can assert zero."""
    driver.apply(LEAF, [Change("system/hostname", "leaf-1", "x")], dry_run=False)
    assert store.counters()["unmanaged_writes"] == 1
    assert is_unmanaged("interfaces/Ethernet7/description") and not is_unmanaged("bgp/asn")


def test_unknown_device_is_unreachable(driver: LabDriver) -> None:
    """A device the lab does not hold cannot be reached."""
    with pytest.raises(DeviceUnreachable, match="ghost"):
        driver.observe(DeviceRef(name="ghost", platform="eos", role="leaf", host="lab"))


# -- faults ---------------------------------------------------------------------------------


def test_timeout_after_write_changes_state_and_raises(store: LabStore, driver: LabDriver) -> None:
    """The write lands, then the answer never comes: outcome unknown until re-observed."""
    fault(store, FaultKind.timeout_after_write)
    with pytest.raises(DeviceTimeout) as caught:
        driver.apply(LEAF, PLAN, dry_run=False)
    assert caught.value.device == "leaf-1"
    assert driver.observe(LEAF)["bgp/maximum_paths"] == 64
    assert store.write_count() == 1


def test_timeout_before_write_changes_nothing(store: LabStore, driver: LabDriver) -> None:
    """The commit times out before writing: error raised, state and counter unchanged."""
    fault(store, FaultKind.timeout_before_write)
    with pytest.raises(DeviceTimeout, match="leaf-1"):
        driver.apply(LEAF, PLAN, dry_run=False)
    assert driver.observe(LEAF) == START and store.write_count() == 0


def _drop_outcomes(path: Path, seed: int, probability: float = 1.0) -> list[str]:
    lab = LabStore(path)
    lab.create([("leaf-1", "eos", "leaf")], {"leaf-1": START})
    lab.add_fault(Fault("leaf-1", FaultKind.drop_mid_commit, seed=seed, probability=probability))
    driver, outcomes = LabDriver(lab), []
    for _ in range(12):
        try:
            driver.apply(LEAF, PLAN, dry_run=False)
            outcomes.append("applied")
        except ConnectionLost:
            state = lab.read_running("leaf-1")
            landed = [state[c.path] == c.after for c in PLAN]
            assert all(landed) or not any(landed), "a dropped commit must be all or nothing"
            outcomes.append("landed" if all(landed) else "lost")
        lab.commit("leaf-1", START, save=True)  # back to the start for the next try
    lab.close()
    return outcomes


def test_drop_mid_commit_is_atomic_and_reproducible(tmp_path: Path) -> None:
    """The same seed gives the same landed/lost sequence; another seed another one."""
    first = _drop_outcomes(tmp_path / "a.db", seed=7)
    assert first == _drop_outcomes(tmp_path / "b.db", seed=7)
    assert {"landed", "lost"} <= set(first)
    assert first != _drop_outcomes(tmp_path / "c.db", seed=8)


def test_probabilistic_fault_fires_reproducibly(tmp_path: Path) -> None:
    """With probability 0.5 some commits pass and some drop, identically for a seed."""
    first = _drop_outcomes(tmp_path / "a.db", seed=3, probability=0.5)
    assert "applied" in first and {"landed", "lost"} & set(first)
    assert first == _drop_outcomes(tmp_path / "b.db", seed=3, probability=0.5)


def test_reboot_loses_the_unsaved_change(store: LabStore, driver: LabDriver) -> None:
    """The device reboots before saving: connection lost, and the change is gone."""
    fault(store, FaultKind.reboot_loses_unsaved)
    with pytest.raises(ConnectionLost, match="leaf-1"):
        driver.apply(LEAF, PLAN, dry_run=False)
    assert driver.observe(LEAF) == START
    assert store.counters()["reboots"] == 1


@pytest.mark.parametrize(
    ("kind", "error"),
    [(FaultKind.unreachable, DeviceUnreachable), (FaultKind.auth_fail, DeviceAuthError)],
)
def test_unreachable_and_auth_fail_block_every_step(
    store: LabStore, driver: LabDriver, kind: FaultKind, error: type[DeviceError]
) -> None:
    """observe and apply both raise, naming the device; nothing is written."""
    fault(store, kind)
    with pytest.raises(error) as caught:
        driver.observe(LEAF)
    assert caught.value.device == "leaf-1"
    with pytest.raises(error):
        driver.apply(LEAF, PLAN, dry_run=True)
    assert store.write_count() == 0
    assert driver.observe(NODE) == {"nics/eth0/mtu": 1500}  # other devices unaffected


def test_reject_applies_to_matching_paths_only(store: LabStore, driver: LabDriver) -> None:
    """A reject fault with a path glob refuses a plan touching it and lets others through."""
    fault(store, FaultKind.reject, path_glob="bgp/*")
    with pytest.raises(ConfigRejected, match="bgp/maximum_paths"):
        driver.apply(LEAF, PLAN, dry_run=False)
    assert store.write_count() == 0
    mtu_only = [PLAN[0]]
    assert driver.apply(LEAF, mtu_only, dry_run=False).outcome is Outcome.applied


def test_latency_slows_observe(store: LabStore, driver: LabDriver) -> None:
    """A 60 ms latency fault makes every observe take at least 60 ms."""
    fault(store, FaultKind.latency, latency_ms=60)
    started = time.perf_counter()
    driver.observe(LEAF)
    driver.observe(LEAF)
    assert time.perf_counter() - started >= 0.12  # a floor: a loaded machine only adds


def test_one_shot_fault_fires_once(store: LabStore, driver: LabDriver) -> None:
    """count=1: the first operation fails, the next succeeds, and the fault is gone."""
    fault(store, FaultKind.unreachable, count=1)
    with pytest.raises(DeviceUnreachable):
        driver.observe(LEAF)
    assert driver.observe(LEAF) == START
    assert store.faults_for("leaf-1") == []


def test_counted_fault_fires_n_times(store: LabStore, driver: LabDriver) -> None:
    """count=3 fires exactly three times, even with 16 threads racing for it."""
    fault(store, FaultKind.unreachable, count=3)

    def attempt(_: int) -> bool:
        try:
            driver.observe(LEAF)
            return False
        except DeviceUnreachable:
            return True

    with ThreadPoolExecutor(16) as pool:
        assert sum(pool.map(attempt, range(32))) == 3


def test_faults_survive_reopening(store: LabStore, tmp_path: Path) -> None:
    """Faults live in the database, not in the driver."""
    added = fault(store, FaultKind.reject, path_glob="interfaces/*/mtu", count=2, seed=5)
    store.close()
    reopened = LabStore(tmp_path / "lab.db")
    assert reopened.faults_for("leaf-1") == [added]
    with pytest.raises(ConfigRejected):
        LabDriver(reopened).apply(LEAF, PLAN, dry_run=False)
    assert reopened.faults_for("leaf-1")[0].count == 1
    reopened.clear_faults("leaf-1")
    assert reopened.faults_for(None) == []
    reopened.close()


# -- commit-confirm ---------------------------------------------------------------------------


def test_unconfirmed_commit_reverts_after_its_window(store: LabStore, driver: LabDriver) -> None:
    """A commit with confirm_within=0.2 and no confirm is rolled back on the next observe."""
    candidate = driver.stage(LEAF, PLAN)
    driver.commit(LEAF, candidate, confirm_within=0.2)
    assert driver.observe(LEAF)["bgp/maximum_paths"] == 64
    time.sleep(0.25)
    assert driver.observe(LEAF) == START
    assert store.read_startup("leaf-1") == START
    assert store.counters()["reverts"] == 1
    with pytest.raises(ConfigRejected, match="awaiting confirmation"):
        driver.confirm(LEAF, candidate)


def test_confirmed_commit_sticks(store: LabStore, driver: LabDriver) -> None:
    """apply() with confirm_within confirms what it verified; the change survives the window."""
    assert driver.apply(LEAF, PLAN, dry_run=False, confirm_within=0.2).outcome is Outcome.applied
    time.sleep(0.25)
    assert driver.observe(LEAF)["bgp/maximum_paths"] == 64
    assert "reverts" not in store.counters()


def test_lost_controller_is_rolled_back(store: LabStore, driver: LabDriver) -> None:
    """timeout_after_write under commit-confirm: written, never confirmed, reverted by itself."""
    fault(store, FaultKind.timeout_after_write, count=1)
    with pytest.raises(DeviceTimeout):
        driver.apply(LEAF, PLAN, dry_run=False, confirm_within=0.2)
    assert driver.observe(LEAF)["bgp/maximum_paths"] == 64
    time.sleep(0.25)
    assert driver.observe(LEAF) == START


def test_two_unconfirmed_commits_revert_to_the_oldest_state(driver: LabDriver) -> None:
    """A second unconfirmed commit keeps the first before-values, and adds new paths."""
    driver.commit(LEAF, driver.stage(LEAF, PLAN), confirm_within=0.2)
    second = [Change("bgp/maximum_paths", 64, 128), Change("bgp/new", None, 1)]
    driver.commit(LEAF, driver.stage(LEAF, second), confirm_within=0.2)
    time.sleep(0.25)
    assert driver.observe(LEAF) == START


# -- the initial lab state ----------------------------------------------------------------------


def _differences(fleet: Fleet, states: dict[str, dict[str, Scalar]]) -> dict[str, list[str]]:
    """What a plan would change on each device (paths its platform cannot express are
    never planned)."""
    desired = render_desired(fleet)
    return {
        name: [
            c.path
            for c in diff(desired[name], states[name])
            if inexpressible(fleet.devices[name].platform.value, c.path, states[name]) is None
        ]
        for name in desired
    }


def test_lab_switches_hold_only_what_their_platform_expresses(orion_fleet: Fleet) -> None:
    """EOS has no PFC headroom or pause-threshold command, SONiC no static pause
    threshold: the lab's switches do not hold them either."""
    states = initial_lab_states(orion_fleet, seed=3)
    assert "qos/pfc_headroom_kb" not in states["leaf-r0"]
    assert "qos/pfc_xoff_kb" not in states["leaf-r0"]
    assert "qos/pfc_xoff_kb" not in states["leaf-r1"]
    # An SN5600 (Spectrum-4) takes ECN and headroom through config apply-patch:
    assert states["leaf-r1"]["qos/pfc_headroom_kb"] == 128
    assert states["leaf-r1"]["qos/ecn/3/kmin_kb"] == 200


def _is_firmware(path: str) -> bool:
    return path.startswith("firmware/") or path == "system/nos_version"


def test_initial_state_runs_older_firmware_everywhere(orion_fleet: Fleet) -> None:
    """Every ORION device runs its other validated bundle (hx8-2026.06, eos-4.31.2F...)."""
    states = initial_lab_states(orion_fleet, seed=1)
    for name, paths in _differences(orion_fleet, states).items():
        assert any(_is_firmware(p) for p in paths), f"{name}: firmware matches intent"
    assert states["gpu-n01"]["firmware/gpu_driver"] == "550.90.07"
    assert states["leaf-r0"]["system/nos_version"] == "4.31.2F"
    assert states["leaf-r1"]["system/nos_version"] == "202405"


@pytest.mark.parametrize("drift", [0, 1, 6, 20])
def test_initial_state_has_exactly_drift_other_differences(orion_fleet: Fleet, drift: int) -> None:
    """Besides firmware, exactly ``drift`` fields differ from desired."""
    states = initial_lab_states(orion_fleet, seed=42, drift=drift)
    others = [
        p
        for paths in _differences(orion_fleet, states).values()
        for p in paths
        if not _is_firmware(p)
    ]
    assert len(others) == drift


def test_initial_state_has_unmanaged_fields(orion_fleet: Fleet) -> None:
    """Hostname and serial everywhere, kernel on hosts, descriptions and LLDP neighbours
    on switch ports."""
    states = initial_lab_states(orion_fleet)
    for name, state in states.items():
        assert state["system/hostname"] == name and str(state["system/serial"]).startswith("SN")
    assert "system/kernel" in states["gpu-n01"]
    assert states["leaf-r0"]["interfaces/Ethernet1/description"] == "gpu-n01 eth0"
    desired = render_desired(orion_fleet)
    for name in desired:
        assert not any(is_unmanaged(p) for p in desired[name]), "render must not own these"
    assert states["leaf-r0"]["lldp/Ethernet1/system"] == "gpu-n01"
    assert states["leaf-r1"]["system/model"] == "ACS-SN5600"
    assert (states["leaf-r1"]["system/bgp_config"], states["leaf-r1"]["system/buffer_model"]) == (
        "frrcfgd",
        "static",
    )
    assert "system/bgp_config" not in states["leaf-r0"]
    assert len(UNMANAGED_PATTERNS) == 8


def test_initial_state_is_deterministic(orion_fleet: Fleet) -> None:
    """The same seed gives the same lab; another seed drifts other fields."""
    assert initial_lab_states(orion_fleet, seed=9) == initial_lab_states(orion_fleet, seed=9)
    assert initial_lab_states(orion_fleet, seed=9) != initial_lab_states(orion_fleet, seed=10)


def test_initial_state_without_drift_or_old_firmware_is_desired(orion_fleet: Fleet) -> None:
    """With older_firmware=False and drift=0 only the unmanaged fields are extra."""
    states = initial_lab_states(orion_fleet, drift=0, older_firmware=False)
    assert all(paths == [] for paths in _differences(orion_fleet, states).values())


def test_lab_lives_in_the_fleet_state_dir(orion: FleetCopy) -> None:
    """The lab database is <repo>/<state_dir>/lab.db."""
    fleet = orion.load()
    path = lab_db_path(fleet)
    assert path == orion.path.resolve() / ".plumb" / "lab.db"
    store = LabStore(path)
    create_lab(store, fleet, seed=3)
    assert store.exists() and len(store.device_names()) == len(fleet.devices)
    store.close()


# -- snapshots --------------------------------------------------------------------------------


def test_snapshot_round_trips() -> None:
    """states_from_snapshot reads what snapshot_document writes, through JSON text."""
    states: dict[str, dict[str, Scalar]] = {"a": {"x": 1, "y": "s", "z": None, "b": True}}
    document = snapshot_document("orion", states, datetime(2026, 12, 1, tzinfo=UTC))
    assert states_from_snapshot(json.loads(json.dumps(document))) == states


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "expected an object"),
        ({"schema": "plumb.snapshot/v2"}, "schema is 'plumb.snapshot/v2'"),
        (
            {"schema": "plumb.snapshot/v1", "taken_at": "2026-12-01T00:00:00Z", "devices": {}},
            "fleet: expected a string, got nothing",
        ),
        (
            {"schema": "plumb.snapshot/v1", "fleet": "f", "taken_at": "yesterday", "devices": {}},
            "not an ISO 8601",
        ),
        (
            {"schema": "plumb.snapshot/v1", "fleet": "f", "taken_at": "2026-12-01", "devices": []},
            "devices: expected an object, got list",
        ),
        (
            {
                "schema": "plumb.snapshot/v1",
                "fleet": "f",
                "taken_at": "2026-12-01",
                "devices": {"a": {"config": {}}},
            },
            "devices.a.state: expected an object",
        ),
        (
            {
                "schema": "plumb.snapshot/v1",
                "fleet": "f",
                "taken_at": "2026-12-01",
                "devices": {"a": {"state": {"p": [1]}}},
            },
            "devices.a.state.p: list is not a scalar",
        ),
    ],
)
def test_bad_snapshot_is_a_clear_error(document: object, message: str) -> None:
    """A wrong schema id or shape is a ValueError naming the offending key."""
    with pytest.raises(ValueError, match=re.escape(message)):
        states_from_snapshot(document)


# -- concurrency and scale -------------------------------------------------------------------


def test_sixteen_threads_observe_one_store(orion_fleet: Fleet, tmp_path: Path) -> None:
    """Concurrent observes from a 16-thread pool all see the stored state."""
    store = LabStore(tmp_path / "lab.db")
    create_lab(store, orion_fleet)
    driver, refs, expected = LabDriver(store), lab_refs(store), store.read_all_running()
    with ThreadPoolExecutor(16) as pool:
        seen = list(pool.map(lambda ref: (ref.name, driver.observe(ref)), refs * 4))
    assert all(state == expected[name] for name, state in seen)
    store.close()


def test_sixteen_threads_apply_to_different_devices(tmp_path: Path) -> None:
    """Parallel commits to 64 devices all land and are all counted."""
    store = LabStore(tmp_path / "lab.db")
    names = [f"leaf-{i}" for i in range(64)]
    store.create([(n, "eos", "leaf") for n in names], {n: dict(START) for n in names})
    driver = LabDriver(store)
    refs = [DeviceRef(name=n, platform="eos", role="leaf", host="lab") for n in names]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda r: driver.apply(r, PLAN, dry_run=False), refs))
    assert {r.outcome for r in results} == {Outcome.applied}
    assert store.write_count() == 64
    assert all(s["bgp/maximum_paths"] == 64 for s in store.read_all_running().values())
    store.close()


def test_observe_all_reads_in_bulk_and_reports_faults(store: LabStore, driver: LabDriver) -> None:
    """Faulty devices come back as their error; the rest from the one bulk read."""
    fault(store, FaultKind.unreachable, device="node-1")
    result = driver.observe_many([LEAF, NODE])
    assert result["leaf-1"] == START
    assert isinstance(result["node-1"], DeviceUnreachable)


def test_bulk_read_of_a_4096_node_lab_is_fast(tmp_path: Path) -> None:
    """read_all_running returns ~184,000 fields of 4,096 devices in well under seconds."""
    store = LabStore(tmp_path / "big.db")
    names = [f"gpu-{i:04d}" for i in range(4096)]
    state: dict[str, Scalar] = {
        f"nics/eth{j}/{f}": 9000
        for j in range(8)
        for f in ("mtu", "rdma_mtu", "pfc_priorities", "address")
    }
    state.update({f"firmware/c{k}": "1.2.3" for k in range(11)} | {"system/kernel": "6.8"})
    store.create([(n, "linux", "gpu-node") for n in names], {n: state for n in names})
    started = time.perf_counter()
    everything = store.read_all_running()
    took = time.perf_counter() - started
    assert len(everything) == 4096 and sum(map(len, everything.values())) == 4096 * 44
    assert took < 5.0, f"read_all_running took {took:.2f} s"
    store.close()


def test_every_orion_switch_in_the_lab_holds_its_ecn_thresholds(
    orion_fleet: Fleet, tmp_path: Path
) -> None:
    """The lab's EOS and SONiC switches take the RoCE queue's ECN thresholds: an ECN
    change reaches all 12 backend switches, none is left out as inexpressible."""
    store = LabStore(tmp_path / "lab.db")
    create_lab(store, orion_fleet, drift=0, older_firmware=False)
    running = store.read_all_running()
    switches = [n for n, d in orion_fleet.devices.items() if d.role.value in ("leaf", "spine")]
    assert len(switches) == 12
    assert all("qos/ecn/3/kmin_kb" in running[name] for name in switches)
    store.close()


def test_devices_of_one_shape_share_its_stored_paths(tmp_path: Path) -> None:
    """Devices with the same setting paths store them once (one shape) and read back
    with the very same path strings; a commit that adds a path gives its device a new
    shape, the others keep theirs."""
    lab = LabStore(tmp_path / "lab.db")
    try:
        lab.create(
            [("leaf-1", "eos", "leaf"), ("leaf-2", "eos", "leaf"), ("node-1", "linux", "gpu-node")],
            {
                "leaf-1": {"bgp/asn": 65001, "system/hostname": "leaf-1"},
                "leaf-2": {"bgp/asn": 65002, "system/hostname": "leaf-2"},
                "node-1": {"nics/eth0/mtu": 9000},
            },
        )
        running = lab.read_all_running()
        assert [p is q for p, q in zip(running["leaf-1"], running["leaf-2"], strict=True)] == [
            True,
            True,
        ]
        lab.commit("leaf-2", {"bgp/maximum_paths": 64}, save=False)
        assert lab.read_running("leaf-1") == {"bgp/asn": 65001, "system/hostname": "leaf-1"}
        assert lab.read_running("leaf-2") == {
            "bgp/asn": 65002,
            "system/hostname": "leaf-2",
            "bgp/maximum_paths": 64,
        }
        assert lab.read_startup("leaf-2") == {"bgp/asn": 65002, "system/hostname": "leaf-2"}
    finally:
        lab.close()
    with sqlite3.connect(tmp_path / "lab.db") as conn:
        assert conn.execute("SELECT count(*) FROM shapes").fetchone() == (3,)
    conn.close()
