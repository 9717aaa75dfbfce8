"""RoCEv2 lossless-class policies: PFC, DSCP map, ECN order and PFC headroom."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intent.fleet import Fleet
from policies.engine import PolicyReport, evaluate
from tests.fleetcopy import TODAY, FleetCopy, copy_orion
from tests.policies.support import (
    assert_denied,
    at,
    builtin,
    flagged,
    only,
    places,
    primary,
    subjects,
)

QOS_POLICIES = (
    "qos.pfc-exactly-roce",
    "qos.lossless-path-agrees",
    "qos.dscp-roce-mapped",
    "qos.ecn-order",
    "qos.headroom-port",
    "qos.headroom-buffer",
    "qos.lossless-path-classes",
    "qos.lossless-priority-reached",
)
QOS_FILE = "intent/qos.yaml"
DEVICES_FILE = "intent/devices.yaml"
GROUPS_FILE = "intent/groups.yaml"
BACKEND_FILE = "inventory/links/backend.yaml"
NODES = [f"gpu-n{n:02d}" for n in range(1, 33)]
LEAVES = [f"leaf-r{rail}" for rail in range(8)]
SPINES = [f"spine-{n}" for n in range(1, 5)]
SONIC_LEAVES = {"leaf-r1", "leaf-r3", "leaf-r5", "leaf-r7"}

# ORION's profile: the numbers the headroom formula takes from intent/qos.yaml and mtu.yaml.
PORT_MTU = 9214
LINE_RATE_GBPS = 400
RESPONSE_NS = 1500
PFC_FRAME = 64
FIBRE_M_PER_S = 200_000_000

N07_CABLE = "{a: gpu-n07, a_port: eth3, b: leaf-r3, b_port: Ethernet7, class: host-leaf, "
N07_LENGTH = "length_m: 3.0}"

TWO_LOSSLESS_GROUP = """\
  - name: sonic-two-lossless
    match: {models: [ACS-SN5600]}
    set:
      qos:
        pfc_priorities: [3, 4]
