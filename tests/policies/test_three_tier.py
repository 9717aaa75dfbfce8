"""A three-tier fabric (super-spines over pods of spines and leaves): the correct design
validates clean and reconciles in one pass; the broken ones are refused at their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.render import render_device
from tests.fleetcopy import FleetCopy
from tests.policies.support import assert_denied, at, flagged, only, places, primary, subjects
from tests.reconciler.labfleet import LabFleet
from tests.threetier import POD_SPINE_ASNS, SUPER_SPINE_ASN, leaves, make_three_tier, spines

BGP_FILE = "intent/bgp.yaml"
LINKS_FILE = "inventory/links.yaml"


@pytest.fixture
def tri(tmp_path: Path) -> FleetCopy:
    return make_three_tier(tmp_path / "tri")


def test_a_correct_three_tier_fabric_validates_clean(tri: FleetCopy) -> None:
    """Per-pod spine ASNs, a super-spine ASN of their own, unique leaves: no finding."""
    report = tri.evaluate()
    assert report.violations == ()
    assert report.errors == ()


def test_spines_resolve_their_pods_asn_and_super_spines_theirs(tri: FleetCopy) -> None:
    fleet = tri.load()
    for pod, asn in POD_SPINE_ASNS.items():
        for spine in spines(pod):
            owned = fleet.intent[spine].get("bgp", "asn")
            assert owned is not None and owned.value == asn
    owned = fleet.intent["ss-1"].get("bgp", "asn")
    assert owned is not None and owned.value == SUPER_SPINE_ASN


def test_super_spines_get_sessions_to_every_spine(tri: FleetCopy) -> None:
    """A super-spine renders BGP: its AS and one neighbour per spine, with that pod's AS."""
    fleet = tri.load()
    desired = render_device(fleet, "ss-1")
    assert desired["bgp/asn"].value == SUPER_SPINE_ASN
    remote = {p: o.value for p, o in desired.items() if p.endswith("/remote_as")}
    assert sorted(remote.values()) == [64600, 64600, 64700, 64700]
    spine = render_device(fleet, "spine-p1-1")
    assert (
        sorted(o.value for p, o in spine.items() if p.endswith("/remote_as")).count(SUPER_SPINE_ASN)
        == 2
    )


def test_one_spine_asn_for_every_pod_is_refused(tri: FleetCopy) -> None:
    """One ASN on the spines of both pods: a route from pod p1 reaches pod p2 through a
    super-spine carrying p2's own ASN and is dropped. Flagged once, at the pods' lines."""
    tri.replace(BGP_FILE, "    p2: 64700\n", "    p2: 64600\n")
    violation = only(tri.evaluate(), "bgp.spine-asn-shared")
    assert_denied([violation])
    assert violation.subject == "pod p2"
    assert violation.message.startswith(
        "the spines of pod p2 and of pod p1 share ASN 64600: routes between the pods"
    )
    assert primary(violation) == at(tri, BGP_FILE, "p2: 64600")
    assert at(tri, BGP_FILE, "p1: 64600") in places(violation)


def test_one_spine_in_a_pod_with_its_own_asn_is_flagged(tri: FleetCopy) -> None:
    tri.set_device_overrides("  spine-p1-2:\n    bgp: {asn: 64650}\n")
    violation = only(tri.evaluate(), "bgp.spine-asn-shared")
    assert violation.message == "spine spine-p1-2 has ASN 64650, the other spines of pod p1 64600"


def test_a_super_spine_sharing_a_pods_asn_is_flagged(tri: FleetCopy) -> None:
    tri.replace(BGP_FILE, f"super_spine_asn: {SUPER_SPINE_ASN}", "super_spine_asn: 64700")
    report = tri.evaluate()
    found = flagged(report, "bgp.super-spine-asn")
    assert_denied(found)
    assert subjects(report, "bgp.super-spine-asn") == set(spines("p2"))
    assert all(v.message.endswith("uses the super-spine ASN 64700") for v in found)


def test_a_leaf_with_the_super_spine_asn_is_flagged(tri: FleetCopy) -> None:
    tri.replace(BGP_FILE, "leaf-p1-1: 64601", f"leaf-p1-1: {SUPER_SPINE_ASN}")
    report = tri.evaluate()
    assert "leaf-p1-1" in subjects(report, "bgp.leaf-asn-unique")
    assert "leaf-p1-1" in subjects(report, "bgp.super-spine-asn")


def test_a_leaf_cabled_to_another_pods_spine_is_flagged(tri: FleetCopy) -> None:
    """leaf-p1-1's first uplink moved to a spine of pod p2 (a free port there)."""
    tri.replace(
        LINKS_FILE,
        "{a: leaf-p1-1, a_port: Ethernet33, b: spine-p1-1, b_port: Ethernet1,",
        "{a: leaf-p1-1, a_port: Ethernet33, b: spine-p2-1, b_port: Ethernet30,",
    )
    violation = only(tri.evaluate(), "cabling.same-pod")
    assert_denied([violation])
    assert violation.message == (
        "leaf-p1-1:Ethernet33 (pod p1) is cabled to spine-p2-1:Ethernet30 (pod p2): "
        "a leaf-spine cable stays inside its pod"
    )
    assert primary(violation) == at(tri, LINKS_FILE, "b: spine-p2-1, b_port: Ethernet30")


