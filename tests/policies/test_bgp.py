"""BGP policies for the RFC 7938 eBGP fabric: ASNs, sessions, paths, filters, ids, /31s."""

from __future__ import annotations

import pytest

from policies.engine import PolicyReport
from tests.fleetcopy import FleetCopy
from tests.policies.support import (
    assert_denied,
    at,
    flagged,
    only,
    places,
    primary,
    subjects,
)

BGP_POLICIES = (
    "bgp.asn-defined",
    "bgp.spine-asn-shared",
    "bgp.leaf-asn-unique",
    "bgp.asn-private",
    "bgp.remote-as-match",
    "bgp.maximum-paths",
    "bgp.inbound-filter",
    "bgp.router-id-unique",
    "bgp.p2p-31",
)
BGP_FILE = "intent/bgp.yaml"
DEVICES_FILE = "intent/devices.yaml"
ADDRESSING_FILE = "intent/addressing.yaml"
BACKEND_FILE = "inventory/links/backend.yaml"
SPINES = [f"spine-{n}" for n in range(1, 5)]
LEAVES = [f"leaf-r{rail}" for rail in range(8)]


def _override_address(orion: FleetCopy, device: str, port: str, address: str) -> None:
    orion.append(
        ADDRESSING_FILE,
        f"  overrides:\n    - {{device: {device}, port: {port}, address: {address}}}\n",
    )


@pytest.mark.parametrize("policy_id", BGP_POLICIES)
def test_clean_orion_has_no_violation(clean_report: PolicyReport, policy_id: str) -> None:
    """The unchanged ORION fleet satisfies every BGP policy."""
    assert flagged(clean_report, policy_id) == []


class TestAsnDefined:
    def test_leaf_missing_from_leaf_asns_is_flagged(self, orion: FleetCopy) -> None:
        """Dropping leaf-r7 from bgp.leaf_asns leaves it, and only it, without an ASN."""
        orion.replace(BGP_FILE, "    leaf-r7: 64608\n", "")
        violation = only(orion.evaluate(), "bgp.asn-defined")
        assert_denied([violation])
        assert violation.subject == "leaf-r7"
        assert violation.message == "leaf leaf-r7 has no bgp.asn"
        assert primary(violation) == at(orion, "inventory/devices/leaves.yaml", "name: leaf-r7")

    def test_missing_spine_asn_flags_every_spine(self, orion: FleetCopy) -> None:
        """Without bgp.spine_asn none of the four spines has an ASN."""
        orion.replace(BGP_FILE, "  spine_asn: 64600\n", "")
        report = orion.evaluate()
        found = flagged(report, "bgp.asn-defined")
        assert_denied(found)
        assert subjects(report, "bgp.asn-defined") == set(SPINES)
        for violation in found:
            assert violation.message == f"spine {violation.subject} has no bgp.asn"
            assert primary(violation) == at(
                orion, "inventory/devices/spines.yaml", f"name: {violation.subject}"
            )


class TestSpineAsnShared:
    def test_spine_with_its_own_asn_is_flagged(self, orion: FleetCopy) -> None:
        """spine-3 overriding its ASN to 64700 breaks the shared spine ASN."""
        orion.set_device_overrides("  spine-3:\n    bgp:\n      asn: 64700\n")
        violation = only(orion.evaluate(), "bgp.spine-asn-shared")
        assert_denied([violation])
        assert violation.subject == "spine-3"
        assert violation.message == "spine spine-3 has ASN 64700, the other spines 64600"
        assert primary(violation) == at(orion, DEVICES_FILE, "asn: 64700")

    def test_renumbering_the_spine_asn_moves_every_spine(self, orion: FleetCopy) -> None:
        """Changing bgp.spine_asn keeps the spines on one ASN."""
        orion.replace(BGP_FILE, "spine_asn: 64600", "spine_asn: 64700")
        report = orion.evaluate()
        assert flagged(report, "bgp.spine-asn-shared") == []
        assert flagged(report, "bgp.remote-as-match") == []