"""


def needed_bytes(length_m: str, mtu: int = PORT_MTU) -> Fraction:
    """headroom = 2*MTU + 2*r*L/v + r*t_resp + PFC frame, exactly, r in bytes/s."""
    rate = Fraction(LINE_RATE_GBPS * 10**9, 8)
    return (
        2 * mtu
        + 2 * rate * Fraction(length_m) / FIBRE_M_PER_S
        + rate * Fraction(RESPONSE_NS, 10**9)
        + PFC_FRAME
    )


def _cable_n07(orion: FleetCopy, length_m: str) -> None:
    orion.replace(BACKEND_FILE, N07_CABLE + N07_LENGTH, f"{N07_CABLE}length_m: {length_m}}}")


@pytest.mark.parametrize("policy_id", QOS_POLICIES)
def test_clean_orion_has_no_violation(clean_report: PolicyReport, policy_id: str) -> None:
    """The unchanged ORION fleet satisfies every QoS policy."""
    assert flagged(clean_report, policy_id) == []


class TestPfcExactlyRoce:
    def test_leaf_moving_roce_to_priority_4_is_flagged(self, orion: FleetCopy) -> None:
        """A leaf whose RoCE priority is 4 while PFC stays on 3 is flagged, and only that leaf."""
        orion.set_device_overrides("  leaf-r3:\n    qos:\n      roce_priority: 4\n")
        violation = only(orion.evaluate(), "qos.pfc-exactly-roce")
        assert_denied([violation])
        assert violation.subject == "leaf-r3"
        assert violation.message == (
            "leaf-r3: PFC on priorities [3], the lossless priorities are [4]: "
            "PFC must be exactly [4]"
        )
        assert primary(violation) == at(orion, DEVICES_FILE, "roce_priority: 4")
        assert at(orion, QOS_FILE, "pfc_priorities: [3]") in places(violation)

    def test_extra_lossless_priority_on_a_group_flags_its_members(self, orion: FleetCopy) -> None:
        """PFC on [3, 4] for the SONiC leaves flags exactly those four leaves at the group line."""
        orion.append(GROUPS_FILE, TWO_LOSSLESS_GROUP)
        report = orion.evaluate()
        found = flagged(report, "qos.pfc-exactly-roce")
        assert_denied(found)
        assert subjects(report, "qos.pfc-exactly-roce") == SONIC_LEAVES
        assert {v.message.split(": ", 1)[1] for v in found} == {
            "PFC on priorities [3, 4], the lossless priorities are [3]: PFC must be exactly [3]"
        }
        assert {primary(v) for v in found} == {at(orion, GROUPS_FILE, "pfc_priorities: [3, 4]")}

    def test_host_with_pfc_off_is_flagged(self, orion: FleetCopy) -> None:
        """A GPU node with no PFC priority at all is missing the RoCE one."""
        orion.set_device_overrides("  gpu-n20:\n    qos:\n      pfc_priorities: []\n")
        violation = only(orion.evaluate(), "qos.pfc-exactly-roce")
        assert violation.subject == "gpu-n20"
        assert violation.message == (
            "gpu-n20: PFC on priorities [], the lossless priorities are [3]: "
            "PFC must be exactly [3]"
        )
        assert primary(violation) == at(orion, DEVICES_FILE, "pfc_priorities: []")

    def test_two_declared_lossless_priorities_pass(self, orion: FleetCopy) -> None:
        """RoCE on 3 and storage (DSCP 10) on 4, both declared lossless fleet-wide, with
        PFC on both, ECN on both queues and headroom for both: a correct design, not
        flagged."""
        orion.replace(QOS_FILE, "pfc_priorities: [3]", "pfc_priorities: [3, 4]")
        orion.replace(
            QOS_FILE,
            "    - {dscp: 48, priority: 6}",
            "    - {dscp: 48, priority: 6}\n    - {dscp: 10, priority: 4}",
        )
        orion.replace(
            QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  lossless_priorities: [3, 4]"
        )
        orion.replace(
            QOS_FILE,
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}\n"
            "    - {priority: 4, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
        )
        report = orion.evaluate()
        for policy_id in QOS_POLICIES:
            assert flagged(report, policy_id) == [], policy_id

    def test_pfc_missing_a_declared_lossless_priority_is_flagged(self, orion: FleetCopy) -> None:
        """Declaring 3 and 4 lossless while PFC pauses only 3 leaves storage lossy."""
        orion.replace(
            QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  lossless_priorities: [3, 4]"
        )
        found = flagged(orion.evaluate(), "qos.pfc-exactly-roce")
        assert_denied(found)
        assert {v.message.split(": ", 1)[1] for v in found} == {
            "PFC on priorities [3], the lossless priorities are [3, 4]: PFC must be exactly [3, 4]"
        }

    def test_roce_priority_outside_the_lossless_ones_is_flagged(self, orion: FleetCopy) -> None:
        """Lossless priorities that leave the RoCE priority out make RoCE lossy."""
        orion.replace(QOS_FILE, "pfc_priorities: [3]", "pfc_priorities: [4]")
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  lossless_priorities: [4]")
        found = flagged(orion.evaluate(), "qos.pfc-exactly-roce")
        assert found
        assert all(
            v.message.endswith("the RoCE priority 3 is not one of the lossless priorities [4]")
            for v in found
        )
        assert {primary(v) for v in found} == {at(orion, QOS_FILE, "lossless_priorities: [4]")}

    def test_lossy_frontend_switch_is_not_checked(self, orion: FleetCopy) -> None:
        """fe-1 carries only lossy frontend links, so its PFC set is not checked."""
        orion.set_device_overrides("  fe-1:\n    qos:\n      pfc_priorities: [3, 4]\n")
        assert flagged(orion.evaluate(), "qos.pfc-exactly-roce") == []


class TestLosslessPathAgrees:
    def test_leaf_on_priority_4_disagrees_with_every_neighbour(self, orion: FleetCopy) -> None:
        """RoCE on 4 at leaf-r3 is flagged once per neighbour: 32 hosts and 4 spines."""
        orion.set_device_overrides("  leaf-r3:\n    qos:\n      roce_priority: 4\n")
        report = orion.evaluate()
        found = flagged(report, "qos.lossless-path-agrees")
        assert_denied(found)
        uplinks = {f"leaf-r3:Ethernet{port}" for port in (33, 41, 49, 57)}
        assert (
            subjects(report, "qos.lossless-path-agrees")
            == {f"{node}:eth3" for node in NODES} | uplinks
        )
        assert len(found) == 36
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "roce_priority: 4")}
        by_subject = {v.subject: v for v in found}
        host = by_subject["gpu-n07:eth3"]
        assert host.message == (
            "qos.roce_priority differs across gpu-n07:eth3 <-> leaf-r3:Ethernet7: 3 vs 4"
        )
        assert places(host)[-1] == at(orion, BACKEND_FILE, "a: gpu-n07, a_port: eth3,")
        uplink = by_subject["leaf-r3:Ethernet41"]
        assert uplink.message == (
            "qos.roce_priority differs across leaf-r3:Ethernet41 <-> spine-2:Ethernet25: 4 vs 3"
        )
        assert uplink.objects == ("leaf-r3", "spine-2")

    def test_host_dscp_map_differing_from_its_leaves_is_flagged(self, orion: FleetCopy) -> None:
        """A node mapping DSCP 26 to priority 4 disagrees with each of its 8 rail leaves."""
        orion.set_device_overrides(
            "  gpu-n05:\n    qos:\n"
            "      dscp_map: [{dscp: 26, priority: 4}, {dscp: 48, priority: 6}]\n"
        )
        report = orion.evaluate()
        found = flagged(report, "qos.lossless-path-agrees")
        assert subjects(report, "qos.lossless-path-agrees") == {
            f"gpu-n05:eth{rail}" for rail in range(8)
        }
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "dscp_map:")}
        assert all("{26->4, 48->6} vs {26->3, 48->6}" in v.message for v in found)

    def test_lossy_frontend_link_may_differ(self, orion: FleetCopy) -> None:
        """A different RoCE priority on the frontend switch is outside the lossless path."""
        orion.set_device_overrides("  fe-1:\n    qos:\n      roce_priority: 4\n")
        assert flagged(orion.evaluate(), "qos.lossless-path-agrees") == []


class TestDscpRoceMapped:
    def test_host_without_a_dscp_for_the_roce_priority_is_flagged(self, orion: FleetCopy) -> None:
        """A node whose map sends DSCP 26 to 4 has no DSCP for RoCE priority 3."""
        orion.set_device_overrides(
            "  gpu-n05:\n    qos:\n"
            "      dscp_map: [{dscp: 26, priority: 4}, {dscp: 48, priority: 6}]\n"
        )
        violation = only(orion.evaluate(), "qos.dscp-roce-mapped")
        assert_denied([violation])
        assert violation.subject == "gpu-n05"
        assert violation.message == "gpu-n05: no DSCP maps to the RoCE priority 3"
        assert primary(violation) == at(orion, DEVICES_FILE, "dscp_map:")

    def test_cnp_on_the_roce_priority_is_flagged(self, orion: FleetCopy) -> None:
        """A spine putting CNPs on priority 3 pauses them with the data they regulate."""
        orion.set_device_overrides("  spine-4:\n    qos:\n      cnp_priority: 3\n")
        violation = only(orion.evaluate(), "qos.dscp-roce-mapped")
        assert_denied([violation])
        assert violation.subject == "spine-4"
        assert violation.message == "spine-4: CNP priority 3 equals the RoCE priority"
        assert primary(violation) == at(orion, DEVICES_FILE, "cnp_priority: 3")


class TestDscpMarkedByHosts:
    def test_roce_dscp_on_a_lossy_queue_is_flagged_once(self, orion: FleetCopy) -> None:
        """Hosts mark RoCE with DSCP 24 while only DSCP 26 maps to priority 3: RoCE rides
        the default lossy class, although some DSCP does reach the RoCE priority. Said once
        per device, by qos.lossless-priority-reached, at the roce_dscp line and the map."""
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  roce_dscp: 24")
        report = orion.evaluate()
        assert flagged(report, "qos.dscp-roce-mapped") == []
        found = flagged(report, "qos.lossless-priority-reached")
        assert_denied(found)
        assert "gpu-n01" in subjects(report, "qos.lossless-priority-reached")
        assert {v.message.split(": ", 1)[1] for v in found} == {
            "hosts mark RoCE traffic DSCP 24, which the map sends to no priority "
            "(the default, lossy class), not a lossless priority [3]: RoCE drops under "
            "congestion"
        }
        assert {primary(v) for v in found} == {at(orion, QOS_FILE, "- {dscp: 26, priority: 3}")}
        assert all(at(orion, QOS_FILE, "roce_dscp: 24") in places(v) for v in found)

    def test_roce_dscp_on_another_lossless_priority_is_the_wrong_class(
        self, orion: FleetCopy
    ) -> None:
        """RoCE marked into storage's lossless priority 4: lossless, but not RoCE's queue;
        qos.dscp-roce-mapped says so, and only it."""
        orion.replace(QOS_FILE, "pfc_priorities: [3]", "pfc_priorities: [3, 4]")
        orion.replace(
            QOS_FILE,
            "roce_priority: 3",
            "roce_priority: 3\n  roce_dscp: 10\n  lossless_priorities: [3, 4]",
        )
        orion.replace(
            QOS_FILE,
            "    - {dscp: 48, priority: 6}",
            "    - {dscp: 48, priority: 6}\n    - {dscp: 10, priority: 4}",
        )
        report = orion.evaluate()
        assert flagged(report, "qos.lossless-priority-reached") == []
        found = flagged(report, "qos.dscp-roce-mapped")
        assert found and all(v.message.endswith("not the RoCE priority 3") for v in found)

    def test_declared_dscps_that_map_right_pass(self, orion: FleetCopy) -> None:
        """ORION's hosts mark 26 (RoCE) and 48 (CNP), which map to 3 and 6."""
        orion.replace(
            QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  roce_dscp: 26\n  cnp_dscp: 48"
        )
        assert flagged(orion.evaluate(), "qos.dscp-roce-mapped") == []

    def test_cnp_dscp_mapped_to_another_priority_is_flagged(self, orion: FleetCopy) -> None:
        """CNPs marked 46, which the map does not send to the CNP priority 6."""
        orion.replace(QOS_FILE, "roce_priority: 3", "roce_priority: 3\n  cnp_dscp: 46")
        found = flagged(orion.evaluate(), "qos.dscp-roce-mapped")
        assert found and all("hosts mark CNP traffic DSCP 46" in v.message for v in found)


