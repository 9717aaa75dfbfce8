"""What the controller does with each drifted field (pure).

Drift is every planned change: a field whose observed value differs from intent. The
plan has already set aside what plumb must never fight: fields another writer owns
(conflicts) and fields a platform cannot express never become changes. Here each
change gets a mode from the first ``serve.drift`` rule that matches its path, device
and owning intent file (no match: ``warn``). A change on a field an active rollout (or
a queued approval) owns is reported as owned by that rollout and never corrected
(:mod:`service.owned`: one writer per field). A ``correct`` change is
corrected only if it is not held by a rollback pin, a sync window allows it, its device is not
blocked (its correction cannot be proved safe, or the intent fails validation:
:mod:`serve.corrections`), and the pass's caps have room; otherwise it
is reported with the reason it waits. A blocked device takes no room in the caps, so
a corner of the fleet that stays blocked never starves the rest.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field

from intent.serve import DriftRule, ServeConfig
from reconciler.plan import Plan
from reconciler.settings import Change, Scalar
from serve.corrections import Blocked
from serve.windows import WindowVerdict
from service.owned import NO_OWNERSHIP, Ownership


@dataclass(frozen=True)
class DriftField:
    device: str
    path: str
    observed: Scalar
    intended: Scalar
    owner: str
    mode: str  # warn | correct
    waiting: str | None  # why a `correct` field is not corrected in this pass
    rollout: str | None = None  # the rollout that owns the field: the drift pass leaves it


@dataclass(frozen=True)
class DriftDecision:
    fields: tuple[DriftField, ...]
    correct: Mapping[str, frozenset[str]]  # device -> paths corrected in this pass
    window: WindowVerdict
    blocked: Mapping[str, Blocked] = field(default_factory=dict)  # device -> why

    def count(self, mode: str | None = None) -> int:
        return sum(1 for f in self.fields if mode is None or f.mode == mode)

    def corrected_fields(self) -> int:
        return sum(len(paths) for paths in self.correct.values())

    def owned(self) -> dict[str, dict[str, list[str]]]:
        """rollout -> device -> the drifted paths it owns there (sorted)."""
        found: dict[str, dict[str, list[str]]] = {}
        for f in self.fields:
            if f.rollout is not None:
                found.setdefault(f.rollout, {}).setdefault(f.device, []).append(f.path)
        return found


def _owner_file(change: Change) -> str:
    return change.owner.file if change.owner is not None else ""


def mode_for(rules: tuple[DriftRule, ...], device: str, change: Change) -> str:
    """The mode of the first rule matching the change; ``warn`` when none does."""
    owner = _owner_file(change)
    for rule in rules:
        if (
            any(fnmatch.fnmatchcase(change.path, p) for p in rule.paths)
            and any(fnmatch.fnmatchcase(device, d) for d in rule.devices)
            and any(fnmatch.fnmatchcase(owner, o) for o in rule.owners)
        ):
            return rule.mode
    return "warn"


def decide_drift(
    plan: Plan,
    config: ServeConfig,
    window: WindowVerdict,
    blocked: Mapping[str, Blocked] | None = None,
    owned: Ownership = NO_OWNERSHIP,
) -> DriftDecision:
    """Classify every planned change and choose, within the caps, what to correct;
    ``blocked`` devices and fields a rollout ``owned`` are only reported. The whole
    plan's refusal does not stop correction: what is chosen is proved again on its
    own."""
    blocked = blocked or {}
    stopped: dict[str, Blocked] = {}
    fields: list[DriftField] = []
    correct: dict[str, set[str]] = {}
    corrected = 0
    for device in sorted(plan.devices):
        dp = plan.devices[device]
        held = {h.path for h in dp.held}
        for change in dp.changes:
            mode = mode_for(config.drift, device, change)
            owner = owned.owner(device, change.path) if owned else None
            waiting: str | None = None
            if owner is not None:
                waiting = owner.describe()
            elif mode == "correct":
                if change.path in held:
                    waiting = "held by a rollback pin"
                elif device in blocked:
                    waiting = f"blocked: {blocked[device].reason}"
                    stopped[device] = blocked[device]
                elif not window.allowed:
                    waiting = window.reason
                elif device not in correct and len(correct) >= config.max_devices_per_pass:
                    waiting = f"cap: max_devices_per_pass {config.max_devices_per_pass}"
                elif corrected >= config.max_fields_per_pass:
                    waiting = f"cap: max_fields_per_pass {config.max_fields_per_pass}"
                else:
                    correct.setdefault(device, set()).add(change.path)
                    corrected += 1
            fields.append(
                DriftField(
                    device,
                    change.path,
                    change.before,
                    change.after,
                    str(change.owner) if change.owner is not None else "",
                    mode,
                    waiting,
                    None if owner is None else owner.rollout,
                )
            )
    return DriftDecision(
        tuple(fields),
        {d: frozenset(p) for d, p in correct.items()},
        window,
        stopped,
    )