class TestLeafAsnUnique:
    def test_two_leaves_sharing_an_asn_flag_the_second(self, orion: FleetCopy) -> None:
        """leaf-r5 given leaf-r2's ASN is flagged, naming both leaves and both lines."""
        orion.replace(BGP_FILE, "leaf-r5: 64606", "leaf-r5: 64603")
        violation = only(orion.evaluate(), "bgp.leaf-asn-unique")
        assert_denied([violation])
        assert violation.subject == "leaf-r5"
        assert violation.message == "leaf leaf-r5 and leaf leaf-r2 share ASN 64603"
        assert violation.objects == ("leaf-r5", "leaf-r2")
        assert places(violation) == [
            at(orion, BGP_FILE, "leaf-r5: 64603"),
            at(orion, BGP_FILE, "leaf-r2: 64603"),
        ]

    def test_leaf_on_the_spine_asn_is_flagged(self, orion: FleetCopy) -> None:
        """A leaf numbered into the spines' ASN is flagged."""
        orion.replace(BGP_FILE, "leaf-r6: 64607", "leaf-r6: 64600")
        violation = only(orion.evaluate(), "bgp.leaf-asn-unique")
        assert violation.subject == "leaf-r6"
        assert violation.message == "leaf leaf-r6 uses the spine ASN 64600"
        assert primary(violation) == at(orion, BGP_FILE, "leaf-r6: 64600")


class TestAsnPrivate:
    @pytest.mark.parametrize(
        ("asn", "private"),
        [
            (64511, False),
            (64512, True),
            (65534, True),
            (65535, False),
            (4_199_999_999, False),
            (4_200_000_000, True),
            (4_294_967_294, True),
            (4_294_967_295, False),
        ],
    )
    def test_private_range_boundaries(self, orion: FleetCopy, asn: int, private: bool) -> None:
        """Only 64512-65534 and 4200000000-4294967294 are private ASNs."""
        orion.replace(BGP_FILE, "leaf-r4: 64605", f"leaf-r4: {asn}")
        report = orion.evaluate()
        if private:
            assert flagged(report, "bgp.asn-private") == []
            return
        violation = only(report, "bgp.asn-private")
        assert_denied([violation])
        assert violation.subject == "leaf-r4"
        assert violation.message == f"leaf-r4 ASN {asn} is not private"
        assert primary(violation) == at(orion, BGP_FILE, f"leaf-r4: {asn}")

    def test_public_spine_asn_flags_every_spine(self, orion: FleetCopy) -> None:
        """A public spine ASN is flagged on all four spines at the spine_asn line."""
        orion.replace(BGP_FILE, "spine_asn: 64600", "spine_asn: 3356")
        report = orion.evaluate()
        found = flagged(report, "bgp.asn-private")
        assert_denied(found)
        assert subjects(report, "bgp.asn-private") == set(SPINES)
        assert {v.message for v in found} == {f"{s} ASN 3356 is not private" for s in SPINES}
        assert {primary(v) for v in found} == {at(orion, BGP_FILE, "spine_asn: 3356")}


class TestRemoteAsMatch:
    def test_wrong_remote_as_override_flags_every_session_to_that_peer(
        self, orion: FleetCopy
    ) -> None:
        """remote_as 64999 towards spine-1 on leaf-r2 is flagged on its 8 uplinks to spine-1."""
        orion.set_device_overrides(
            "  leaf-r2:\n    bgp:\n      neighbors:\n        spine-1: {remote_as: 64999}\n"
        )
        report = orion.evaluate()
        found = flagged(report, "bgp.remote-as-match")
        assert_denied(found)
        assert subjects(report, "bgp.remote-as-match") == {
            f"leaf-r2:Ethernet{port}" for port in range(33, 41)
        }
        for violation in found:
            assert violation.message == (
                "leaf-r2 -> spine-1: remote-as 64999, but spine-1 is AS 64600"
            )
            assert violation.objects == ("leaf-r2", "spine-1")
            assert places(violation) == [
                at(orion, DEVICES_FILE, "remote_as: 64999"),
                at(orion, BGP_FILE, "spine_asn: 64600"),
            ]

    def test_override_equal_to_the_peer_asn_passes(self, orion: FleetCopy) -> None:
        """A remote_as override that states the peer's real ASN is consistent."""
        orion.set_device_overrides(
            "  leaf-r2:\n    bgp:\n      neighbors:\n        spine-1: {remote_as: 64600}\n"
        )
        assert flagged(orion.evaluate(), "bgp.remote-as-match") == []

    def test_renumbering_a_leaf_keeps_the_spines_in_step(self, orion: FleetCopy) -> None:
        """Spines take their remote-as from the leaf's ASN, so renumbering a leaf is consistent."""
        orion.replace(BGP_FILE, "leaf-r3: 64604", "leaf-r3: 64700")
        assert flagged(orion.evaluate(), "bgp.remote-as-match") == []