class TestEcnOrder:
    def test_lossy_queue_may_mark_above_xoff(self, orion: FleetCopy) -> None:
        """Kmin above Xoff on a lossy queue (priority 0, never paused) is no defect."""
        orion.replace(
            QOS_FILE,
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}",
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}\n"
            "    - {priority: 0, kmin_kb: 1000, kmax_kb: 2000, pmax_percent: 5}",
        )
        assert flagged(orion.evaluate(), "qos.ecn-order") == []

    @pytest.mark.parametrize(("xoff", "fails"), [(201, False), (200, True)])
    def test_kmin_must_be_strictly_below_xoff(
        self, orion: FleetCopy, xoff: int, fails: bool
    ) -> None:
        """Kmin 200 passes with Xoff 201 and fails with Xoff 200 (kmin == xoff)."""
        orion.set_device_overrides(f"  leaf-r6:\n    qos:\n      pfc_xoff_kb: {xoff}\n")
        report = orion.evaluate()
        if not fails:
            assert flagged(report, "qos.ecn-order") == []
            return
        violation = only(report, "qos.ecn-order")
        assert_denied([violation])
        assert violation.subject == "leaf-r6"
        assert violation.message == (
            "leaf-r6 queue 3: kmin 200 KB >= PFC xoff 200 KB: ECN would mark after PFC fires"
        )
        assert primary(violation) == at(orion, DEVICES_FILE, "pfc_xoff_kb: 200")

    @pytest.mark.parametrize(("kmax", "fails"), [(301, False), (300, True)])
    def test_kmin_must_be_strictly_below_kmax(
        self, orion: FleetCopy, kmax: int, fails: bool
    ) -> None:
        """Kmin 300 passes with Kmax 301 and fails with Kmax 300."""
        orion.set_device_overrides(
            "  spine-2:\n    qos:\n"
            f"      ecn: [{{priority: 3, kmin_kb: 300, kmax_kb: {kmax}, pmax_percent: 20}}]\n"
        )
        report = orion.evaluate()
        if not fails:
            assert flagged(report, "qos.ecn-order") == []
            return
        violation = only(report, "qos.ecn-order")
        assert_denied([violation])
        assert violation.subject == "spine-2"
        assert violation.message == "spine-2 queue 3: kmin 300 KB >= kmax 300 KB"
        assert primary(violation) == at(orion, DEVICES_FILE, "ecn:")

    def test_switch_without_ecn_on_the_roce_queue_is_flagged(self, orion: FleetCopy) -> None:
        """A leaf marking only queue 4 has no ECN thresholds on RoCE queue 3."""
        orion.set_device_overrides(
            "  leaf-r2:\n    qos:\n"
            "      ecn: [{priority: 4, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}]\n"
        )
        violation = only(orion.evaluate(), "qos.ecn-order")
        assert violation.subject == "leaf-r2"
        assert violation.message == "leaf-r2: no ECN thresholds on the RoCE queue 3"
        assert primary(violation) == at(orion, DEVICES_FILE, "ecn:")


