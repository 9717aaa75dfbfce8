"""One state shape for desired, observed and before-state: a flat mapping from a
setting path (``interfaces/Ethernet12/mtu``) to a scalar.

``diff(desired, observed)`` yields the changes that take observed to desired;
``apply_changes(state, changes)`` is their effect; rollback is
``diff(before, observed_now)`` through the same code. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from inventory.problems import Location

Scalar = str | int | float | bool | None
State = Mapping[str, Scalar]


@dataclass(frozen=True, slots=True)
class Owned:
    """A desired value and its owner: the intent file and line it came from."""

    value: Scalar
    owner: Location


@dataclass(frozen=True, slots=True)
class Change:
    """One field of one device going from ``before`` to ``after``."""

    path: str
    before: Scalar
    after: Scalar
    owner: Location | None = None

    def describe(self) -> str:
        return f"{self.path}: {self.before!r} -> {self.after!r}"


Desired = Mapping[str, Owned]


def diff(desired: Desired, observed: State) -> list[Change]:
    """Changes for the fields in ``desired`` whose observed value differs, in path order."""
    changes = []
    for path in sorted(desired):
        want = desired[path]
        have = observed.get(path)
        if have != want.value:
            changes.append(Change(path, have, want.value, want.owner))
    return changes


def diff_states(target: State, observed: State) -> list[Change]:
    """Changes taking ``observed`` to ``target`` for every path ``target`` names (rollback)."""
    return [
        Change(path, observed.get(path), value)
        for path, value in sorted(target.items())
        if observed.get(path) != value
    ]


def apply_changes(state: State, changes: Iterable[Change]) -> dict[str, Scalar]:
    """The state after ``changes``: what a successful apply leaves on the device."""
    result = dict(state)
    for change in changes:
        result[change.path] = change.after
    return result


def as_desired_state(desired: Desired) -> dict[str, Scalar]:
    return {path: owned.value for path, owned in desired.items()}
