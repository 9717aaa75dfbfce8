"""Observe the selected devices (and the cabled neighbours their changes face) and
plan: the one observe-and-plan path of ``plumb plan``/``apply``/``drift``, ``rollout
start`` and the controller. Progress is reported through a callback, so the caller
decides how (a terminal bar, a log line, nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from reconciler.loop import observe_all
from reconciler.order import faced
from reconciler.plan import Plan, ordered_plan, plan_devices
from reconciler.render import render_desired
from reconciler.select import SelectError, select_devices
from reconciler.settings import State
from reconciler.targets import TargetError, Targets
from service.context import FleetContext
from service.errors import ServiceError
from service.owned import Ownership
from service.ownership import rollout_ownership


class Progress(Protocol):
    """How far a batch of device operations has come."""

    def begin(self, label: str, total: int) -> None: ...

    def advance(self, count: int = 1) -> None: ...

    def end(self) -> None: ...


class NoProgress:
    """Progress nobody watches."""

    def begin(self, label: str, total: int) -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def end(self) -> None:
        pass


def selected_names(context: FleetContext, select: str | None) -> list[str]:
    """The devices ``select`` names (all when None); refused when it names none."""
    try:
        names = select_devices(context.fleet.devices.values(), select)
    except SelectError as exc:
        raise ServiceError(str(exc)) from None
    if not names:
        raise ServiceError(f"--select {select!r} matches no device")
    return names


def make_plan(
    context: FleetContext,
    targets: Targets,
    select: str | None,
    *,
    progress: Progress | None = None,
    concurrency: int = 16,
    ownership: Ownership | None = None,
) -> Plan:
    """Observe ``select``'s devices ``concurrency`` at a time and plan them against the
    intent, rollback pins shown as HELD; then observe the neighbours their changes face
    (:func:`reconciler.order.faced`), which the order is proved safe against.

    One writer per field: a change an active or approved rollout owns is the
    rollout's (``ownership``, by default what the journal and the approvals say now);
    it is reported as claimed and left out of the plan's steps."""
    fleet = context.fleet
    names = selected_names(context, select)
    shown = progress or NoProgress()
    observed: dict[str, State | None] = {}
    errors: dict[str, str] = {}
    _observe(targets, names, concurrency, shown, observed, errors)
    desired = render_desired(fleet, names)
    holds = context.db.journal.holds()  # rollback pins: shown as HELD, never re-applied
    owned = rollout_ownership(context) if ownership is None else ownership
    plans = plan_devices(
        fleet,
        desired,
        observed,
        errors=errors,
        holds=holds,
        owner_of=owned.owner_text if owned else None,
    )
    changes = {n: dp.changes for n, dp in plans.items() if dp.changes}
    facing = sorted(faced(fleet, changes) - observed.keys())
    _observe(targets, facing, concurrency, shown, observed, errors)
    return ordered_plan(fleet, plans, observed)


def _observe(
    targets: Targets,
    names: list[str],
    concurrency: int,
    shown: Progress,
    observed: dict[str, State | None],
    errors: dict[str, str],
) -> None:
    """Observe ``names`` into ``observed`` (None and an entry in ``errors`` when it failed)."""
    if not names:
        return
    shown.begin("observing", len(names))
    tick: Callable[[object], None] = lambda _: shown.advance()  # noqa: E731
    try:
        observations = observe_all(targets, names, concurrency=concurrency, on_done=tick)
    except TargetError as exc:
        raise ServiceError(str(exc)) from None
    finally:
        shown.end()
    for name, found in observations.items():
        observed[name] = found.state
        if found.error:
            errors[name] = found.error
