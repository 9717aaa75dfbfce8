"""Where the lossless class reaches: every link class a RoCE path crosses is lossless
(read from the cabling), every declared lossless priority is reached by a DSCP and the
RoCE DSCP lands on a lossless one."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from inventory.models import LinkClass
from tests.fleetcopy import FleetCopy
from tests.policies.support import assert_denied, at, flagged, only, places, primary
from tests.threetier import make_three_tier

PATH_POLICY = "qos.lossless-path-classes"
PRIORITY_POLICY = "qos.lossless-priority-reached"
QOS_FILE = "intent/qos.yaml"
GROUPS_FILE = "intent/groups.yaml"
BACKEND_FILE = "inventory/links/backend.yaml"
ORION_CLASSES = "lossless_link_classes: [host-leaf, leaf-spine]"
FABRIC = ("host-leaf", "leaf-spine", "spine-superspine")


def tri_with_qos(root: Path, classes: list[str]) -> FleetCopy:
    """The generated three-tier fleet with ORION's QoS profile, lossless on ``classes``."""
    tri = make_three_tier(root)
    qos = (Path(__file__).parents[2] / "examples/orion/intent/qos.yaml").read_text()
    tri.write(
        QOS_FILE, qos.replace(ORION_CLASSES, f"lossless_link_classes: [{', '.join(classes)}]")
    )
    return tri


class TestPathClasses:
    def test_orion_without_lossless_spine_links_is_flagged_once(self, orion: FleetCopy) -> None:
        """ORION lossless on host-leaf only: RoCE between rails crosses leaf-spine cables.
        One finding, at the lossless_link_classes line, naming the class and a cable."""
        orion.replace(QOS_FILE, ORION_CLASSES, "lossless_link_classes: [host-leaf]")
        violation = only(orion.evaluate(), PATH_POLICY)
        assert_denied([violation])
        assert violation.subject == "leaf-spine"
        assert violation.message.startswith(
            "qos.lossless_link_classes [host-leaf] leaves out leaf-spine, which the lossless "
            "RoCE path crosses (leaf-r0:Ethernet33 <-> spine-1:Ethernet1 and the cables of "
        )
        assert primary(violation) == at(orion, QOS_FILE, "lossless_link_classes: [host-leaf]")
        assert at(orion, BACKEND_FILE, "{a: leaf-r0, a_port: Ethernet33, b: spine-1,") in places(
            violation
        )
        assert set(violation.objects) == {f"leaf-r{r}" for r in range(8)} | {
            f"spine-{n}" for n in range(1, 5)
        }

    def test_a_group_leaving_a_class_out_is_flagged_at_the_group(self, orion: FleetCopy) -> None:
        """The spines' own value without leaf-spine: flagged at the group line, for the
        spines only (the leaves' fleet-wide value is right)."""
        orion.append(
            GROUPS_FILE,
            "  - name: spines-lossy\n    match: {roles: [spine]}\n"
            "    set: {qos: {lossless_link_classes: [host-leaf]}}\n",
        )
        violation = only(orion.evaluate(), PATH_POLICY)
        assert primary(violation) == at(orion, GROUPS_FILE, "lossless_link_classes: [host-leaf]")
        assert set(violation.objects) == {f"spine-{n}" for n in range(1, 5)}

    def test_a_third_tier_left_lossy_is_flagged(self, tmp_path: Path) -> None:
        """Two tiers' QoS on a three-tier fabric: the spine to super-spine cables are on
        the RoCE path between pods, and lossy."""
        tri = tri_with_qos(tmp_path / "tri", ["host-leaf", "leaf-spine"])
        violation = only(tri.evaluate(), PATH_POLICY)
        assert violation.message.startswith(
            "qos.lossless_link_classes [host-leaf, leaf-spine] leaves out spine-superspine, "
            "which the lossless RoCE path crosses (spine-p1-1:Ethernet33 <-> ss-1:Ethernet1 "
        )
        assert primary(violation) == at(tri, QOS_FILE, "lossless_link_classes:")

    @pytest.mark.parametrize(
        "declared",
        [list(c) for n in (1, 2, 3) for c in combinations(FABRIC, n)],
        ids=lambda c: "+".join(c),
    )
    def test_exactly_the_fabric_classes_left_out_are_flagged(
        self, tmp_path: Path, declared: list[str]
    ) -> None:
        """On the three-tier fabric (cabled on all three fabric classes, every device
        reached), every fabric class not declared lossless is flagged, and no other."""
        tri = tri_with_qos(tmp_path / "tri", declared)
        found = flagged(tri.evaluate(), PATH_POLICY)
        assert {v.subject for v in found} == set(FABRIC) - set(declared)
        assert all(v.message.startswith("qos.lossless_link_classes [") for v in found)

    def test_a_fabric_with_no_lossless_port_has_no_path(self, tmp_path: Path) -> None:
        """No device declares a lossless class: there is no lossless path to check."""
        tri = make_three_tier(tmp_path / "tri")
        assert flagged(tri.evaluate(), PATH_POLICY) == []

    def test_the_frontend_is_never_on_the_roce_path(self, orion: FleetCopy) -> None:
        """ORION's frontend cables stay lossy: the clean fleet is not flagged, and the
        frontend switches are not among the devices the path reaches."""
        from policies.builtin.lossless import on_lossless_path

        fleet = orion.load()
        reached = set(on_lossless_path(fleet))
        assert not any(fleet.devices[d].role.value == "frontend" for d in reached)
        assert flagged(orion.evaluate(), PATH_POLICY) == []
        cabled = {
            fleet.cabling.class_of(e) for d in reached for e in fleet.cabling.ends(d).values()
        }
        assert LinkClass.frontend in cabled  # the nodes have frontend NICs, left lossy


