"""Node lifecycle during a drained rollout (pure): which transitions are allowed.

::

    in_service -> draining -> maintenance -> acceptance -> in_service
       ^------------'              ^              |
                                   |              v
                                   +--------- repair

A node is written only in ``maintenance``; once there, it returns to service only by
passing acceptance (a drain that never completed, the node never written, is given
back: ``draining -> in_service``), and a node that fails acceptance goes to ``repair``
(from where a rollback takes it back through maintenance and acceptance). Targets of a rollout that
drains nothing (switch changes) are ``not_drained`` throughout.
"""

from __future__ import annotations

from reconciler.state.journal import Lifecycle

ALLOWED: dict[Lifecycle, frozenset[Lifecycle]] = {
    Lifecycle.in_service: frozenset({Lifecycle.draining}),
    Lifecycle.draining: frozenset({Lifecycle.maintenance, Lifecycle.in_service}),
    Lifecycle.maintenance: frozenset({Lifecycle.acceptance}),
    Lifecycle.acceptance: frozenset({Lifecycle.in_service, Lifecycle.repair}),
    Lifecycle.repair: frozenset({Lifecycle.maintenance}),
    Lifecycle.not_drained: frozenset(),
}


class LifecycleError(Exception):
    """A transition the lifecycle does not allow."""


def check(device: str, current: Lifecycle, wanted: Lifecycle) -> None:
    """Raise unless ``current -> wanted`` is allowed (staying put is always allowed)."""
    if current is wanted or wanted in ALLOWED[current]:
        return
    allowed = ", ".join(sorted(s.value for s in ALLOWED[current])) or "nothing"
    raise LifecycleError(
        f"{device}: {current.value} -> {wanted.value} is not allowed "
        f"(from {current.value} only: {allowed})"
    )


def path_to(current: Lifecycle, wanted: Lifecycle) -> list[Lifecycle]:
    """The allowed steps from ``current`` to ``wanted`` (shortest), excluding
    ``current``; LifecycleError if there is none."""
    frontier: list[tuple[Lifecycle, list[Lifecycle]]] = [(current, [])]
    seen = {current}
    while frontier:
        state, steps = frontier.pop(0)
        if state is wanted:
            return steps
        for nxt in sorted(ALLOWED[state], key=lambda s: s.value):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append((nxt, [*steps, nxt]))
    raise LifecycleError(f"no allowed path from {current.value} to {wanted.value}")


def writable(state: Lifecycle) -> bool:
    """May plumb write to a node in this state?"""
    return state in (Lifecycle.maintenance, Lifecycle.not_drained)
