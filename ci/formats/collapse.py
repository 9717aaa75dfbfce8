"""Findings of one policy at one place, collapsed (pure): a host MTU that does not fit
is one annotation at its line saying how many ports it breaks, not 256 of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from policies.engine import Violation


@dataclass(frozen=True)
class Collapsed:
    """The first finding of a (policy, location) and every subject it stands for."""

    first: Violation
    subjects: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.subjects)

    def message(self) -> str:
        """The first finding's message, and how many more there are like it."""
        if self.count == 1:
            return self.first.message
        return f"{self.first.message} (and {self.count - 1} more like it: {self.count} in all)"


def collapse(violations: Iterable[Violation]) -> list[Collapsed]:
    """Group by policy, severity, location and waiver, in order of first appearance."""
    groups: dict[tuple[object, ...], list[Violation]] = {}
    for v in violations:
        waiver = v.waiver.reason if v.waiver is not None else None
        key = (v.policy, v.severity, v.location, waiver)
        groups.setdefault(key, []).append(v)
    return [Collapsed(vs[0], tuple(v.subject for v in vs)) for vs in groups.values()]