class TestHeadroomPort:
    def test_120_m_cable_needs_more_than_128_kb(self, orion: FleetCopy) -> None:
        """A 120 m host cable needs 149.9 KB of headroom at 400G, so its leaf port is flagged."""
        _cable_n07(orion, "120.0")
        need_kb = float(needed_bytes("120.0")) / 1024
        assert need_kb > 128
        violation = only(orion.evaluate(), "qos.headroom-port")
        assert_denied([violation])
        assert violation.subject == "leaf-r3:Ethernet7"
        assert violation.message == (
            f"leaf-r3:Ethernet7: headroom 128 KB < needed {need_kb:.1f} KB "
            "(400 Gb/s, 120.0 m, MTU 9214)"
        )
        assert f"{need_kb:.1f}" == "149.9"
        # The owner of the headroom value leads; the edited cable is named as well.
        assert primary(violation) == at(orion, QOS_FILE, "pfc_headroom_kb: 128")
        assert places(violation)[-1] == at(orion, BACKEND_FILE, "a: gpu-n07, a_port: eth3,")

    def test_lower_headroom_on_one_leaf_flags_its_long_cables(self, orion: FleetCopy) -> None:
        """leaf-r0 at 112 KB is flagged on exactly the ports whose cable needs more than that."""
        orion.set_device_overrides("  leaf-r0:\n    qos:\n      pfc_headroom_kb: 112\n")
        report = orion.evaluate()
        fleet = orion.load()
        expected = {
            str(pl.local)
            for pl in fleet.cabling.ports("leaf-r0")
            if pl.link_class.value in ("host-leaf", "leaf-spine")
            and needed_bytes(str(pl.link.length_m)) > 112 * 1024
        }
        assert expected  # the ~46 m cables to spines 2-4
        found = flagged(report, "qos.headroom-port")
        assert_denied(found)
        assert subjects(report, "qos.headroom-port") == expected
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "pfc_headroom_kb: 112")}

    @pytest.mark.parametrize(("length_m", "fails"), [("77.2", False), ("77.3", True)])
    def test_headroom_equal_to_the_need_is_enough(
        self, orion: FleetCopy, length_m: str, fails: bool
    ) -> None:
        """129 KB covers a 77.2 m cable to the byte and falls short at 77.3 m."""
        orion.replace(QOS_FILE, "pfc_headroom_kb: 128", "pfc_headroom_kb: 129")
        _cable_n07(orion, length_m)
        assert (needed_bytes(length_m) > 129 * 1024) is fails
        assert subjects(orion.evaluate(), "qos.headroom-port") == (
            {"leaf-r3:Ethernet7"} if fails else set()
        )

    def test_lossy_frontend_ports_need_no_headroom(self, orion: FleetCopy) -> None:
        """A 300 m frontend cable is not on the lossless path and is not flagged."""
        orion.replace(
            "inventory/links/frontend.yaml",
            "b_port: Ethernet1, class: frontend, length_m: 3.7",
            "b_port: Ethernet1, class: frontend, length_m: 300.0",
        )
        assert flagged(orion.evaluate(), "qos.headroom-port") == []


