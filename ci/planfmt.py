"""Render a reconcile plan and an apply report as text or stable JSON (``plumb.plan/v1``,
``plumb.apply/v1``; documented in docs/reconciler.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ci.planfile import plan_hash, short_hash
from reconciler.drivers.base import Outcome
from reconciler.loop import ApplyReport, InterruptedApply
from reconciler.order import Step
from reconciler.plan import Inexpressible, Plan
from reconciler.settings import Change

PLAN_SCHEMA = "plumb.plan/v1"
APPLY_SCHEMA = "plumb.apply/v1"


def _change(change: Change) -> dict[str, Any]:
    return {
        "path": change.path,
        "from": change.before,
        "to": change.after,
        "owner": str(change.owner) if change.owner is not None else None,
    }


def _steps_of(plan: Plan) -> dict[tuple[str, str], int]:
    """(device, path) -> the index of the step that changes it."""
    return {
        (device, change.path): step.index
        for step in plan.steps
        for device, changes in step.changes.items()
        for change in changes
    }


def plan_json(plan: Plan, *, fleet: str, commit: str | None) -> dict[str, Any]:
    step_of = _steps_of(plan)
    return {
        "schema": PLAN_SCHEMA,
        "fleet": fleet,
        "hash": plan_hash(plan, fleet=fleet),
        "intent_commit": commit,
        "empty": plan.is_empty(),
        "refused": plan.refused,
        "summary": {
            "devices": len(plan.devices),
            "devices_changing": len(plan.changes()),
            "changes": plan.change_count(),
            "unknown": len(plan.unknown()),
            "conflicts": sum(len(d.conflicts) for d in plan.devices.values()),
            "held": sum(len(d.held) for d in plan.devices.values()),
            "inexpressible": len(plan.inexpressible()),
            "unreachable": len(plan.unreachable()),
            "owned": len(plan.claimed()),
        },
        "at_intent": plan.at_intent(),
        "steps": [
            {
                "index": s.index,
                "phase": s.phase,
                "devices": s.devices(),
                "changes": sum(len(c) for c in s.changes.values()),
            }
            for s in plan.steps
        ],
        "devices": {
            name: {
                "changes": [
                    {**_change(c), "step": step_of.get((name, c.path))} for c in dp.changes
                ],
                "unknown": dp.unknown,
                "unmanaged_fields": len(dp.unmanaged),
                "conflicts": [
                    {
                        "path": c.path,
                        "owner": c.owner,
                        "intended": c.intended,
                        "observed": c.observed,
                    }
                    for c in dp.conflicts
                ],
                "held": [{"path": h.path, "value": h.value, "reason": h.reason} for h in dp.held],
                "inexpressible": [
                    {
                        "path": i.path,
                        "value": i.value,
                        "observed": i.observed,
                        "owner": str(i.owner),
                        "reason": i.reason,
                        "design_input": i.design,
                        "unreachable": i.unreachable(),
                    }
                    for i in dp.inexpressible
                ],
                "owned": [
                    {
                        "path": c.path,
                        "owner": c.owner,
                        "intended": c.intended,
                        "observed": c.observed,
                    }
                    for c in dp.claimed
                ],
            }
            for name, dp in sorted(plan.devices.items())
            if dp.changes or dp.unknown or dp.conflicts or dp.held or dp.inexpressible or dp.claimed
        },
    }


def _on(devices: list[str], roles: Mapping[str, str]) -> str:
    """``32 gpu-node(s)``, or ``4 leaf(s), 2 spine(s)``; up to three named."""
    counts: dict[str, int] = {}
    for device in devices:
        role = roles.get(device, "device")
        counts[role] = counts.get(role, 0) + 1
    text = ", ".join(f"{n} {role}(s)" for role, n in sorted(counts.items()))
    return text + (f" ({', '.join(devices)})" if len(devices) <= 3 else "")


def _grouped(step: Step, roles: Mapping[str, str]) -> list[str]:
    """One line per identical change (path, from, to, owner) across the step's devices."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for device in step.devices():
        for change in step.changes[device]:
            key = (change.path, repr(change.before), repr(change.after), str(change.owner or ""))
            groups.setdefault(key, []).append(device)
    lines = []
    for (path, before, after, owner), devices in sorted(groups.items()):
        where = f"  [{owner}]" if owner else ""
        if len(devices) == 1:
            lines.append(f"  {devices[0]} {path}: {before} -> {after}{where}")
        else:
            lines.append(f"  {path}: {before} -> {after} on {_on(devices, roles)}{where}")
    return lines


