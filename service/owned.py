"""Which drifted fields a rollout owns, so the drift pass never writes them (pure).

Every field has one writer. While a rollout is active (running, held, awaiting
promotion, rolling back, or aborted with its automatic rollback still to run), the
fields it changes belong to it: the drift pass reports drift on them as owned by
that rollout and never corrects it, whatever the ``serve.drift`` rules say. A
``correct`` rule on ``firmware/*`` would otherwise put the new intent on the targets
of later waves outside their waves, or undo what a rollback restores.

A rollout owns:

* on each of its targets, the paths the journal records for that target (its
  intended values): ``target``;
* on any other device, drift on one of those paths (the same intent commit changed
  it there too, outside the rollout's selection, or on a device that was at intent
  when it started): ``carried``. The rollout is the writer of that change: the new
  value is not written anywhere by the drift pass before the rollout has shown it
  safe. When the rollout has completed, the drift rules apply again.

An approved rollout still queued behind another (:mod:`serve.approvals`), or
not begun yet, owns the paths its spec carries (``targets.paths`` globs) on every
device, as an active rollout owns its change elsewhere; a spec that names no paths
carries every pending change of the devices it selects, so it owns those devices'
drift: ``queued``. Its change waits for its waves too.

The first claim that matches wins: active rollouts before queued approvals, each in
the order given.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field

TARGET = "target"
CARRIED = "carried"
QUEUED = "queued"


@dataclass(frozen=True)
class Claim:
    """What one rollout (or queued approval) owns."""

    rollout: str  # the rollout id, or how the queued approval is named
    targets: Mapping[str, frozenset[str]] = field(default_factory=dict)  # device -> paths
    selected: frozenset[str] = frozenset()  # queued: the devices its spec selects
    globs: tuple[str, ...] = ()  # queued: the spec's targets.paths (empty: every path)
    waves: Mapping[str, int] = field(default_factory=dict)  # target device -> its wave

    def carried(self) -> frozenset[str]:
        """Every path the rollout writes on any of its targets."""
        return frozenset().union(*self.targets.values()) if self.targets else frozenset()


@dataclass(frozen=True)
class Owner:
    rollout: str
    why: str  # target | carried | queued
    wave: int | None = field(default=None, compare=False)  # a target's wave

    def describe(self) -> str:
        if self.why == TARGET:
            return f"owned by rollout {self.rollout} (a target)"
        if self.why == CARRIED:
            return f"owned by rollout {self.rollout} (the change it carries)"
        return f"owned by rollout {self.rollout} (approved, queued)"

    def short(self) -> str:
        """``rollout ID (wave N)``, as a plan shows the owner of a change."""
        if self.why == TARGET and self.wave is not None:
            return f"rollout {self.rollout} (wave {self.wave})"
        if self.why == TARGET:
            return f"rollout {self.rollout}"
        if self.why == CARRIED:
            return f"rollout {self.rollout} (the change it carries)"
        return f"rollout {self.rollout} (approved, queued)"


class Ownership:
    """The claims of the active rollouts and queued approvals, looked up per field."""

    def __init__(self, claims: tuple[Claim, ...] = ()) -> None:
        self.claims = claims
        self._carried = [(c, c.carried()) for c in claims]

    def __bool__(self) -> bool:
        return bool(self.claims)

    def owner(self, device: str, path: str) -> Owner | None:
        """The rollout that owns ``path`` on ``device``, if any."""
        for claim, carried in self._carried:
            if path in claim.targets.get(device, ()):
                return Owner(claim.rollout, TARGET, claim.waves.get(device))
            if path in carried:
                return Owner(claim.rollout, CARRIED)
            if claim.globs:
                if any(fnmatch.fnmatchcase(path, g) for g in claim.globs):
                    return Owner(claim.rollout, QUEUED)
            elif device in claim.selected:
                return Owner(claim.rollout, QUEUED)
        return None

    def owner_text(self, device: str, path: str) -> str | None:
        """Who owns the change of ``path`` on ``device`` (a plan's ``owner_of``)."""
        owner = self.owner(device, path)
        return None if owner is None else owner.short()

    def without(self, rollout: str) -> Ownership:
        """The claims of every rollout but ``rollout`` (an audited override)."""
        return Ownership(tuple(c for c in self.claims if c.rollout != rollout))

    def rollouts(self) -> list[str]:
        return [c.rollout for c in self.claims]


NO_OWNERSHIP = Ownership()
