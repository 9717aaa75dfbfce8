"""Plans from recorded facts (pure): a reconcile plan whose observed states come from a
snapshot, the lab database or a rendered revision instead of the devices.

A device with no recorded state is *unknown*, with the reason given: it is never
taken to be in sync. ``build_plan`` then plans nothing for it and refuses a pairwise
change that faces it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from intent.fleet import Fleet
from reconciler.plan import Holds, Plan, build_plan
from reconciler.render import DesiredFleet, render_desired
from reconciler.settings import Scalar, State, as_desired_state

States = Mapping[str, Mapping[str, Scalar]]
NOT_IN_SNAPSHOT = "not observed: the device is not in the snapshot"
NOT_IN_LAB = "not observed: the device is not in the lab fleet"


def cabled_to(fleet: Fleet, names: Sequence[str]) -> list[str]:
    """Devices cabled to ``names`` but not among them (they take part in the safety proof)."""
    chosen = set(names)
    found = {pl.peer.device for n in names for pl in fleet.cabling.ports(n)}
    return sorted(found - chosen)


def recorded(
    names: Iterable[str], states: States, missing: str
) -> tuple[dict[str, State | None], dict[str, str]]:
    """The recorded state of each device, and ``missing`` as the error of each without one."""
    observed: dict[str, State | None] = {}
    errors: dict[str, str] = {}
    for name in names:
        state = states.get(name)
        observed[name] = state
        if state is None:
            errors[name] = missing
    return observed, errors


def plan_from_states(
    fleet: Fleet,
    states: States,
    *,
    names: Sequence[str] | None = None,
    missing: str = NOT_IN_SNAPSHOT,
    desired: DesiredFleet | None = None,
    holds: Holds | None = None,
) -> Plan:
    """The plan of ``names`` (default: every device) against recorded ``states``, the
    devices cabled to them included in the safety proof, as ``plumb plan`` makes it."""
    chosen = list(fleet.devices) if names is None else list(names)
    observed, errors = recorded([*chosen, *cabled_to(fleet, chosen)], states, missing)
    wanted = desired if desired is not None else render_desired(fleet, chosen)
    return build_plan(fleet, wanted, observed, errors=errors, holds=holds)


def states_of_revision(rendered: DesiredFleet, devices: Iterable[str]) -> dict[str, State]:
    """A revision's rendered intent taken as the observed state of ``devices``: each
    device runs what that revision declares; a device it does not know is assumed
    unconfigured (no managed field set), so every setting is planned for it."""
    return {name: as_desired_state(rendered.get(name, {})) for name in devices}