def plan_text(
    plan: Plan,
    *,
    fleet: str,
    roles: Mapping[str, str] | None = None,
    expand: bool = False,
    max_devices: int | None = None,
) -> str:
    """The plan step by step: identical changes grouped across devices (``roles`` names
    what the devices are), or with ``expand`` every device's changes (``max_devices``
    cuts that list)."""
    lines: list[str] = []
    shown = hidden = 0
    for step in plan.steps:
        lines.append(f"step {step.index}: {step.phase} ({len(step.changes)} devices)")
        if not expand:
            lines += _grouped(step, roles or {})
            continue
        for device in step.devices():
            if max_devices is not None and shown >= max_devices:
                hidden += 1
                continue
            shown += 1
            for change in step.changes[device]:
                owner = f"  [{change.owner}]" if change.owner is not None else ""
                lines.append(
                    f"  {device} {change.path}: {change.before!r} -> {change.after!r}{owner}"
                )
    if hidden:
        lines.append(f"  ... (first {max_devices} devices shown; --format json has all)")
    for name, dp in sorted(plan.devices.items()):
        if dp.unknown:
            lines.append(f"UNKNOWN {name}: {dp.unknown} (nothing planned; observe again)")
        for conflict in dp.conflicts:
            lines.append(
                f"CONFLICT {name} {conflict.path}: owned by {conflict.owner}; intent "
                f"wants {conflict.intended!r}, device has {conflict.observed!r} "
                "(not written)"
            )
        for held in dp.held:
            lines.append(f"HELD {name} {held.path} at {held.value!r}: {held.reason}")
    lines += inexpressible_lines(plan)
    lines += owned_lines(plan)
    if plan.refused:
        lines.append(f"REFUSED: {plan.refused}")
    unmanaged = sum(len(d.unmanaged) for d in plan.devices.values())
    lines.append(
        f"plan for {fleet}: {plan.change_count()} change(s) on {len(plan.changes())} of "
        f"{len(plan.devices)} device(s) in {len(plan.steps)} step(s); "
        f"{len(plan.unknown())} unknown; {unmanaged} observed field(s) not owned by plumb"
        + _unreachable_note(plan)
    )
    lines.append(f"plan hash {short_hash(plan_hash(plan, fleet=fleet))}")
    return "\n".join(lines) + "\n"


def _unreachable_note(plan: Plan) -> str:
    unreachable = plan.unreachable()
    if not unreachable:
        return ""
    devices = len({i.device for i in unreachable})
    return f"; {len(unreachable)} field(s) on {devices} device(s) cannot reach intent"


def owned_lines(plan: Plan) -> list[str]:
    """One line per (owner, path, intended value): changes a rollout owns, with how
    many devices; then how an operator takes them over."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for item in plan.claimed():
        groups.setdefault((item.owner, item.path, repr(item.intended)), []).append(item.device)
    lines = []
    for (owner, path, intended), devices in sorted(groups.items()):
        named = ", ".join(devices[:3]) + (
            f" and {len(devices) - 3} more" if len(devices) > 3 else ""
        )
        lines.append(
            f"OWNED by {owner}: {path} -> {intended} on {len(devices)} device(s) ({named});"
            " not written"
        )
    if lines:
        lines.append(
            "  the rollout writes these in its waves; to write them now: plumb apply"
            " --take-over ROLLOUT --reason TEXT (audited)"
        )
    return lines


def inexpressible_lines(plan: Plan) -> list[str]:
    """One line per (path, intended value, owner, platform reason, reached or not): the
    intended values a platform cannot express, with how many devices. Those a device
    holds a different value of come first, as CANNOT REACH INTENT: the device is not at
    its intent and plumb cannot take it there."""
    groups: dict[tuple[bool, str, str, str, str], list[Inexpressible]] = {}
    for item in plan.inexpressible():
        key = (not item.unreachable(), item.path, repr(item.value), str(item.owner), item.reason)
        groups.setdefault(key, []).append(item)
    lines = []
    for (reached, path, _, _, reason), items in sorted(groups.items()):
        devices = sorted({i.device for i in items})
        named = ", ".join(devices[:3]) + (
            f" and {len(devices) - 3} more" if len(devices) > 3 else ""
        )
        if reached:
            lines.append(
                f"NOT EXPRESSIBLE {path} = {items[0].value!r} on {len(devices)} device(s) "
                f"({named}) [{items[0].owner}]: {reason}; not written"
            )
            continue
        seen = sorted({repr(i.observed) for i in items})
        has = seen[0] if len(seen) == 1 else f"one of {', '.join(seen[:3])}"
        lines.append(
            f"CANNOT REACH INTENT {path} = {items[0].value!r} on {len(devices)} device(s) "
            f"({named}) [{items[0].owner}]: the device has {has}; {reason}; not written"
        )
    return lines


WORST_FIRST = ("failed", "unknown", "applied", "planned", "unchanged")
"""A device that ran in several steps counts once, at its worst step's outcome."""


