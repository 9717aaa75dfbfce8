"""Which SONiC HwSKUs plumb can tell the config updater's rules for (pure, from the
upstream rule files in :mod:`.gcu_rules`): a HwSKU the updater's field validators
match in some release, and the HwSKUs a marketing model name stands for (``SN5600``
-> ``ACS-SN5600``), so an inventory that names a switch by its marketing name gets a
finding that says which HwSKU to name instead of every ECN change refused later."""

from __future__ import annotations

import re
from functools import cache

from reconciler.drivers.sonic_gcu import asic_name, releases, shipped

_PREFIX = re.compile(r"^(?:ACS|Mellanox|Nvidia|NVIDIA|Arista|Force10|Celestica|Dell)-", re.I)


@cache
def known_hwsku(hwsku: str, asic_type: str | None = None) -> bool:
    """Does any release's updater map ``hwsku`` to an ASIC family?"""
    return any(asic_name(shipped(r), hwsku, asic_type) != "unknown" for r in releases())


@cache
def _spectrum_hwskus() -> tuple[str, ...]:
    names: set[str] = set()
    for release in releases():
        conf = shipped(release).conf
        if conf is None:
            continue
        mapping = conf["helper_data"]["rdma_config_update_validator"]
        for listed in mapping.get("mellanox_asics", {}).values():
            names.update(listed)
    return tuple(sorted(names))


def model_of(hwsku: str) -> str:
    """The marketing model a HwSKU names: ``SN4700`` of ``Mellanox-SN4700-O8C48`` and of
    ``ACS-MSN4700`` (Mellanox's older ``MSN`` spelling)."""
    bare = _PREFIX.sub("", hwsku).split("-", 1)[0].upper()
    return bare[1:] if bare.startswith("MSN") else bare


def hwskus_for(model: str) -> list[str]:
    """The HwSKUs the updater knows for the marketing name ``model`` (none when it is not
    one), the platform's default (``ACS-...``) first."""
    wanted = model_of(model)
    found = [h for h in _spectrum_hwskus() if model_of(h) == wanted]
    return sorted(found, key=lambda h: (not h.upper().startswith("ACS-"), h))
