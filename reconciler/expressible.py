"""Policies over what the fleet's platforms can express, decided from the inventory
and the intent alone (``plumb validate``, no device): the knowledge is the drivers'
(:mod:`reconciler.capabilities`, the config updater's rule files), so these policies
live on this floor and :func:`service.validation.fleet_policies` adds them to the
built-in library for every caller.

* ``platform.sonic-hwsku``: a SONiC switch names a HwSKU that some release's config
  updater maps to an ASIC family (``hwsku:``, else ``model``); a marketing name such as
  ``SN5600`` is a finding naming the HwSKUs it stands for. Without a known HwSKU plumb
  can decide none of the updater's field rules for the switch.
* ``platform.expressible``: an intended value the switch's platform refuses to take
  (ECN thresholds, lossless headroom), decided as the plan decides it, from the HwSKU
  and the SONiC release the switch's firmware bundle pins. Such a value is never
  written, so the switch would never reach its intent: it is a finding at the intent
  line, not a silent "converged". Facts only a device can tell (its WRED profile, its
  buffer model, EOS port modes, ECN units) are decided by ``plumb plan`` instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from intent.fleet import Fleet
from intent.resolve import Sourced
from inventory.models import Device
from policies.engine import Finding, Policy, Severity
from policies.views import where
from reconciler.capabilities import DESIGN_INPUTS
from reconciler.drivers.sonic_caps import SonicChecker
from reconciler.drivers.sonic_hwsku import hwskus_for, known_hwsku
from reconciler.render import firmware_bundle
from reconciler.settings import Scalar


def _sonic(fleet: Fleet) -> Iterator[Device]:
    return (d for d in fleet.devices.values() if d.platform.value == "sonic")


def sonic_hwsku(fleet: Fleet) -> Iterator[Finding]:
    for device in _sonic(fleet):
        hwsku = device.hwsku or device.model
        if known_hwsku(hwsku):
            continue
        field = "hwsku" if device.hwsku else "model"
        candidates = hwskus_for(hwsku)
        if candidates:
            named = ", ".join(candidates[:4]) + (" ..." if len(candidates) > 4 else "")
            advice = (
                f"{hwsku} is a marketing name: add `hwsku: {candidates[0]}` (or the one the "
                f"switch runs: {named})"
            )
        else:
            advice = "name the HwSKU the switch runs (`show platform summary`) with `hwsku:`"
        yield Finding(
            device.name,
            f"{device.name}: {field} {hwsku!r} is no SONiC HwSKU the config updater knows, so "
            f"plumb cannot tell which ECN and buffer fields the switch accepts; {advice}",
            (fleet.where.devices[device.name],),
            (device.name,),
        )


def _release_facts(fleet: Fleet, device: Device) -> dict[str, Scalar] | None:
    """What the switch will report once its bundle runs: HwSKU and SONiC version."""
    hwsku = device.hwsku or device.model
    if not known_hwsku(hwsku):
        return None  # platform.sonic-hwsku's finding
    bundle = firmware_bundle(fleet, fleet.intent[device.name])  # as the plan renders it
    version = None if bundle is None else bundle[0].get("nos")
    if version is None:
        return None
    return {"system/model": hwsku, "system/nos_version": version}


def expressible(fleet: Fleet) -> Iterator[Finding]:
    design = DESIGN_INPUTS["sonic"]
    # one finding per (intent line, reason), naming every switch it holds for
    found: dict[tuple[str, str], tuple[Sourced[object], str, list[str]]] = {}
    verdicts: dict[tuple[Scalar, Scalar, str], str | None] = {}  # switches share facts
    for device in _sonic(fleet):
        facts = _release_facts(fleet, device)
        if facts is None:
            continue
        refuses = _Memo(SonicChecker(facts), facts, verdicts)
        intent = fleet.intent[device.name]
        asked: list[tuple[str, Sourced[object] | None]] = []
        ecn = intent.get("qos", "ecn")
        if ecn is not None and ecn.value:
            asked.append((f"qos/ecn/{ecn.value[0].priority}/kmin_kb", ecn))
        asked.append(("qos/pfc_headroom_kb", intent.get("qos", "pfc_headroom_kb")))
        for path, value in asked:
            if value is None or value.value is None or path in design:
                continue
            reason = refuses(path)
            if reason is None:
                continue
            key = (str(value.origin), reason)
            found.setdefault(key, (value, path.split("/")[1], []))[2].append(device.name)
    for (_, reason), (value, what, devices) in found.items():
        shown = ", ".join(devices[:3]) + (
            f" and {len(devices) - 3} more" if len(devices) > 3 else ""
        )
        yield Finding(
            devices[0],
            f"intended {what} cannot be written on {len(devices)} SONiC switch(es) ({shown}),"
            f" so they would never reach their intent: {reason}",
            where(value),
            tuple(devices),
        )


class _Memo:
    """A switch's checker, asked once per (HwSKU, version, path) over the fleet."""

    def __init__(
        self,
        checker: SonicChecker,
        facts: dict[str, Scalar],
        verdicts: dict[tuple[Scalar, Scalar, str], str | None],
    ) -> None:
        self.checker = checker
        self.key = (facts["system/model"], facts["system/nos_version"])
        self.verdicts = verdicts

    def __call__(self, path: str) -> str | None:
        key = (*self.key, path)
        if key not in self.verdicts:
            self.verdicts[key] = self.checker(path)
        return self.verdicts[key]


PLATFORM_POLICIES: tuple[Policy, ...] = (
    Policy(
        "platform.sonic-hwsku",
        Severity.deny,
        "Every SONiC switch names a HwSKU the config updater knows",
        "The config updater decides per HwSKU which ECN and buffer fields a patch may "
        "replace; a marketing name (SN5600) matches none, so every such change is refused "
        "while the switch keeps its old thresholds.",
        "Add `hwsku:` with the HwSKU the switch runs (for an SN5600, ACS-SN5600).",
        sonic_hwsku,
    ),
    Policy(
        "platform.expressible",
        Severity.deny,
        "No intended value is one the switch's platform refuses to take",
        "plumb never writes what a platform refuses; a switch whose intent holds such a "
        "value never reaches its intent, and must not be reported converged.",
        "Change the intent for those switches (a group override), or move them to a "
        "release or HwSKU whose config updater accepts the field.",
        expressible,
    ),
)