class TestHeadroomBuffer:
    def test_two_lossless_priorities_overflow_a_smaller_buffer(self, orion: FleetCopy) -> None:
        """PFC on [3, 4] doubles the SONiC leaves' headroom past a 12 MiB buffer."""
        orion.append(GROUPS_FILE, TWO_LOSSLESS_GROUP)
        orion.replace(QOS_FILE, "switch_buffer_kb: 114688", "switch_buffer_kb: 12288")
        report = orion.evaluate()
        found = flagged(report, "qos.headroom-buffer")
        assert_denied(found)
        assert subjects(report, "qos.headroom-buffer") == SONIC_LEAVES
        total = 64 * 2 * 128
        for violation in found:
            assert violation.message == (
                f"{violation.subject}: 64 ports x 2 priorities x 128 KB = {total} KB "
                "> buffer 12288 KB"
            )
            assert primary(violation) == at(orion, GROUPS_FILE, "pfc_priorities: [3, 4]")
            assert at(orion, QOS_FILE, "switch_buffer_kb: 12288") in places(violation)

    def test_one_lossless_priority_fits_the_same_buffer(self, orion: FleetCopy) -> None:
        """With PFC on the RoCE priority only, 64 x 128 KB fits a 12 MiB buffer."""
        orion.replace(QOS_FILE, "switch_buffer_kb: 114688", "switch_buffer_kb: 12288")
        assert flagged(orion.evaluate(), "qos.headroom-buffer") == []

    @pytest.mark.parametrize(("buffer_kb", "fails"), [(8192, False), (8191, True)])
    def test_buffer_boundary_is_the_total(
        self, orion: FleetCopy, buffer_kb: int, fails: bool
    ) -> None:
        """64 ports x 1 priority x 128 KB = 8192 KB fits 8192 KB exactly and not 8191 KB."""
        orion.replace(QOS_FILE, "switch_buffer_kb: 114688", f"switch_buffer_kb: {buffer_kb}")
        found = subjects(orion.evaluate(), "qos.headroom-buffer")
        assert found == (set(LEAVES) | set(SPINES) if fails else set())


