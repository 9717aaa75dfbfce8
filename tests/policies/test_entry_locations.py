"""Findings point at the value they are about: one entry of a list (an ECN queue, a DSCP
map entry) at its own line, not at the list's first; the plan owns each entry the same."""

from __future__ import annotations

from tests.fleetcopy import FleetCopy
from tests.policies.support import at, flagged, primary

QOS_FILE = "intent/qos.yaml"


class TestEntryLocations:
    def test_a_finding_about_one_ecn_queue_points_at_that_queue(self, orion: FleetCopy) -> None:
        """Of two ECN queues the second has kmin == kmax: every finding is at its line,
        not at the list's first entry."""
        orion.replace(
            QOS_FILE,
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}\n"
            "    - {priority: 0, kmin_kb: 900, kmax_kb: 900, pmax_percent: 5}",
        )
        found = flagged(orion.evaluate(), "qos.ecn-order")
        assert found and all(
            v.message.endswith("queue 0: kmin 900 KB >= kmax 900 KB") for v in found
        )
        assert {primary(v) for v in found} == {at(orion, QOS_FILE, "- {priority: 0, kmin_kb: 900")}

    def test_a_cnp_dscp_mapped_wrong_points_at_its_entry(self, orion: FleetCopy) -> None:
        """CNPs marked 46, which the map's third entry sends to 5: the finding is at that
        entry, not at the map's first."""
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  cnp_dscp: 46")
        orion.replace(
            QOS_FILE,
            "    - {dscp: 48, priority: 6}",
            "    - {dscp: 48, priority: 6}\n    - {dscp: 46, priority: 5}",
        )
        found = flagged(orion.evaluate(), "qos.dscp-roce-mapped")
        assert found and all("hosts mark CNP traffic DSCP 46" in v.message for v in found)
        assert {primary(v) for v in found} == {at(orion, QOS_FILE, "- {dscp: 46, priority: 5}")}

    def test_render_owns_each_dscp_and_ecn_value_at_its_entry(self, orion: FleetCopy) -> None:
        """The plan's owner of qos/dscp/48 is the 48 entry's line, not the map's first."""
        from reconciler.render import render_device

        fleet = orion.load()
        desired = render_device(fleet, "leaf-r0")
        origin = desired["qos/dscp/48"].owner
        assert (origin.file, origin.line) == at(orion, QOS_FILE, "- {dscp: 48, priority: 6}")
        origin = desired["qos/ecn/3/kmin_kb"].owner
        assert (origin.file, origin.line) == at(orion, QOS_FILE, "- {priority: 3, kmin_kb: 200")