TWO_LOSSLESS = "roce_priority: 3\n  lossless_priorities: [3, 4]"


def two_lossless(orion: FleetCopy) -> None:
    """Lossless priorities 3 and 4 with PFC and ECN on both, and no DSCP for 4 (yet)."""
    orion.replace(QOS_FILE, "pfc_priorities: [3]", "pfc_priorities: [3, 4]")
    orion.replace(QOS_FILE, "roce_priority: 3", TWO_LOSSLESS)
    orion.replace(
        QOS_FILE,
        "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
        "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}\n"
        "    - {priority: 4, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
    )


class TestPriorityReached:
    def test_a_lossless_priority_no_dscp_reaches_is_flagged_at_its_entry(
        self, orion: FleetCopy
    ) -> None:
        """Priority 4 is declared lossless but the map sends no DSCP to it: flagged on
        every device of the lossless path, at the 4 of lossless_priorities."""
        two_lossless(orion)
        found = flagged(orion.evaluate(), PRIORITY_POLICY)
        assert_denied(found)
        assert len(found) == 44  # 32 nodes, 8 leaves, 4 spines
        assert {v.message.split(": ", 1)[1] for v in found} == {
            "lossless priority 4 is reached by no DSCP in qos.dscp_map: it pauses and holds "
            "headroom for traffic that never arrives"
        }
        line = (orion.path / QOS_FILE).read_text().splitlines()
        number = next(i for i, text in enumerate(line, 1) if "lossless_priorities:" in text)
        column = line[number - 1].index("4]") + 1
        assert {(v.location.file, v.location.line, v.location.col) for v in found} == {
            (QOS_FILE, number, column)
        }

    def test_a_dscp_for_the_second_class_clears_it(self, orion: FleetCopy) -> None:
        """Storage marked DSCP 10 into priority 4: both lossless priorities are reached."""
        two_lossless(orion)
        orion.replace(
            QOS_FILE,
            "    - {dscp: 48, priority: 6}",
            "    - {dscp: 48, priority: 6}\n    - {dscp: 10, priority: 4}",
        )
        assert flagged(orion.evaluate(), PRIORITY_POLICY) == []

    def test_roce_dscp_mapped_to_a_lossy_priority_is_flagged_at_that_entry(
        self, orion: FleetCopy
    ) -> None:
        """Hosts mark RoCE 48, which the map sends to the lossy CNP priority 6: flagged at
        the 48 entry of the map (not the map's first entry), with roce_dscp beside it."""
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  roce_dscp: 48")
        found = flagged(orion.evaluate(), PRIORITY_POLICY)
        assert_denied(found)
        assert {v.message.split(": ", 1)[1] for v in found} == {
            "hosts mark RoCE traffic DSCP 48, which the map sends to priority 6, not a "
            "lossless priority [3]: RoCE drops under congestion"
        }
        assert {primary(v) for v in found} == {at(orion, QOS_FILE, "- {dscp: 48, priority: 6}")}
        assert all(at(orion, QOS_FILE, "roce_dscp: 48") in places(v) for v in found)

    def test_roce_dscp_on_the_roce_priority_passes(self, orion: FleetCopy) -> None:
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  roce_dscp: 26")
        assert flagged(orion.evaluate(), PRIORITY_POLICY) == []
