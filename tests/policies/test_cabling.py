"""cabling.lldp-mismatch on ORION against lab snapshots: a clean wire passes; a swapped,
missing, moved or extra neighbour is a deny at the cable's (or device's) file:line; the
policy runs only when observed states are given."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from intent.fleet import Fleet
from inventory.index import Endpoint
from lab.driver import LabDriver, create_lab, lab_refs, miscable
from lab.fleet import lab_db_path
from lab.store import LabStore
from policies.builtin.cabling import heard_on
from policies.engine import (
    BUILTIN,
    OBSERVED,
    Finding,
    ObservedStates,
    PolicyReport,
    Registry,
    evaluate,
    observed_policy,
    registering_into,
)
from reconciler.settings import Scalar
from tests.fleetcopy import FleetCopy, copy_orion
from tests.policies.support import assert_denied, at, flagged, places, primary

TODAY = date(2026, 12, 1)
POLICY = "cabling.lldp-mismatch"
LINKS = "inventory/links/backend.yaml"
States = dict[str, dict[str, Scalar]]


@pytest.fixture(scope="module")
def orion(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    return copy_orion(tmp_path_factory.mktemp("cabling"))


@pytest.fixture(scope="module")
def fleet(orion: FleetCopy) -> Fleet:
    return orion.load()


@pytest.fixture
def store(fleet: Fleet) -> Iterator[LabStore]:
    lab = LabStore(lab_db_path(fleet))
    create_lab(lab, fleet, seed=0)
    yield lab
    lab.close()


def snapshot(store: LabStore) -> States:
    """What ``plumb snapshot`` records of the lab: every device's observed state."""
    observed = LabDriver(store).observe_many(lab_refs(store))
    return {name: state for name, state in observed.items() if isinstance(state, dict)}


def check(fleet: Fleet, states: ObservedStates) -> PolicyReport:
    return evaluate(fleet, list(OBSERVED), today=TODAY, observed=states)


def test_clean_lab_wire_has_no_finding(fleet: Fleet, store: LabStore) -> None:
    """A lab whose switches hear exactly their inventory cables passes."""
    report = check(fleet, snapshot(store))
    assert [p.id for p in report.policies] == [POLICY]
    assert report.violations == () and report.errors == ()


def test_swapped_host_cables_are_found_at_both_cable_lines(
    orion: FleetCopy, fleet: Fleet, store: LabStore
) -> None:
    """Two host cables swapped on a leaf: each port is a deny at its own cable's line, and
    points at the cable of the neighbour it hears instead."""
    miscable(store, Endpoint("leaf-r0", "Ethernet1"), Endpoint("leaf-r0", "Ethernet2"))
    found = {v.subject: v for v in flagged(check(fleet, snapshot(store)), POLICY)}
    assert_denied(list(found.values()))
    assert set(found) == {"leaf-r0:Ethernet1", "leaf-r0:Ethernet2"}
    first = at(orion, LINKS, "{a: gpu-n01, a_port: eth0,")
    second = at(orion, LINKS, "{a: gpu-n02, a_port: eth0,")
    assert places(found["leaf-r0:Ethernet1"]) == [first, second]
    assert places(found["leaf-r0:Ethernet2"]) == [second, first]
    assert found["leaf-r0:Ethernet1"].message == (
        "leaf-r0:Ethernet1 is cabled to gpu-n01:eth0 in inventory, but LLDP sees gpu-n02 eth0"
    )


def test_swapped_spine_uplinks_are_found_on_leaf_and_spine(
    orion: FleetCopy, fleet: Fleet, store: LabStore
) -> None:
    """Two leaf-spine cables swapped: both leaf ports and both spine ports are denies."""
    miscable(store, Endpoint("leaf-r0", "Ethernet33"), Endpoint("leaf-r0", "Ethernet41"))
    found = {v.subject: v for v in flagged(check(fleet, snapshot(store)), POLICY)}
    assert set(found) == {
        "leaf-r0:Ethernet33",
        "leaf-r0:Ethernet41",
        "spine-1:Ethernet1",
        "spine-2:Ethernet1",
    }
    spine_one = at(orion, LINKS, "a_port: Ethernet33, b: spine-1, b_port: Ethernet1,")
    assert primary(found["leaf-r0:Ethernet33"]) == spine_one
    assert primary(found["spine-1:Ethernet1"]) == spine_one


