"""Observe the selected devices (and their cabled neighbours) and plan: the one
observe-and-plan path of ``plumb plan``/``apply``/``drift``, ``rollout start`` and the
controller. Progress is reported through a callback, so the caller decides how (a
terminal bar, a log line, nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from reconciler.loop import observe_all
from reconciler.plan import Plan, build_plan
from reconciler.render import render_desired
from reconciler.select import SelectError, neighbours, select_devices
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
    """Observe ``select``'s devices and their neighbours ``concurrency`` at a time and
    plan them against the intent, rollback pins shown as HELD.

    One writer per field: a change an active or approved rollout owns is the
    rollout's (``ownership``, by default what the journal and the approvals say now);
    it is reported as claimed and left out of the plan's steps."""
    fleet = context.fleet
    names = selected_names(context, select)
    everyone = names + neighbours(fleet, names)
    shown = progress or NoProgress()
    shown.begin("observing", len(everyone))
    tick: Callable[[object], None] = lambda _: shown.advance()  # noqa: E731
    try:
        observations = observe_all(targets, everyone, concurrency=concurrency, on_done=tick)
    except TargetError as exc:
        raise ServiceError(str(exc)) from None
    finally:
        shown.end()
    observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
    errors = {n: o.error for n, o in observations.items() if o.error}
    desired = render_desired(fleet, names)
    holds = context.db.journal.holds()  # rollback pins: shown as HELD, never re-applied
    owned = rollout_ownership(context) if ownership is None else ownership
    return build_plan(
        fleet,
        desired,
        observed,
        errors=errors,
        holds=holds,
        owner_of=owned.owner_text if owned else None,
    )
