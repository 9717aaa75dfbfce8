"""What the controller does with each drifted field (pure).

Drift is every planned change: a field whose observed value differs from intent. The
plan has already set aside what plumb must never fight: fields another writer owns
(conflicts) and fields a platform cannot express never become changes. Here each
change gets a mode from the first ``serve.drift`` rule that matches its path, device
and owning intent file (no match: ``warn``), and a ``correct`` change is corrected only
if it is not held by a rollback pin, a sync window allows it, the plan is not refused,
and the pass's caps have room; otherwise it is reported with the reason it waits.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass

from intent.serve import DriftRule, ServeConfig
from reconciler.controller.windows import WindowVerdict
from reconciler.plan import Plan
from reconciler.render import DesiredFleet
from reconciler.settings import Change, Owned, Scalar, State


@dataclass(frozen=True)
class DriftField:
    device: str
    path: str
    observed: Scalar
    intended: Scalar
    owner: str
    mode: str  # warn | correct
    waiting: str | None  # why a `correct` field is not corrected in this pass


@dataclass(frozen=True)
class DriftDecision:
    fields: tuple[DriftField, ...]
    correct: Mapping[str, frozenset[str]]  # device -> paths corrected in this pass
    window: WindowVerdict

    def count(self, mode: str | None = None) -> int:
        return sum(1 for f in self.fields if mode is None or f.mode == mode)

    def corrected_fields(self) -> int:
        return sum(len(paths) for paths in self.correct.values())


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


def decide_drift(plan: Plan, config: ServeConfig, window: WindowVerdict) -> DriftDecision:
    """Classify every planned change and choose, within the caps, what to correct."""
    fields: list[DriftField] = []
    correct: dict[str, set[str]] = {}
    corrected = 0
    for device in sorted(plan.devices):
        dp = plan.devices[device]
        held = {h.path for h in dp.held}
        for change in dp.changes:
            mode = mode_for(config.drift, device, change)
            waiting: str | None = None
            if mode == "correct":
                if change.path in held:
                    waiting = "held by a rollback pin"
                elif plan.refused is not None:
                    waiting = f"plan refused: {plan.refused}"
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
                )
            )
    return DriftDecision(tuple(fields), {d: frozenset(p) for d, p in correct.items()}, window)


def restrict_desired(
    desired: DesiredFleet,
    observed: Mapping[str, State | None],
    correct: Mapping[str, frozenset[str]],
) -> DesiredFleet:
    """Desired state in which only the chosen fields differ from what was observed: a
    plan built from it changes exactly those fields, and its order is proved anew."""
    restricted: dict[str, dict[str, Owned]] = {}
    for device, wanted in desired.items():
        state = observed.get(device) or {}
        keep = correct.get(device, frozenset())
        restricted[device] = {
            path: owned if path in keep else Owned(state[path], owned.owner)
            for path, owned in wanted.items()
            if path in keep or path in state
        }
    return restricted