class TestMaximumPaths:
    def test_leaf_with_16_paths_for_32_uplinks_is_flagged(self, orion: FleetCopy) -> None:
        """maximum_paths 16 on a leaf with 32 equal-cost uplinks is flagged."""
        orion.set_device_overrides("  leaf-r1:\n    bgp:\n      maximum_paths: 16\n")
        violation = only(orion.evaluate(), "bgp.maximum-paths")
        assert_denied([violation])
        assert violation.subject == "leaf-r1"
        assert violation.message == "leaf-r1: maximum-paths 16 < 32 equal-cost paths"
        assert primary(violation) == at(orion, DEVICES_FILE, "maximum_paths: 16")

    @pytest.mark.parametrize(
        ("device", "paths", "need"),
        [("leaf-r1", 32, None), ("leaf-r1", 31, 32), ("spine-2", 8, None), ("spine-2", 7, 8)],
    )
    def test_boundary_is_the_number_of_equal_cost_paths(
        self, orion: FleetCopy, device: str, paths: int, need: int | None
    ) -> None:
        """A leaf needs its 32 uplinks, a spine the 8 parallel links to one leaf, no fewer."""
        orion.set_device_overrides(f"  {device}:\n    bgp:\n      maximum_paths: {paths}\n")
        report = orion.evaluate()
        if need is None:
            assert flagged(report, "bgp.maximum-paths") == []
            return
        violation = only(report, "bgp.maximum-paths")
        assert violation.subject == device
        assert violation.message == f"{device}: maximum-paths {paths} < {need} equal-cost paths"

    def test_unset_maximum_paths_counts_as_one(self, orion: FleetCopy) -> None:
        """Nulling maximum_paths fleet-wide flags every leaf and spine at the null line."""
        orion.replace(BGP_FILE, "maximum_paths: 64", "maximum_paths: null")
        report = orion.evaluate()
        found = flagged(report, "bgp.maximum-paths")
        assert subjects(report, "bgp.maximum-paths") == set(LEAVES) | set(SPINES)
        for violation in found:
            need = 32 if violation.subject.startswith("leaf") else 8
            assert violation.message == (
                f"{violation.subject}: maximum-paths 1 < {need} equal-cost paths"
            )
            assert primary(violation) == at(orion, BGP_FILE, "maximum_paths: null")


class TestInboundFilter:
    def test_null_filter_towards_one_spine_flags_those_sessions(self, orion: FleetCopy) -> None:
        """inbound_filter null towards spine-3 on leaf-r4 leaves its 8 sessions unfiltered."""
        orion.set_device_overrides(
            "  leaf-r4:\n    bgp:\n      neighbors:\n        spine-3: {inbound_filter: null}\n"
        )
        report = orion.evaluate()
        found = flagged(report, "bgp.inbound-filter")
        assert_denied(found)
        ports = range(49, 57)
        assert subjects(report, "bgp.inbound-filter") == {f"leaf-r4:Ethernet{p}" for p in ports}
        assert {v.message for v in found} == {
            f"leaf-r4 -> spine-3 (Ethernet{p}) has no inbound filter" for p in ports
        }
        assert {v.objects for v in found} == {("leaf-r4",)}
        assert {primary(v) for v in found} == {at(orion, DEVICES_FILE, "inbound_filter: null")}

    def test_other_filter_for_one_neighbour_passes(self, orion: FleetCopy) -> None:
        """A per-neighbour filter replacing the fleet-wide one is still a filter."""
        orion.set_device_overrides(
            "  leaf-r4:\n    bgp:\n      neighbors:\n        spine-3: {inbound_filter: SPINE3-IN}\n"
        )
        assert flagged(orion.evaluate(), "bgp.inbound-filter") == []


