"""Firmware policies: each device runs a bundle validated for its model, and no device
matches a known-bad combination.

Compatibility is a list of validated bundles plus a blocked list, checked per device
against its model: a bundle validated on HX8 says nothing about another chassis.
"""

from __future__ import annotations

from collections.abc import Iterator

from intent.fleet import Fleet
from policies.engine import Finding, policy
from policies.views import where


@policy(
    "firmware.bundle-validated",
    title="Each device runs a bundle validated for its model",
    rationale="Versions are only known to work together as a validated set, on the hardware "
    "they were validated on.",
    remediation="Assign a bundle whose models list includes the device's model.",
)
def bundle_validated(fleet: Fleet) -> Iterator[Finding]:
    for name, device in fleet.devices.items():
        chosen = fleet.intent[name].get("firmware", "bundle")
        if chosen is None or chosen.value is None:
            yield Finding(
                name,
                f"{name} ({device.model}) has no firmware bundle",
                (fleet.where.devices[name],),
                (name,),
            )
            continue
        bundle = fleet.bundles.get(chosen.value)
        if bundle is not None and device.model not in bundle.models:
            yield Finding(
                name,
                f"{name}: bundle {bundle.name} is validated for "
                f"{', '.join(bundle.models)}, not {device.model}",
                (*where(chosen), fleet.where.bundles[bundle.name]),
                (name,),
            )


@policy(
    "firmware.blocked",
    title="No device matches a blocked combination",
    rationale="Blocked combinations are known-bad (field failures, vendor advisories).",
    remediation="Move the device to a bundle that avoids the combination.",
)
def blocked(fleet: Fleet) -> Iterator[Finding]:
    for name, device in fleet.devices.items():
        chosen = fleet.intent[name].get("firmware", "bundle")
        bundle = fleet.bundles.get(chosen.value) if chosen and chosen.value else None
        if bundle is None:
            continue
        for index, combo in enumerate(fleet.blocked):
            if combo.models and device.model not in combo.models:
                continue
            if all(bundle.components.get(k) == v for k, v in combo.components.items()):
                pins = ", ".join(f"{k} {v}" for k, v in sorted(combo.components.items()))
                yield Finding(
                    name,
                    f"{name}: bundle {bundle.name} has the blocked combination "
                    f"{pins} ({combo.reason})",
                    (*where(chosen), fleet.where.blocked[index]),
                    (name,),
                )
