"""What each platform can express (pure): a setting path a platform has no command
or config field for is *inexpressible* there, and is refused at plan time with the
platform's reason; it is never rendered into a change, so it is never sent.

A platform's rule sees the path and the device's observed state (model, NOS version,
buffer model...), since what a switch accepts depends on them. Platforms without a
rule (the GPU nodes' host platforms, the lab) express every path plumb renders.

The platform is the inventory's unless the device reports the one it runs as
``system/runs_platform`` (:func:`running_platform`): a switch of the real-network lab is
inventoried as EOS or SONiC and runs Linux + FRR.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from reconciler.drivers.eos_caps import DESIGN_INPUTS as EOS_DESIGN_INPUTS
from reconciler.drivers.eos_caps import EosChecker
from reconciler.drivers.linux_frr_caps import DESIGN_INPUTS as LINUX_FRR_DESIGN_INPUTS
from reconciler.drivers.linux_frr_caps import (
    LINUX_FRR,
    LINUX_NETNS,
    RUNS_PLATFORM,
    LinuxFrrChecker,
    NetnsHostChecker,
)
from reconciler.drivers.sonic_caps import DESIGN_INPUTS as SONIC_DESIGN_INPUTS
from reconciler.drivers.sonic_caps import SonicChecker
from reconciler.settings import Scalar

Checker = Callable[[str], str | None]
"""setting path -> why the platform cannot express it on one device, or None."""

Rule = Callable[[Mapping[str, Scalar]], Checker]
"""observed state -> the device's checker: what decides besides the path is read once."""

RULES: dict[str, Rule] = {
    "eos": EosChecker,
    "sonic": SonicChecker,
    LINUX_FRR: LinuxFrrChecker,
    LINUX_NETNS: NetnsHostChecker,
}

DESIGN_INPUTS: dict[str, frozenset[str]] = {
    "eos": frozenset(EOS_DESIGN_INPUTS),
    "sonic": frozenset(SONIC_DESIGN_INPUTS),
    LINUX_FRR: frozenset(LINUX_FRR_DESIGN_INPUTS),
}
"""Paths a platform never holds (it derives them): the intent's value only feeds
policies; refusing one is not a device failing to reach its intent."""


def running_platform(platform: str, observed: Mapping[str, Scalar]) -> str:
    """The platform a device runs: the one it reports, else the inventory's."""
    reported = observed.get(RUNS_PLATFORM)
    return reported if isinstance(reported, str) and reported else platform


def inexpressible(platform: str, path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why ``platform`` cannot express ``path`` (given what was observed), or None."""
    return checker(platform, observed)(path)


def checker(platform: str, observed: Mapping[str, Scalar]) -> Checker:
    """The checker of one device of ``platform`` (never refusing on a platform without
    a rule): ask it about each path instead of calling :func:`inexpressible` per path."""
    rule = RULES.get(running_platform(platform, observed))
    return _express_all if rule is None else rule(observed)


def _express_all(path: str) -> None:
    return None