def test_spine_maximum_paths_counts_its_super_spine_uplinks(tri: FleetCopy) -> None:
    """A spine reaches the other pod over both super-spine uplinks and a leaf over its two
    cables: maximum-paths 1 on spine-p2-2 is short of 2."""
    tri.set_device_overrides("  spine-p2-2:\n    bgp: {maximum_paths: 1}\n")
    violation = only(tri.evaluate(), "bgp.maximum-paths")
    assert violation.message == "spine-p2-2: maximum-paths 1 < 2 equal-cost paths"


def test_super_spine_maximum_paths_counts_the_links_into_one_pod(tri: FleetCopy) -> None:
    """ss-1 reaches each pod over its links to that pod's two spines."""
    tri.set_device_overrides("  ss-1:\n    bgp: {maximum_paths: 1}\n")
    violation = only(tri.evaluate(), "bgp.maximum-paths")
    assert violation.message == "ss-1: maximum-paths 1 < 2 equal-cost paths"


def test_a_spine_superspine_cable_on_a_leaf_is_the_wrong_class(tri: FleetCopy) -> None:
    tri.replace(
        LINKS_FILE,
        "{a: leaf-p1-1, a_port: Ethernet33, b: spine-p1-1, b_port: Ethernet1, class: leaf-spine",
        "{a: leaf-p1-1, a_port: Ethernet33, b: spine-p1-1, b_port: Ethernet1, "
        "class: spine-superspine",
    )
    report = tri.evaluate()
    assert "leaf-p1-1:Ethernet33" in subjects(report, "cabling.class-fits-roles")


def test_leaves_are_unchanged_by_the_third_tier(tri: FleetCopy) -> None:
    """A leaf's sessions go to its pod's spines only, with that pod's AS."""
    fleet = tri.load()
    for pod, asn in POD_SPINE_ASNS.items():
        for leaf in leaves(pod):
            remote = [
                o.value for p, o in render_device(fleet, leaf).items() if p.endswith("/remote_as")
            ]
            assert remote == [asn] * 4


def test_the_lab_reconciles_a_three_tier_fabric_in_one_pass(tri: FleetCopy) -> None:
    """Drifted and on older firmware, the three-tier lab converges in one apply (super-spine
    sessions included) and a second plan is empty."""
    lab = LabFleet.create(tri, seed=3, drift=6)
    try:
        plan = lab.plan()
        assert plan.refused is None and plan.change_count() > 0
        assert "ss-1" in plan.changes()  # its NOS version differs from intent
        assert lab.apply(plan).ok()
        assert lab.plan().is_empty()
    finally:
        lab.close()


DEVICES_FILE = "inventory/devices.yaml"


def _repod(tri: FleetCopy, name: str, pod: str) -> None:
    """Give one device of the generated inventory another ``pod:``."""
    text = (tri.path / DEVICES_FILE).read_text()
    line = next(line for line in text.splitlines() if f"name: {name}," in line)
    before = line[line.index(", pod: ") :]
    tri.replace(DEVICES_FILE, line, line.replace(before, f", pod: {pod}}}"))


def test_a_leaf_in_an_unknown_pod_is_one_finding_at_its_line(tri: FleetCopy) -> None:
    """leaf-p1-1 names pod p3, which no spine is in: one finding at the leaf's line that
    says the pod is unknown, none on its four (correct) uplinks."""
    _repod(tri, "leaf-p1-1", "p3")
    violation = only(tri.evaluate(), "cabling.same-pod")
    assert_denied([violation])
    assert violation.subject == "leaf-p1-1"
    assert violation.message == (
        "leaf-p1-1: unknown pod p3: no spine is in it and bgp.pod_spine_asns does not name it "
        "(pods: p1, p2)"
    )
    assert primary(violation) == at(tri, DEVICES_FILE, "name: leaf-p1-1,")


def test_a_spine_in_an_unknown_pod_is_one_finding_at_its_line(tri: FleetCopy) -> None:
    """spine-p1-1 names pod p3: reported at the spine, not on the leaves' cables to it."""
    _repod(tri, "spine-p1-1", "p3")
    report = tri.evaluate()
    violation = only(report, "cabling.same-pod")
    assert violation.subject == "spine-p1-1"
    assert "unknown pod p3: no leaf is in it" in violation.message
    assert primary(violation) == at(tri, DEVICES_FILE, "name: spine-p1-1,")


def test_a_pod_named_by_pod_spine_asns_is_known(tri: FleetCopy) -> None:
    """Every leaf of pod p2 moved to a new pod p3 that bgp.pod_spine_asns names: the pod
    is known, so the cables to p2's spines are the finding (one per cable)."""
    tri.replace(BGP_FILE, "    p2: 64700\n", "    p2: 64700\n    p3: 64800\n")
    for leaf in leaves("p2"):
        _repod(tri, leaf, "p3")
    found = flagged(tri.evaluate(), "cabling.same-pod")
    assert len(found) == 8
    assert all("is cabled to spine-p2-" in v.message for v in found)