def device_outcomes(report: ApplyReport) -> dict[str, str]:
    """Per device, the worst outcome of its steps."""
    worst: dict[str, str] = {}
    for result in report.results:
        seen = worst.get(result.device)
        outcome = result.outcome.value
        if seen is None or WORST_FIRST.index(outcome) < WORST_FIRST.index(seen):
            worst[result.device] = outcome
    return worst


def apply_counts(report: ApplyReport) -> dict[str, Any]:
    """Changes and devices (not device-steps), and devices per outcome."""
    by_device: dict[str, int] = {}
    for outcome in device_outcomes(report).values():
        by_device[outcome] = by_device.get(outcome, 0) + 1
    return {
        "changes": sum(len(r.changes) for r in report.results),
        "devices": len({r.device for r in report.results}),
        "devices_by_outcome": dict(sorted(by_device.items())),
    }


def apply_summary(report: ApplyReport, *, dry_run: bool) -> str:
    """``apply: 243 change(s) on 45 device(s): 45 applied`` and why it stopped."""
    counts = apply_counts(report)
    outcomes = ", ".join(f"{n} {k}" for k, n in counts["devices_by_outcome"].items())
    verb = "dry run" if dry_run else "apply"
    line = f"{verb}: {counts['changes']} change(s) on {counts['devices']} device(s)"
    line += f": {outcomes}" if outcomes else ": nothing"
    if report.stopped:
        line += f"\nSTOPPED: {report.stopped}"
    if report.not_started:
        line += f"\nnot started: {len(report.not_started)} device(s)"
    return line + "\n"


def apply_json(report: ApplyReport, *, fleet: str, dry_run: bool) -> dict[str, Any]:
    return {
        "schema": APPLY_SCHEMA,
        "fleet": fleet,
        "dry_run": dry_run,
        "ok": report.ok(),
        "stopped": report.stopped,
        "summary": apply_counts(report),
        "outcomes": report.by_outcome(),
        "not_started": list(report.not_started),
        "results": [
            {
                "device": r.device,
                "step": r.step,
                "outcome": r.outcome.value,
                "error": r.error,
                "changes": [_change(c) for c in r.changes],
            }
            for r in report.results
        ],
    }


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, default=str) + "\n"


def _some(names: Sequence[str], shown: int = 5) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def interrupted_text(stopped: InterruptedApply) -> str:
    """What an interrupted apply wrote and did not, in a short block."""
    results = stopped.report.results
    written = sorted({r.device for r in results if r.outcome is Outcome.applied})
    bad = sorted({r.device for r in results if r.outcome in (Outcome.failed, Outcome.unknown)})
    lines = ["interrupted: no further device was started"]
    lines.append(
        f"  written: {len(written)} device(s)" + (f" ({_some(written)})" if written else "")
    )
    if stopped.in_flight:
        outcome = {r.device: r.outcome.value for r in results}
        finished = [f"{d}: {outcome.get(d, 'unknown')}" for d in stopped.in_flight]
        lines.append(f"  in flight when stopped, let finish: {len(finished)} ({_some(finished)})")
    if bad:
        lines.append(f"  failed or unknown: {len(bad)} ({_some(bad)})")
    rest = stopped.not_started
    lines.append(f"  not started: {len(rest)} device(s)" + (f" ({_some(rest)})" if rest else ""))
    lines.append("  `plumb plan` shows what is left; `plumb apply` carries on from there")
    return "\n".join(lines) + "\n"
