"""The platform policies (reconciler/expressible.py), in every front door's list: a
SONiC switch named by a marketing model instead of its HwSKU, and an intended value
the switch's release refuses to take, are findings of validate at their lines."""

from __future__ import annotations

from datetime import date

from policies.engine import PolicyReport, evaluate
from service.validation import fleet_policies
from tests.fleetcopy import FleetCopy

TODAY = date(2026, 12, 1)


def _report(orion: FleetCopy) -> PolicyReport:
    fleet = orion.load()
    return evaluate(fleet, fleet_policies(fleet, repo_policies=False), today=TODAY)


def _of(report: PolicyReport, policy: str) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (str(v.location), v.message, v.objects) for v in report.violations if v.policy == policy
    ]


def test_orion_passes_both(orion: FleetCopy) -> None:
    report = _report(orion)
    assert _of(report, "platform.sonic-hwsku") == [] and _of(report, "platform.expressible") == []


def test_a_marketing_name_is_a_finding_naming_the_hwsku(orion: FleetCopy) -> None:
    orion.replace("inventory/devices/leaves.yaml", "model: ACS-SN5600", "model: SN5600")
    for file in ("intent/groups.yaml", "intent/firmware.yaml"):
        orion.replace(file, "models: [ACS-SN5600]", "models: [ACS-SN5600, SN5600]", count=2)
    (found,) = _of(_report(orion), "platform.sonic-hwsku")
    where, message, objects = found
    assert where.startswith("inventory/devices/leaves.yaml:15:")  # leaf-r1's entry
    assert objects == ("leaf-r1",)
    assert "model 'SN5600' is no SONiC HwSKU the config updater knows" in message
    assert "add `hwsku: ACS-SN5600`" in message

    orion.replace(
        "inventory/devices/leaves.yaml", "model: SN5600", "model: SN5600\n    hwsku: ACS-SN5600"
    )
    assert _of(_report(orion), "platform.sonic-hwsku") == []


def test_ecn_a_release_refuses_is_a_finding_at_the_intent_line(orion: FleetCopy) -> None:
    """Tomahawk-5 (Arista-7060X6-64PE) WRED edits are refused by 202405's updater and
    accepted by 202411's: on the older bundle the ECN intent is a finding."""
    orion.replace(
        "inventory/devices/leaves.yaml",
        "model: ACS-SN5600",
        "model: ACS-SN5600\n    hwsku: Arista-7060X6-64PE",
    )
    assert _of(_report(orion), "platform.expressible") == []  # on sonic-202411
    orion.replace("intent/groups.yaml", "bundle: sonic-202411", "bundle: sonic-202405")
    ecn, headroom = sorted(_of(_report(orion), "platform.expressible"))
    for where, message, objects in (ecn, headroom):
        assert where.startswith("intent/qos.yaml:")
        assert objects == ("leaf-r1",)
        assert "config apply-patch of 202405 refuses" in message
        assert "Arista-7060X6-64PE" in message
    assert "intended ecn cannot be written on 1 SONiC switch(es) (leaf-r1)" in ecn[1]
    assert "WRED_PROFILE AZURE_LOSSLESS green thresholds" in ecn[1]
    assert "intended pfc_headroom_kb cannot be written" in headroom[1]
