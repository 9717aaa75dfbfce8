"""What ``plumb validate`` can tell about the ``drivers`` rules of ``plumb.yaml`` before
any device is reached: options the switch drivers would refuse, and an ``image``
template that cannot name a valid image for a NOS version the intent pins on the
devices the rule reaches. Found at validate time, these never stop an apply half-way.

Pure: reads the loaded fleet only (no driver is built, no connection made).
"""

from __future__ import annotations

import re

from intent.fleet import CONFIG_FILE, Fleet
from inventory.problems import Location, Problem
from reconciler.drivers.eos_lines import eos_image
from reconciler.drivers.safevalues import EOS_IMAGE, IMAGE_URL
from reconciler.drivers.switch_access import parse_options
from reconciler.targets import rule_for

_IMAGE_FORMS: dict[str, tuple[re.Pattern[str], str]] = {
    "eos": (EOS_IMAGE, "flash:, usb1: or file: and a path ending in .swi"),
    "sonic": (IMAGE_URL, "an http(s) URL of letters, digits and ._~/:%+-"),
}


def check_driver_rules(fleet: Fleet) -> list[Problem]:
    """Problems of the switch drivers' rules, each at its place in plumb.yaml."""
    doc = fleet.where.docs.get(CONFIG_FILE)
    problems: list[Problem] = []
    rules = fleet.config.drivers
    for index, rule in enumerate(rules):
        if rule.driver not in _IMAGE_FORMS:
            continue

        def where(*keys: str | int, index: int = index) -> Location:
            if doc is None:
                return Location(CONFIG_FILE, 1, 1)
            return doc.where("drivers", index, *keys)

        try:
            options = parse_options(rule.options)
        except ValueError as exc:
            problems.append(Problem(where("options"), f"drivers[{index}].options: {exc}"))
            continue
        if not options.image:
            continue
        pattern, form = _IMAGE_FORMS[rule.driver]
        for version in _pinned_versions(fleet, index):
            image = eos_image(options.image, version)  # {version} filled in, as the driver does
            if not pattern.match(image):
                problems.append(
                    Problem(
                        where("options", "image"),
                        f"drivers[{index}].options.image: for NOS {version} it names"
                        f" {image!r}, which the {rule.driver} driver refuses (expected {form})",
                    )
                )
                break
    return problems


def _pinned_versions(fleet: Fleet, index: int) -> list[str]:
    """NOS versions the intent pins on the devices rule ``index`` reaches, sorted."""
    rules = fleet.config.drivers
    versions: set[str] = set()
    for name, device in fleet.devices.items():
        if rule_for(rules, device) is not rules[index]:
            continue
        bundle = fleet.setting(name, "firmware", "bundle")
        found = fleet.bundles.get(str(bundle.value)) if bundle is not None else None
        nos = found.components.get("nos") if found is not None else None
        if nos is not None:
            versions.add(str(nos))
    return sorted(versions)