# --- property: the headroom policy fires exactly where the formula says ----------------------


@pytest.fixture(scope="module")
def headroom_fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[FleetCopy, str, str]:
    """One ORION copy for the property test, with the pristine cable and QoS files' text."""
    copy = copy_orion(Path(tmp_path_factory.mktemp("headroom-property")))
    return copy, (copy.path / BACKEND_FILE).read_text(), (copy.path / QOS_FILE).read_text()


def _expected_short_ports(fleet: Fleet, headroom_kb: int) -> set[str]:
    short = set()
    for link in fleet.links:
        if link.link_class.value not in ("host-leaf", "leaf-spine"):
            continue
        if needed_bytes(str(link.length_m)) <= headroom_kb * 1024:
            continue
        for device, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if fleet.devices[device].role.is_switch:
                short.add(f"{device}:{port}")
    return short


@settings(max_examples=25, deadline=None, database=None)
@given(
    decimetres=st.integers(min_value=1, max_value=3000),
    headroom_kb=st.integers(min_value=90, max_value=200),
)
def test_headroom_port_fires_iff_the_formula_says_so(
    headroom_fleet: tuple[FleetCopy, str, str], decimetres: int, headroom_kb: int
) -> None:
    """For any cable length and headroom, the short ports are exactly those the formula finds."""
    orion, backend, qos = headroom_fleet
    length_m = f"{decimetres // 10}.{decimetres % 10}"
    cable = f"{N07_CABLE}length_m: {length_m}}}"
    orion.write(BACKEND_FILE, backend.replace(N07_CABLE + N07_LENGTH, cable))
    orion.write(QOS_FILE, qos.replace("pfc_headroom_kb: 128", f"pfc_headroom_kb: {headroom_kb}"))
    fleet = orion.load()
    report = evaluate(fleet, builtin("qos.headroom-port"), today=TODAY)
    assert report.errors == ()
    short = subjects(report, "qos.headroom-port")
    assert short == _expected_short_ports(fleet, headroom_kb)
    assert ("leaf-r3:Ethernet7" in short) is (needed_bytes(length_m) > headroom_kb * 1024)
