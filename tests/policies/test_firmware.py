"""Firmware policies: a bundle validated for the device's model, and no blocked combination."""

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

FIRMWARE_POLICIES = ("firmware.bundle-validated", "firmware.blocked")
FIRMWARE_FILE = "intent/firmware.yaml"
GROUPS_FILE = "intent/groups.yaml"
DEVICES_FILE = "intent/devices.yaml"
EOS_DEVICES = {"spine-1", "spine-2", "spine-3", "spine-4", "leaf-r0", "leaf-r2", "leaf-r4"}
EOS_DEVICES |= {"leaf-r6", "fe-1"}
SONIC_LEAVES = {"leaf-r1", "leaf-r3", "leaf-r5", "leaf-r7"}


def _add_bundle(orion: FleetCopy, yaml_item: str) -> None:
    """Insert one more validated bundle ahead of the blocked list."""
    orion.replace(FIRMWARE_FILE, "  blocked:\n", yaml_item + "  blocked:\n")


def _add_blocked(orion: FleetCopy, yaml_item: str) -> None:
    orion.append(FIRMWARE_FILE, yaml_item)


OLD_HX8_BUNDLE = """\
    - name: hx8-2025.12
      models: [HX8]
      components:
        gpu_driver: "550.54.15"
        nic_firmware: "28.39.1002"
        nic_driver: "{nic_driver}"
"""


@pytest.mark.parametrize("policy_id", FIRMWARE_POLICIES)
def test_clean_orion_has_no_violation(clean_report: PolicyReport, policy_id: str) -> None:
    """The unchanged ORION fleet satisfies every firmware policy."""
    assert flagged(clean_report, policy_id) == []


class TestBundleValidated:
    def test_bundle_for_another_model_is_flagged(self, orion: FleetCopy) -> None:
        """An EOS leaf assigned the SONiC bundle runs a bundle never validated on its model."""
        orion.set_device_overrides("  leaf-r2:\n    firmware:\n      bundle: sonic-202411\n")
        violation = only(orion.evaluate(), "firmware.bundle-validated")
        assert_denied([violation])
        assert violation.subject == "leaf-r2"
        assert violation.message == (
            "leaf-r2: bundle sonic-202411 is validated for ACS-SN5600, not 7060DX5-64S"
        )
        assert places(violation) == [
            at(orion, DEVICES_FILE, "bundle: sonic-202411"),
            at(orion, FIRMWARE_FILE, "- name: sonic-202411"),
        ]

    def test_group_assigning_a_node_bundle_to_switches_flags_every_member(
        self, orion: FleetCopy
    ) -> None:
        """The EOS group pointed at the HX8 bundle flags all nine EOS switches at the group line."""
        orion.replace(
            GROUPS_FILE,
            "set: {firmware: {bundle: eos-4.32.2F}}",
            "set: {firmware: {bundle: hx8-2026.06}}",
        )
        report = orion.evaluate()
        found = flagged(report, "firmware.bundle-validated")
        assert_denied(found)
        assert subjects(report, "firmware.bundle-validated") == EOS_DEVICES
        assert {primary(v) for v in found} == {at(orion, GROUPS_FILE, "bundle: hx8-2026.06")}
        assert all("bundle hx8-2026.06 is validated for HX8, not " in v.message for v in found)

    def test_bundle_listing_several_models_accepts_each(self, orion: FleetCopy) -> None:
        """The EOS bundle validated for both Arista models is valid on a spine and on fe-1."""
        orion.set_device_overrides(
            "  fe-1:\n    firmware:\n      bundle: eos-4.31.2F\n"
            "  spine-1:\n    firmware:\n      bundle: eos-4.31.2F\n"
        )
        assert flagged(orion.evaluate(), "firmware.bundle-validated") == []

    def test_unset_bundle_is_flagged(self, orion: FleetCopy) -> None:
        """A device whose bundle is explicitly nulled has no firmware bundle."""
        orion.set_device_overrides("  gpu-n07:\n    firmware:\n      bundle: null\n")
        violation = only(orion.evaluate(), "firmware.bundle-validated")
        assert_denied([violation])
        assert violation.subject == "gpu-n07"
        assert violation.message == "gpu-n07 (HX8) has no firmware bundle"


class TestBlocked:
    def test_bundle_with_the_blocked_pair_is_flagged(self, orion: FleetCopy) -> None:
        """A node moved to a bundle pairing NIC firmware 28.39.1002 with driver 23.10 is flagged."""
        _add_bundle(orion, OLD_HX8_BUNDLE.format(nic_driver="23.10-1.1.9.0"))
        orion.set_device_overrides("  gpu-n30:\n    firmware:\n      bundle: hx8-2025.12\n")
        report = orion.evaluate()
        violation = only(report, "firmware.blocked")
        assert_denied([violation])
        assert violation.subject == "gpu-n30"
        assert violation.message.startswith(
            "gpu-n30: bundle hx8-2025.12 has the blocked combination "
            "nic_driver 23.10-1.1.9.0, nic_firmware 28.39.1002 (ConnectX-7 firmware 28.39.1002 "
            "with driver 23.10-1.1.9.0 resets the NIC"
        )
        assert places(violation) == [
            at(orion, DEVICES_FILE, "bundle: hx8-2025.12"),
            at(orion, FIRMWARE_FILE, "- models: [HX8]"),
        ]
        # The bundle itself is validated for HX8: only the blocked policy objects.
        assert flagged(report, "firmware.bundle-validated") == []

    def test_half_of_a_blocked_pair_is_allowed(self, orion: FleetCopy) -> None:
        """The blocked NIC firmware with a different driver matches no blocked combination."""
        _add_bundle(orion, OLD_HX8_BUNDLE.format(nic_driver="24.04-0.6.6.0"))
        orion.set_device_overrides("  gpu-n30:\n    firmware:\n      bundle: hx8-2025.12\n")
        assert flagged(orion.evaluate(), "firmware.blocked") == []

    def test_blocked_combination_applies_only_to_its_models(self, orion: FleetCopy) -> None:
        """A SONiC advisory for ACS-SN5600 flags the four SONiC leaves and no Arista device."""
        _add_blocked(
            orion,
            "    - models: [ACS-SN5600]\n"
            '      components: {nos: "202411"}\n'
            "      reason: buffer carving bug on ACS-SN5600\n",
        )
        report = orion.evaluate()
        found = flagged(report, "firmware.blocked")
        assert_denied(found)
        assert subjects(report, "firmware.blocked") == SONIC_LEAVES
        for violation in found:
            assert violation.message == (
                f"{violation.subject}: bundle sonic-202411 has the blocked combination "
                "nos 202411 (buffer carving bug on ACS-SN5600)"
            )
            assert places(violation) == [
                at(orion, GROUPS_FILE, "bundle: sonic-202411"),
                at(orion, FIRMWARE_FILE, "- models: [ACS-SN5600]"),
            ]

    def test_blocked_combination_without_models_applies_to_every_model(
        self, orion: FleetCopy
    ) -> None:
        """A blocked NOS version with no model list flags every device running it."""
        _add_blocked(
            orion,
            '    - components: {nos: "4.32.2F"}\n      reason: withdrawn release\n',
        )
        report = orion.evaluate()
        assert subjects(report, "firmware.blocked") == EOS_DEVICES
        assert {places(v)[-1] for v in flagged(report, "firmware.blocked")} == {
            at(orion, FIRMWARE_FILE, '- components: {nos: "4.32.2F"}')
        }
