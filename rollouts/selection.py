"""A spec's ``targets.select`` against the fleet (pure): it must select something,
and every ``|`` alternative should match some device, or it is most likely a typo
(``role=leaf|spines`` silently selects the leaves alone).
"""

from __future__ import annotations

from collections.abc import Iterable

from inventory.models import Device
from reconciler.select import select_devices
from rollouts.caps import PlanError


def check_selection(devices: Iterable[Device], expr: str) -> list[str]:
    """PlanError (at ``targets.select``) when ``expr`` selects no device; otherwise a
    warning for every alternative that matches no device."""
    fleet = list(devices)
    if not select_devices(fleet, expr):
        raise PlanError(f"targets.select {expr!r} matches no device", ("targets", "select"))
    warnings = []
    for raw in expr.split(","):
        term = raw.strip()
        key, _, value = term.partition("=") if "=" in term else ("name", "", term)
        for alternative in (p.strip() for p in value.split("|")):
            if alternative and not select_devices(fleet, f"{key.strip()}={alternative}"):
                warnings.append(
                    f"targets.select: {key.strip()}={alternative} (in {expr!r}) matches no "
                    "device: a typo?"
                )
    return warnings
