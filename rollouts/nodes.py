"""A running rollout's journal as the wave steps share it: the rollout with its spec
(:class:`Context`), operator aborts, and the node lifecycle walked transition by
transition (journaled and audited; :mod:`rollouts.lifecycle` says what is allowed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inventory.problems import Location
from reconciler.state.journal import Lifecycle, RolloutRow, RolloutStatus, TargetRow
from rollouts import lifecycle
from rollouts.runtime import Runtime
from rollouts.spec import RolloutSpec


class RolloutAborted(Exception):
    """An operator aborted the rollout (``plumb rollout abort``) while it ran."""


@dataclass(frozen=True)
class Context:
    """One rollout as the executor sees it."""

    row: RolloutRow
    spec: RolloutSpec

    @property
    def id(self) -> str:
        return self.row.id


def load_context(rt: Runtime, rollout: str) -> Context:
    row = rt.db.journal.get(rollout)
    if row is None:
        raise KeyError(rollout)
    return Context(row, RolloutSpec.model_validate(row.plan["spec"]))


def owner(rollout: str, what: str) -> Location:
    return Location(f"<rollout {rollout} {what}>", 0, 0)


def stop_if_aborted(rt: Runtime, ctx: Context) -> None:
    current = rt.db.journal.get(ctx.id)
    if current is not None and current.status is RolloutStatus.aborted:
        raise RolloutAborted(current.reason or "aborted")


def move(rt: Runtime, ctx: Context, rows: Sequence[TargetRow], wanted: Lifecycle) -> None:
    """Walk each drained target to ``wanted`` through allowed transitions, journaled
    and audited step by step."""
    paths = {
        row.device: lifecycle.path_to(row.lifecycle, wanted)
        for row in rows
        if row.lifecycle is not Lifecycle.not_drained
    }
    for index in range(max((len(p) for p in paths.values()), default=0)):
        groups: dict[Lifecycle, list[str]] = {}
        for device, path in paths.items():
            if index < len(path):
                groups.setdefault(path[index], []).append(device)
        for state, names in groups.items():
            rt.db.journal.set_lifecycle(ctx.id, names, state)
            rt.record("lifecycle", detail={"rollout": ctx.id, "to": state.value, "nodes": names})
