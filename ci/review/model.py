"""What a review finds, as data: the formats render it, the exit code comes from it.

A :class:`Review` holds both validation outcomes (base and head), the intent values the
change moves (each at its owner's line at head), the policy delta, the plan it
implies, its blast radius and drain, the rollout it needs, and the blockers. The
verdict is ``blocked`` exactly when there is a blocker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ci.outcome import ValidateOutcome
from inventory.problems import Location
from policies.engine import Violation
from reconciler.plan import Plan
from reconciler.settings import Scalar

if TYPE_CHECKING:  # rollout planning imports scipy (seconds): only a review pays for it
    from rollouts.planning import RolloutPlan
    from rollouts.spec import RolloutSpec

REVIEW_SCHEMA = "plumb.review/v1"
JsonValue = Any
"""A value as JSON has it (str, int, float, bool, None, list, dict)."""


@dataclass(frozen=True)
class RevisionInfo:
    name: str
    commit: str
    summary: str = ""


@dataclass(frozen=True)
class SettingChange:
    """One intent value the change moves, and every device whose effective value moves
    with it. ``location`` is the owner at head (``None``: the value is gone at head,
    ``base_location`` says where it was). ``applies_to`` is the devices the change takes
    effect on, as the blast radius counts them (see :func:`ci.review.blast.applies_to`):
    those whose rendered settings it moves, or ``devices`` when it renders nowhere."""

    setting: str
    before: JsonValue
    after: JsonValue
    location: Location | None
    base_location: Location | None
    devices: tuple[str, ...]
    applies_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class CatalogueChange:
    """A validated bundle (or an inventory device) added, removed or changed."""

    name: str
    change: str  # added | removed | changed
    location: Location | None


@dataclass(frozen=True)
class IntentDelta:
    settings: tuple[SettingChange, ...] = ()
    devices: tuple[CatalogueChange, ...] = ()
    bundles: tuple[CatalogueChange, ...] = ()
    links_added: tuple[str, ...] = ()
    links_removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyDelta:
    """Head violations matched to base ones by policy id and subject (never by line)."""

    introduced: tuple[Violation, ...]
    fixed: tuple[Violation, ...]
    remaining: tuple[Violation, ...]


@dataclass(frozen=True)
class BlastRadius:
    """What the change touches: devices whose intent or rendered settings move."""

    devices: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()
    gpus: int = 0
    racks: tuple[str, ...] = ()
    rails: tuple[int, ...] = ()
    gangs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Drain:
    """Whether the change forces GPU nodes out of their gangs, and which."""

    reasons: tuple[str, ...] = ()
    lossless_settings: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    gangs: tuple[str, ...] = ()
    gpus: int = 0

    @property
    def required(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class RolloutReview:
    """The rollout a change needs: from a spec in the change (``source`` its file) or
    the default spec (``source`` ``"default"``). ``error`` when it cannot be planned,
    ``note`` when there is nothing to roll out."""

    source: str
    spec: RolloutSpec | None
    plan: RolloutPlan | None = None
    error: str | None = None
    error_at: Location | None = None
    note: str | None = None

    @property
    def is_default(self) -> bool:
        return self.source == "default"


class BlockerKind(StrEnum):
    input = "input"  # head does not load
    policy = "policy"  # a deny violation the change introduces
    engine = "engine"  # a policy raised at head: unknown is never a pass
    plan = "plan"  # no safe order for the plan
    rollout = "rollout"  # a rollout spec of the change cannot be loaded or planned


@dataclass(frozen=True)
class Blocker:
    kind: BlockerKind
    message: str
    location: Location | None = None


@dataclass(frozen=True)
class ObservedSource:
    """What the plan compares head against: ``lab``, ``snapshot`` or ``base``."""

    kind: str
    detail: str
    states: Mapping[str, Mapping[str, Scalar]] | None = None


BASE_SOURCE = ObservedSource("base", "the base revision's rendered intent (no device observed)")


@dataclass(frozen=True)
class Review:
    fleet: str
    base: RevisionInfo
    head: RevisionInfo
    prefix: str
    files: tuple[str, ...]
    observed: ObservedSource
    base_outcome: ValidateOutcome
    head_outcome: ValidateOutcome
    intent: IntentDelta = field(default_factory=IntentDelta)
    policies: PolicyDelta | None = None
    plan: Plan | None = None
    blast: BlastRadius | None = None
    drain: Drain | None = None
    rollouts: tuple[RolloutReview, ...] = ()
    blockers: tuple[Blocker, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)  # device -> role, for pictures

    @property
    def verdict(self) -> str:
        return "blocked" if self.blockers else "pass"

    def exit_code(self) -> int:
        return 1 if self.blockers else 0
