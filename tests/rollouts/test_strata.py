"""Strata: the components a change touches, and the stratum key of every target."""

from __future__ import annotations

import pytest

from reconciler.settings import Change
from rollouts.strata import UNCHANGED, carried, component_of, stratify, touched_components
from tests.rollouts.fleets import firmware, orion_like


@pytest.mark.parametrize(
    ("path", "component"),
    [
        ("firmware/nic_firmware", "nic_firmware"),
        ("firmware/bios", "bios"),
        ("system/nos_version", "nos"),
        ("interfaces/Ethernet12/mtu", "mtu"),
        ("nics/eth3/mtu", "mtu"),
        ("nics/eth3/rdma_mtu", "rdma_mtu"),
        ("interfaces/Ethernet1/pfc_priorities", "pfc"),
        ("qos/ecn/3/kmin_kb", "ecn"),
        ("qos/dscp/26", "dscp_map"),
        ("bgp/neighbors/10.0.0.1/remote_as", "bgp_neighbors"),
        ("bgp/maximum_paths", "bgp"),
    ],
)
def test_component_of_a_setting_path(path: str, component: str) -> None:
    """Each setting path belongs to one named component."""
    assert component_of(path) == component


def test_touched_components_span_every_target() -> None:
    """The components of a change are the union over its targets, sorted."""
    changes = {
        "a": (Change("firmware/nic_firmware", "1", "2"), Change("nics/eth0/mtu", 1500, 9000)),
        "b": (Change("firmware/bios", "1", "2"),),
    }
    assert touched_components(changes) == ("bios", "mtu", "nic_firmware")


def test_carried_keeps_only_the_rollout_paths() -> None:
    """targets.paths globs pick the changes a rollout carries; none means all."""
    changes = (Change("firmware/bios", "1", "2"), Change("nics/eth0/mtu", 1500, 9000))
    assert carried(changes, ["firmware/*"]) == changes[:1]
    assert carried(changes, []) == changes


def test_current_versions_and_extra_attributes_split_strata() -> None:
    """Targets on different current NIC firmware, or different NIC revisions, are
    different strata; the other attributes of ORION's nodes are shared."""
    fleet = orion_like()
    changes = {n: firmware("1" if n < "n09" else "2") for n in fleet.devices}
    strata = stratify(fleet, changes, ["label.nic_revision"])
    keys = [dict(s.key) for s in strata.strata]
    assert [
        (k["nic_firmware"], k["label.nic_revision"], len(s.members))
        for k, s in zip(keys, strata.strata, strict=True)
    ] == [
        ("1", "A1", 8),
        ("2", "A1", 20),
        ("2", "B0", 4),
    ]
    assert strata.varying() == ("nic_firmware", "label.nic_revision")
    assert keys[0]["model"] == "HX8" and keys[0]["role"] == "gpu-node"
    assert strata.versioned == ("nic_firmware",)


def test_a_target_not_changing_a_component_is_its_own_kind() -> None:
    """A target whose change leaves a versioned component alone records it as unchanged."""
    fleet = orion_like()
    changes = {
        "n01": (Change("firmware/bios", "1", "2"),),
        "n02": (Change("firmware/bios", "1", "2"), Change("firmware/nic_firmware", "7", "8")),
    }
    strata = stratify(fleet, changes)
    assert [dict(s.key)["nic_firmware"] for s in strata.strata] == ["7", UNCHANGED]


def test_every_target_is_in_exactly_one_stratum() -> None:
    """The strata partition the targets."""
    fleet = orion_like()
    changes = {n: firmware(str(i % 3)) for i, n in enumerate(fleet.devices)}
    strata = stratify(fleet, changes, ["rack"])
    members = [m for s in strata.strata for m in s.members]
    assert sorted(members) == sorted(changes)
    assert strata.of("n05").id in {s.id for s in strata.strata}
