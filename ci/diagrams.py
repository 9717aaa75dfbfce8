"""Pictures as text that GitHub and GitLab render (Mermaid) or Graphviz reads (DOT):
the order of a reconcile plan's steps, and a rollout's waves over time (pure).

Both stay small on any fleet: a step is one node whatever its size (its devices
counted by role), a wave one bar (its targets counted, its strata named); more than
:data:`MAX_WAVES` waves are summed up in one last bar.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from reconciler.order import WHY
from reconciler.plan import Plan
from rollouts.planning import RolloutPlan

MAX_WAVES = 40
_UNSAFE = re.compile(r"[^A-Za-z0-9 .,()+=/_-]")


def _text(value: str) -> str:
    """A label Mermaid and DOT take as it is: no quotes, colons, semicolons or markup."""
    return _UNSAFE.sub(" ", value).strip()


def _roles(devices: list[str], roles: Mapping[str, str]) -> str:
    counts = Counter(roles.get(d, "device") for d in devices)
    return ", ".join(f"{n} {role}" for role, n in sorted(counts.items()))


def plan_mermaid(plan: Plan, roles: Mapping[str, str]) -> str:
    """``flowchart LR``: one node per step (phase, devices by role, changes), each
    edge saying why the next step comes after it."""
    lines = ["flowchart LR"]
    if not plan.steps:
        lines.append('    empty["nothing to change"]')
        return "\n".join(lines) + "\n"
    for step in plan.steps:
        changes = sum(len(c) for c in step.changes.values())
        parts = (f"{step.index}. {step.phase}", _roles(step.devices(), roles), f"{changes} changes")
        lines.append(f'    s{step.index}["{"<br/>".join(_text(p) for p in parts)}"]')
    for before, after in zip(plan.steps, plan.steps[1:], strict=False):
        lines.append(f'    s{before.index} -->|"{_text(WHY[after.phase])}"| s{after.index}')
    if len(plan.steps) == 1:
        lines.append(f'    s1 -.- why1["{_text(WHY[plan.steps[0].phase])}"]')
    return "\n".join(lines) + "\n"


def plan_dot(plan: Plan, roles: Mapping[str, str], *, name: str = "plan") -> str:
    """The same picture for Graphviz (``dot -Tsvg``)."""
    lines = [f'digraph "{_text(name)}" {{', "  rankdir=LR;", "  node [shape=box];"]
    for step in plan.steps:
        changes = sum(len(c) for c in step.changes.values())
        label = (
            f"{step.index}. {step.phase}\\n{_roles(step.devices(), roles)}\\n{changes} change(s)"
        )
        lines.append(f'  s{step.index} [label="{label}"];')
    for before, after in zip(plan.steps, plan.steps[1:], strict=False):
        lines.append(f'  s{before.index} -> s{after.index} [label="{_text(WHY[after.phase])}"];')
    if not plan.steps:
        lines.append('  empty [label="nothing to change"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def waves_gantt(plan: RolloutPlan) -> str:
    """``gantt``: each wave's writing (its drain, flash and reboot when it drains) and
    bake, one after the other, labelled with targets, strata and stalled GPU-hours."""
    spec = plan.spec
    write = spec.price.drain_minutes if spec.drain is not None else 1.0
    stalled = sum(r.stall.gpu_hours for r in plan.reports)
    lines = [
        "gantt",
        f"    title {_text(spec.name)}: {len(plan.reports)} waves, {stalled:.1f} GPU-h stalled",
        "    dateFormat X",
        "    axisFormat %Hh%M",
    ]
    shown = plan.reports[:MAX_WAVES]
    after = "0"
    for report in shown:
        wave = report.wave
        kind = "canary" if wave.canary else "wave"
        strata = " ".join(report.strata[:4]) + (" ..." if len(report.strata) > 4 else "")
        lines.append(f"    section {kind} {wave.number}")
        label = f"{len(wave.targets)} targets, strata {strata}, {report.stall.gpu_hours:.1f} GPU-h"
        lines.append(f"    {_text(label)} :w{wave.number}, {after}, {max(1, round(write))}m")
        bake = max(1, round(report.bake.minutes))
        lines.append(f"    bake {bake} min :b{wave.number}, after w{wave.number}, {bake}m")
        after = f"after b{wave.number}"
    rest = plan.reports[MAX_WAVES:]
    if rest:
        targets = sum(len(r.wave.targets) for r in rest)
        minutes = sum(max(1, round(write)) + max(1, round(r.bake.minutes)) for r in rest)
        lines.append(f"    section waves {rest[0].wave.number}-{rest[-1].wave.number}")
        lines.append(f"    {len(rest)} more waves, {targets} targets :rest, {after}, {minutes}m")
    return "\n".join(lines) + "\n"