def _without(states: States, device: str, port: str) -> States:
    out = {name: dict(state) for name, state in states.items()}
    del out[device][f"lldp/{port}/system"], out[device][f"lldp/{port}/port"]
    return out


def test_cabled_port_hearing_nobody_is_a_deny(
    orion: FleetCopy, fleet: Fleet, store: LabStore
) -> None:
    """A cabled port with no neighbour is reported at its cable's line."""
    states = _without(snapshot(store), "leaf-r3", "Ethernet5")
    violation = flagged(check(fleet, states), POLICY)
    assert [v.subject for v in violation] == ["leaf-r3:Ethernet5"]
    assert violation[0].message.endswith("but LLDP sees no neighbour")
    assert primary(violation[0]) == at(orion, LINKS, "{a: gpu-n05, a_port: eth3,")


def test_neighbour_on_another_port_of_the_right_device_says_so(
    fleet: Fleet, store: LabStore
) -> None:
    """The right neighbour on the wrong port is reported as such."""
    states = snapshot(store)
    states["leaf-r0"]["lldp/Ethernet33/port"] = "Ethernet9"
    (violation,) = flagged(check(fleet, states), POLICY)
    assert violation.message == (
        "leaf-r0:Ethernet33 is cabled to spine-1:Ethernet1 in inventory, "
        "but LLDP sees spine-1 on Ethernet9"
    )


def test_neighbour_on_uncabled_port_is_found_at_the_device(
    orion: FleetCopy, fleet: Fleet, store: LabStore
) -> None:
    """A neighbour on a port inventory has no cable for is a deny at the device's line;
    management ports are out of scope."""
    states = snapshot(store)
    states["leaf-r2"]["lldp/Ethernet99/system"] = "gpu-n09.example.net"
    states["leaf-r2"]["lldp/Ethernet99/port"] = "eth2"
    states["leaf-r2"]["lldp/Management1/system"] = "oob-sw-1"
    states["leaf-r2"]["lldp/Management1/port"] = "Ethernet12"
    (violation,) = flagged(check(fleet, states), POLICY)
    assert violation.subject == "leaf-r2:Ethernet99"
    assert primary(violation) == at(orion, "inventory/devices/leaves.yaml", "name: leaf-r2")
    # the neighbour's own cable is where the other end of this wire is declared
    assert places(violation)[1] == at(orion, LINKS, "{a: gpu-n09, a_port: eth2,")


def test_a_sonic_neighbours_port_alias_stands_for_its_port(
    fleet: Fleet, store: LabStore
) -> None:
    """SONiC's LLDP agent advertises a port's alias: leaf-r0:Ethernet34 hears spine-1 on
    ``etp2``; with spine-1 observed to call Ethernet2 ``etp2`` that is the inventory
    cable, and an alias naming another port is still caught."""
    states = snapshot(store)
    assert states["leaf-r0"]["lldp/Ethernet34/port"] == "Ethernet2"
    states["leaf-r0"]["lldp/Ethernet34/port"] = "etp2"
    states["spine-1"]["interfaces/Ethernet2/alias"] = "etp2"
    states["spine-1"]["interfaces/Ethernet3/alias"] = "etp3"
    assert flagged(check(fleet, states), POLICY) == []
    states["leaf-r0"]["lldp/Ethernet34/port"] = "etp3"
    (violation,) = flagged(check(fleet, states), POLICY)
    assert violation.message.endswith("but LLDP sees spine-1 on Ethernet3")
    del states["spine-1"]["interfaces/Ethernet3/alias"]
    (violation,) = flagged(check(fleet, states), POLICY)
    assert violation.message.endswith("but LLDP sees spine-1 on etp3")


