"""MTU policies: switch port, host netdev and RDMA path MTU must agree on every path."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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

MTU_POLICIES = (
    "mtu.defined",
    "mtu.host-fits-port",
    "mtu.rdma-fits-host",
    "mtu.fabric-ends-equal",
    "mtu.platform-range",
)
MTU_FILE = "intent/mtu.yaml"
DEVICES_FILE = "intent/devices.yaml"
NODES = [f"gpu-n{n:02d}" for n in range(1, 33)]
BACKEND_NICS = {f"{node}:eth{rail}" for node in NODES for rail in range(8)}
VERBS = (256, 512, 1024, 2048, 4096)


def _host_leaf_host(orion: FleetCopy, value: int) -> None:
    orion.replace(MTU_FILE, "    host: 9000          # 9000 + 22", f"    host: {value}          #")


@pytest.mark.parametrize("policy_id", MTU_POLICIES)
def test_clean_orion_has_no_violation(clean_report: PolicyReport, policy_id: str) -> None:
    """The unchanged ORION fleet satisfies every MTU policy."""
    assert flagged(clean_report, policy_id) == []


class TestHostFitsPort:
    def test_host_mtu_9200_fleet_wide_flags_every_backend_nic(self, orion: FleetCopy) -> None:
        """A fleet-wide host MTU of 9200 exceeds 9214 - 22 on all 256 backend NICs."""
        _host_leaf_host(orion, 9200)
        report = orion.evaluate()
        found = flagged(report, "mtu.host-fits-port")
        assert_denied(found)
        assert subjects(report, "mtu.host-fits-port") == BACKEND_NICS
        assert len(found) == 256
        assert {primary(v) for v in found} == {at(orion, MTU_FILE, "host: 9200")}
        (n07,) = [v for v in found if v.subject == "gpu-n07:eth3"]
        assert n07.message == (
            "gpu-n07:eth3 host MTU 9200 + 22 > 9214, "
            "the MTU of switch port leaf-r3:Ethernet7 (host-leaf)"
        )
        assert n07.objects == ("gpu-n07:eth3", "leaf-r3:Ethernet7")

    @pytest.mark.parametrize(("host", "fails"), [(9192, False), (9193, True)])
    def test_boundary_is_port_mtu_minus_22(self, orion: FleetCopy, host: int, fails: bool) -> None:
        """Host 9192 fits a 9214 switch port exactly and 9193 does not."""
        _host_leaf_host(orion, host)
        found = subjects(orion.evaluate(), "mtu.host-fits-port")
        assert found == (BACKEND_NICS if fails else set())

    def test_lower_switch_port_on_one_leaf_flags_its_rail_only(self, orion: FleetCopy) -> None:
        """A leaf overriding its host-facing MTU to 9000 flags the 32 NICs of its rail."""
        orion.set_device_overrides("  leaf-r5:\n    mtu:\n      host-leaf: {switch_port: 9000}\n")
        report = orion.evaluate()
        found = flagged(report, "mtu.host-fits-port")
        assert_denied(found)
        assert subjects(report, "mtu.host-fits-port") == {f"{node}:eth5" for node in NODES}
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "switch_port: 9000")}
        assert all("host MTU 9000 + 22 > 9000" in v.message for v in found)
        # the fleet-wide host value is named too, after the override that won
        assert all(
            places(v)[1] == at(orion, MTU_FILE, "host: 9000          # 9000 + 22") for v in found
        )

    def test_frontend_is_checked_against_its_own_switch_port(self, orion: FleetCopy) -> None:
        """A frontend host MTU above 9192 flags every fe0 NIC, and only those."""
        orion.replace(
            MTU_FILE,
            "  frontend:\n    switch_port: 9214\n    host: 9000",
            "  frontend:\n    switch_port: 9214\n    host: 9210",
        )
        report = orion.evaluate()
        found = flagged(report, "mtu.host-fits-port")
        assert subjects(report, "mtu.host-fits-port") == {f"{node}:fe0" for node in NODES}
        assert {primary(v) for v in found} == {at(orion, MTU_FILE, "host: 9210")}
        assert all(
            v.message.endswith("the MTU of switch port " + v.objects[1] + " (frontend)")
            for v in found
        )


class TestRdmaFitsHost:
    @pytest.mark.parametrize(("host", "fails"), [(4160, False), (4159, True)])
    def test_boundary_is_rdma_plus_64(self, orion: FleetCopy, host: int, fails: bool) -> None:
        """RDMA 4096 fits a 4160 host MTU exactly and not a 4159 one."""
        orion.set_device_overrides(f"  gpu-n09:\n    mtu:\n      host-leaf: {{host: {host}}}\n")
        report = orion.evaluate()
        if not fails:
            assert flagged(report, "mtu.rdma-fits-host") == []
            return
        violation = only(report, "mtu.rdma-fits-host")
        assert_denied([violation])
        assert violation.subject == "gpu-n09"
        assert violation.message == "mtu.host-leaf.rdma: 4096 + 64 > 4159 (host MTU)"
        assert primary(violation) == at(orion, DEVICES_FILE, "host: 4159")
        assert at(orion, MTU_FILE, "rdma: 4096") in places(violation)

    def test_rdma_3000_is_not_a_verbs_mtu(self, orion: FleetCopy) -> None:
        """An RDMA path MTU of 3000 is flagged on every GPU node even though it fits the host."""
        orion.replace(MTU_FILE, "rdma: 4096", "rdma: 3000")
        report = orion.evaluate()
        found = flagged(report, "mtu.rdma-fits-host")
        assert_denied(found)
        assert subjects(report, "mtu.rdma-fits-host") == set(NODES)
        assert len(found) == 32
        assert {v.message for v in found} == {
            "mtu.host-leaf.rdma: 3000 is not a verbs MTU (256, 512, 1024, 2048, 4096)"
        }
        assert {primary(v) for v in found} == {at(orion, MTU_FILE, "rdma: 3000")}

    @pytest.mark.parametrize("rdma", VERBS)
    def test_every_verbs_mtu_is_accepted(self, orion: FleetCopy, rdma: int) -> None:
        """Each of the five verbs MTUs passes under a 9000 host MTU."""
        orion.replace(MTU_FILE, "rdma: 4096", f"rdma: {rdma}")
        assert flagged(orion.evaluate(), "mtu.rdma-fits-host") == []


class TestDefined:
    def test_missing_frontend_switch_port_flags_the_frontend_switch(self, orion: FleetCopy) -> None:
        """Dropping the frontend switch_port MTU leaves fe-1 without one, and only fe-1."""
        orion.replace(MTU_FILE, "  frontend:\n    switch_port: 9214\n", "  frontend:\n")
        report = orion.evaluate()
        violation = only(report, "mtu.defined")
        assert_denied([violation])
        assert violation.subject == "fe-1"
        assert violation.message == "no switch_port MTU for link class frontend on fe-1"
        assert primary(violation) == at(orion, "inventory/devices/leaves.yaml", "name: fe-1")

    def test_missing_frontend_host_mtu_flags_every_node(self, orion: FleetCopy) -> None:
        """Dropping the frontend host MTU flags all 32 GPU nodes at their inventory records."""
        orion.replace(
            MTU_FILE, "    switch_port: 9214\n    host: 9000\n", "    switch_port: 9214\n"
        )
        report = orion.evaluate()
        found = flagged(report, "mtu.defined")
        assert_denied(found)
        assert subjects(report, "mtu.defined") == set(NODES)
        for violation in found:
            node = violation.subject
            assert violation.message == f"no host MTU for link class frontend on {node}"
            assert primary(violation) == at(orion, "inventory/devices/nodes.yaml", f"name: {node}")


class TestFabricEndsEqual:
    def test_spine_with_its_own_fabric_mtu_flags_every_link_to_it(self, orion: FleetCopy) -> None:
        """spine-2 at 9000 on leaf-spine links disagrees with all 64 leaf ends cabled to it."""
        orion.set_device_overrides("  spine-2:\n    mtu:\n      leaf-spine: {switch_port: 9000}\n")
        report = orion.evaluate()
        found = flagged(report, "mtu.fabric-ends-equal")
        assert_denied(found)
        expected = {f"leaf-r{rail}:Ethernet{port}" for rail in range(8) for port in range(41, 49)}
        assert subjects(report, "mtu.fabric-ends-equal") == expected
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "switch_port: 9000")}
        (first,) = [v for v in found if v.subject == "leaf-r3:Ethernet41"]
        assert first.message == "leaf-r3:Ethernet41 MTU 9214 != spine-2:Ethernet25 MTU 9000"
        assert first.objects == ("leaf-r3:Ethernet41", "spine-2:Ethernet25")
        assert places(first)[-1] == at(
            orion, "inventory/links/backend.yaml", "a: leaf-r3, a_port: Ethernet41,"
        )

    def test_fleet_wide_fabric_mtu_change_keeps_ends_equal(self, orion: FleetCopy) -> None:
        """Lowering the leaf-spine MTU for the whole fleet changes both ends together."""
        orion.replace(MTU_FILE, "    switch_port: 9214   # both ends", "    switch_port: 9000   #")
        assert flagged(orion.evaluate(), "mtu.fabric-ends-equal") == []


class TestPlatformRange:
    def test_9216_is_refused_on_eos_switches_only(self, orion: FleetCopy) -> None:
        """9216 on the host-facing ports: the EOS leaves refuse it, the SONiC leaves take it."""
        orion.replace(
            MTU_FILE, "switch_port: 9214   # leaf ports", "switch_port: 9216   # leaf ports"
        )
        report = orion.evaluate()
        found = flagged(report, "mtu.platform-range")
        assert_denied(found)
        assert subjects(report, "mtu.platform-range") == {
            f"leaf-r{rail}:host-leaf" for rail in (0, 2, 4, 6)
        }
        (r0,) = [v for v in found if v.subject == "leaf-r0:host-leaf"]
        assert r0.message == (
            "leaf-r0 (eos): switch port MTU 9216 for host-leaf is outside eos's 68-9214"
        )
        assert primary(r0) == at(orion, MTU_FILE, "switch_port: 9216")

    def test_9216_on_a_sonic_leaf_is_in_range(self, orion: FleetCopy) -> None:
        """A SONiC leaf takes 9216 (its spines then disagree, which is another policy)."""
        orion.set_device_overrides("  leaf-r1:\n    mtu:\n      host-leaf: {switch_port: 9216}\n")
        report = orion.evaluate()
        assert flagged(report, "mtu.platform-range") == []


# --- property: the violated MTU policies are exactly the ones the formulas predict -------------

MTU_TEMPLATE = """\
mtu:
  host-leaf:
    switch_port: {port}
    host: {host}
    rdma: {rdma}
  leaf-spine:
    switch_port: 9214
  frontend:
    switch_port: 9214
    host: 9000