class TestRouterIdUnique:
    def test_duplicate_router_id_flags_the_later_switch(self, orion: FleetCopy) -> None:
        """leaf-r1 given leaf-r0's router id is flagged, naming both entries."""
        orion.replace(BGP_FILE, "leaf-r1: 10.255.0.6", "leaf-r1: 10.255.0.5")
        violation = only(orion.evaluate(), "bgp.router-id-unique")
        assert_denied([violation])
        assert violation.subject == "leaf-r1"
        assert violation.message == "leaf-r1 and leaf-r0 share router id 10.255.0.5"
        assert violation.objects == ("leaf-r1", "leaf-r0")
        assert places(violation) == [
            at(orion, BGP_FILE, "leaf-r1: 10.255.0.5"),
            at(orion, BGP_FILE, "leaf-r0: 10.255.0.5"),
        ]

    def test_spine_reusing_a_leaf_router_id_is_flagged(self, orion: FleetCopy) -> None:
        """A spine and a leaf sharing a router id collide across roles too."""
        orion.replace(BGP_FILE, "spine-2: 10.255.0.2", "spine-2: 10.255.0.12")
        violation = only(orion.evaluate(), "bgp.router-id-unique")
        assert violation.subject == "spine-2"
        assert violation.message == "spine-2 and leaf-r7 share router id 10.255.0.12"
        assert primary(violation) == at(orion, BGP_FILE, "spine-2: 10.255.0.12")

    def test_router_ids_allocated_from_loopbacks_are_unique(self, orion: FleetCopy) -> None:
        """Without explicit router ids, the loopback pool gives every switch its own."""
        text = (orion.path / BGP_FILE).read_text()
        orion.write(BGP_FILE, text[: text.index("  router_ids:")])
        fleet = orion.load()
        assert len({rid.value for rid in fleet.addresses.router_ids.values()}) == 12
        assert flagged(orion.evaluate(), "bgp.router-id-unique") == []


class TestP2p31:
    def test_override_into_another_31_flags_the_link(self, orion: FleetCopy) -> None:
        """Moving leaf-r0:Ethernet33 into 10.0.9.0/31 splits its link from spine-1's end."""
        _override_address(orion, "leaf-r0", "Ethernet33", "10.0.9.1/31")
        violation = only(orion.evaluate(), "bgp.p2p-31")
        assert_denied([violation])
        assert violation.subject == "leaf-r0:Ethernet33"
        assert violation.message == (
            "leaf-r0:Ethernet33 10.0.9.1/31 and spine-1:Ethernet1 10.0.0.0/31 "
            "are not the two ends of one /31"
        )
        assert primary(violation) == at(orion, ADDRESSING_FILE, "device: leaf-r0")
        assert places(violation)[-1] == at(orion, BACKEND_FILE, "a: leaf-r0, a_port: Ethernet33,")

    def test_override_of_the_upper_end_names_the_override(self, orion: FleetCopy) -> None:
        """Overriding spine-1:Ethernet1 out of its /31 flags the link and names the override."""
        _override_address(orion, "spine-1", "Ethernet1", "10.0.9.0/31")
        violation = only(orion.evaluate(), "bgp.p2p-31")
        assert violation.subject == "leaf-r0:Ethernet33"
        assert at(orion, ADDRESSING_FILE, "device: spine-1") in places(violation)

    @pytest.mark.parametrize("address", ["10.0.0.0/31", "10.0.0.1/30"])
    def test_same_address_or_wrong_prefix_is_flagged(self, orion: FleetCopy, address: str) -> None:
        """Both ends on one address, or a /30, is not a pair of /31 ends."""
        _override_address(orion, "leaf-r0", "Ethernet33", address)
        violation = only(orion.evaluate(), "bgp.p2p-31")
        assert violation.subject == "leaf-r0:Ethernet33"
        assert primary(violation) == at(orion, ADDRESSING_FILE, "device: leaf-r0")

    def test_swapping_the_ends_of_a_31_passes(self, orion: FleetCopy) -> None:
        """Overrides that swap which end takes the even address stay inside the /31."""
        orion.append(
            ADDRESSING_FILE,
            "  overrides:\n"
            "    - {device: leaf-r0, port: Ethernet33, address: 10.0.0.0/31}\n"
            "    - {device: spine-1, port: Ethernet1, address: 10.0.0.1/31}\n",
        )
        assert flagged(orion.evaluate(), "bgp.p2p-31") == []