def test_fqdn_and_host_mac_port_ids_match(fleet: Fleet, store: LabStore) -> None:
    """An FQDN system name matches on its first label; a host reporting a MAC matches on
    the system name alone."""
    states = snapshot(store)
    states["leaf-r0"]["lldp/Ethernet1/system"] = "GPU-N01.example.net"
    states["leaf-r0"]["lldp/Ethernet2/port"] = "b8:3f:d2:03:1a:14"
    states["leaf-r0"]["lldp/Ethernet33/system"] = "spine-1.example.net"
    assert flagged(check(fleet, states), POLICY) == []


def test_switch_reporting_no_lldp_at_all_is_one_finding(fleet: Fleet, store: LabStore) -> None:
    """A switch with no LLDP data yields one finding at the device, not one per cable."""
    states = snapshot(store)
    states["spine-3"] = {k: v for k, v in states["spine-3"].items() if not k.startswith("lldp/")}
    (violation,) = flagged(check(fleet, states), POLICY)
    assert violation.subject == "spine-3"
    assert "no LLDP neighbour on any of its" in violation.message


def test_devices_missing_from_the_snapshot_are_not_judged(fleet: Fleet, store: LabStore) -> None:
    """A device the snapshot did not observe is left out, never reported as miscabled."""
    states = snapshot(store)
    del states["leaf-r0"]
    assert flagged(check(fleet, states), POLICY) == []


def test_policy_is_skipped_without_observed_state(fleet: Fleet) -> None:
    """Without observed states the observed policies do not run and are not listed."""
    report = evaluate(fleet, [*BUILTIN, *OBSERVED], today=TODAY)
    assert POLICY not in {p.id for p in report.policies}
    assert POLICY not in {p.id for p in BUILTIN}
    assert len(report.policies) == len(BUILTIN)


def test_heard_on_reads_ports_with_slashes() -> None:
    """Port names with slashes come back whole from the flat paths."""
    state: dict[str, Scalar] = {
        "lldp/Ethernet33/1/system": "spine-1",
        "lldp/Ethernet33/1/port": "Ethernet1/1",
        "interfaces/Ethernet33/1/mtu": 9216,
    }
    heard = heard_on(state)
    assert heard is not None and set(heard) == {"Ethernet33/1"}
    assert heard["Ethernet33/1"].port == "Ethernet1/1"
    assert heard_on({"interfaces/Ethernet1/mtu": 9216}) is None


def test_observed_policy_registers_into_an_active_registry(fleet: Fleet) -> None:
    """A repo's observed policy registers where ``registering_into`` says and sees the states."""
    registry = Registry()
    with registering_into(registry):

        @observed_policy("repo.seen", title="t", rationale="r", remediation="m")
        def seen(fleet: Fleet, observed: ObservedStates) -> Iterator[Finding]:
            for name in observed:
                yield Finding(name, f"{name} observed")

    report = evaluate(fleet, list(registry), today=TODAY, observed={"leaf-r0": {}})
    assert [v.subject for v in report.violations] == ["leaf-r0"]
    assert evaluate(fleet, list(registry), today=TODAY).policies == ()


def test_raising_observed_policy_is_an_engine_error(fleet: Fleet, tmp_path: Path) -> None:
    """An observed policy that raises is an engine error (exit 2), never a pass."""
    registry = Registry()
    with registering_into(registry):

        @observed_policy("repo.broken", title="t", rationale="r", remediation="m")
        def broken(fleet: Fleet, observed: ObservedStates) -> Iterator[Finding]:
            raise RuntimeError("no wire")

    report = evaluate(fleet, list(registry), today=TODAY, observed={})
    assert report.exit_code() == 2