"""


@pytest.fixture(scope="module")
def mtu_fleet(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    """One ORION copy for the whole property test; each example rewrites intent/mtu.yaml."""
    return copy_orion(Path(tmp_path_factory.mktemp("mtu-property")))


@st.composite
def mtu_triples(draw: st.DrawFn) -> tuple[int, int, int]:
    """(switch_port, host, rdma), biased towards the two boundaries that matter."""
    port = draw(st.integers(min_value=600, max_value=9216))
    rdma = draw(st.one_of(st.sampled_from(VERBS), st.integers(min_value=256, max_value=4096)))
    near_port = st.integers(min_value=-3, max_value=3).map(lambda d: port - 22 + d)
    near_rdma = st.integers(min_value=-3, max_value=3).map(lambda d: rdma + 64 + d)
    host = draw(st.one_of(near_port, near_rdma, st.integers(min_value=576, max_value=9216)))
    return port, min(max(host, 576), 9216), rdma


def _predicted(port: int, host: int, rdma: int) -> set[str]:
    expected = set()
    if host + 22 > port:
        expected.add("mtu.host-fits-port")
    if rdma not in VERBS or rdma + 64 > host:
        expected.add("mtu.rdma-fits-host")
    if port > 9214:  # above what the EOS leaves take (the SONiC ones take 9216)
        expected.add("mtu.platform-range")
    return expected


@settings(max_examples=25, deadline=None, database=None)
@given(triple=mtu_triples())
def test_violated_mtu_policies_are_exactly_the_predicted_ones(
    mtu_fleet: FleetCopy, triple: tuple[int, int, int]
) -> None:
    """For any (switch_port, host, rdma), the MTU policies that fire are the formulas' verdict."""
    port, host, rdma = triple
    mtu_fleet.write(MTU_FILE, MTU_TEMPLATE.format(port=port, host=host, rdma=rdma))
    report = evaluate(mtu_fleet.load(), builtin(*MTU_POLICIES), today=TODAY)
    assert report.errors == ()
    assert set(report.by_policy()) == _predicted(port, host, rdma)
    if "mtu.host-fits-port" in report.by_policy():
        assert subjects(report, "mtu.host-fits-port") == BACKEND_NICS
    if "mtu.rdma-fits-host" in report.by_policy():
        assert subjects(report, "mtu.rdma-fits-host") == set(NODES)
