"""What each platform can express (pure): a setting path a platform has no command
or config field for is *inexpressible* there, and is refused at plan time with the
platform's reason; it is never rendered into a change, so it is never sent.

A platform's rule sees the path and the device's observed state (model, NOS version,
buffer model...), since what a switch accepts depends on them. Platforms without a
rule (the GPU nodes' host platforms, the lab) express every path plumb renders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from reconciler.drivers.eos_caps import eos_inexpressible
from reconciler.drivers.sonic_caps import sonic_inexpressible
from reconciler.settings import Scalar

Rule = Callable[[str, Mapping[str, Scalar]], str | None]
"""(setting path, observed state) -> why the platform cannot express it, or None."""

RULES: dict[str, Rule] = {"eos": eos_inexpressible, "sonic": sonic_inexpressible}


def inexpressible(platform: str, path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why ``platform`` cannot express ``path`` (given what was observed), or None."""
    rule = RULES.get(platform)
    return None if rule is None else rule(path, observed)
