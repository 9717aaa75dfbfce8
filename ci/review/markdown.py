"""The review as a pull-request comment (GitHub and GitLab Markdown): the verdict and a
summary table first, every detail in a collapsed ``<details>`` block.

The first line is a hidden marker, so a CI job can find its earlier comment and
update it instead of adding another. Long lists stop at :data:`ROWS` rows and say how
many more the JSON report has.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ci.diagrams import plan_mermaid, waves_gantt
from ci.planfile import plan_hash, short_hash
from ci.review.model import Review, RolloutReview, SettingChange
from ci.rolloutfmt import _duration, _money
from inventory.problems import Location
from policies.engine import Violation

MARKER = "<!-- plumb-review -->"
ROWS = 40
NAMES = 8
PER_VALUE = 3
MAX_CHARS = 60_000


def esc(text: object) -> str:
    """Plain text safe in a table cell or list item."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("\n", " ")
    )


def code(text: object) -> str:
    return "`" + str(text).replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def value(data: object) -> str:
    return code(data if isinstance(data, str) else json.dumps(data, default=str))


def names(items: Sequence[str], limit: int = NAMES) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def where(review: Review, location: Location | None) -> str:
    if location is None or not location.line:
        return "—"
    return code(f"{review.head_outcome.path(location)}:{location.line}")


def details(summary: str, body: Iterable[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], total: int) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows[:ROWS]]
    if total > ROWS:
        lines += ["", f"… and {total - ROWS} more (the JSON report has all)."]
    return lines


def _headline(review: Review) -> list[str]:
    mark = "❌" if review.blockers else "✅"
    lines = [
        MARKER,
        f"### {mark} plumb review: {review.verdict} — {esc(review.fleet)}",
        "",
        f"{code(review.base.commit[:10])} ({esc(review.base.name)}) → "
        f"{code(review.head.commit[:10])} ({esc(review.head.name)}), "
        f"fleet {code(review.prefix.rstrip('/') or '.')}",
        "",
    ]
    if review.blockers:
        lines.append("**Blocked:**")
        for blocker in review.blockers[:ROWS]:
            at = where(review, blocker.location)
            lines.append(f"- {'' if at == '—' else at + ' '}{esc(blocker.message)}")
        if len(review.blockers) > ROWS:
            lines.append(f"- … and {len(review.blockers) - ROWS} more")
        lines.append("")
    return lines


def _rollout_line(item: RolloutReview) -> str:
    label = f"{code(item.spec.name if item.spec else item.source)} ({esc(item.source)})"
    if item.error is not None:
        return f"{label}: cannot be planned: {esc(item.error)}"
    if item.plan is None:
        return f"{label}: {esc(item.note or 'nothing to roll out')}"
    plan = item.plan
    stall = _money(plan.total) if plan.spec.drain else "no drain"
    return (
        f"{label}: {len(plan.targets)} targets in {len(plan.reports)} waves "
        f"(canary {len(plan.waves.canary)}), stalls {stall}, "
        f"bake {_duration(plan.bake_minutes())}"
    )


def _summary(review: Review) -> list[str]:
    rows = []
    delta = review.intent
    report, policies = review.head_outcome.report, review.policies
    if report is None or policies is None:
        rows.append(("intent", f"{len(review.files)} file(s) changed; head does not load"))
    else:
        rows.append(
            (
                "intent",
                f"{len(delta.settings)} value change(s) in {len(review.files)} file(s) "
                f"taking effect on {len({d for c in delta.settings for d in c.applies_to})} "
                "device(s); "
                f"{len(delta.devices)} device and {len(delta.bundles)} bundle change(s); "
                f"{len(delta.links_added)} cable(s) added, {len(delta.links_removed)} removed",
            )
        )
    if report is not None and policies is not None:
        rows.append(
            (
                "policies at head",
                f"{len(report.policies)} run: {len(report.denies())} deny "
                f"({len(policies.introduced)} new), {len(report.warnings())} warn, "
                f"{len(report.waived)} waived, {len(policies.fixed)} fixed, "
                f"{len(report.errors)} engine error(s)",
            )
        )
    else:
        rows.append(("policies at head", "not run: the head revision does not load"))
    if review.plan is not None:
        plan = review.plan
        state = "**refused** (no safe order)" if plan.refused else "safe order proved"
        rows.append(
            (
                "plan",
                f"{plan.change_count()} change(s) on {len(plan.changes())} device(s) in "
                f"{len(plan.steps)} step(s), {len(plan.unknown())} unknown; {state}; "
                f"against {esc(review.observed.detail)}; "
                f"plan `{short_hash(plan_hash(plan, fleet=review.fleet))}`",
            )
        )
    if review.blast is not None:
        blast = review.blast
        rows.append(
            (
                "blast radius",
                f"{len(blast.devices)} device(s) ({len(blast.switches)} switch(es), "
                f"{len(blast.hosts)} GPU node(s)), {len(blast.ports)} port(s), {blast.gpus} "
                f"GPUs, {len(blast.racks)} rack(s), {len(blast.rails)} rail(s), "
                f"{len(blast.gangs)} gang(s)",
            )
        )
    if review.drain is not None:
        drain = review.drain
        text = (
            f"**required** ({drain.gpus} GPUs, gangs {esc(names(drain.gangs)) or 'none'}): "
            + esc("; ".join(drain.reasons))
            if drain.required
            else "not required"
        )
        rows.append(("drain", text))
    rows += [("rollout", _rollout_line(r)) for r in review.rollouts]
    return [*table(("", ""), [(f"**{k}**", v) for k, v in rows], len(rows)), ""]


def _applies_to(change: SettingChange) -> str:
    """The devices a value takes effect on (the blast radius counts them), and how many
    more carry it without rendering it."""
    shown = f"{len(change.applies_to)}: {esc(names(change.applies_to, 4))}"
    carried = len(set(change.devices) - set(change.applies_to))
    if carried:
        shown += f" (also set on {carried} device(s) it does not render on)"
    return shown


def _intent_details(review: Review) -> list[str]:
    delta = review.intent
    rows = [
        (
            code(c.setting),
            value(c.before),
            value(c.after),
            where(review, c.location) if c.location else "removed",
            _applies_to(c),
        )
        for c in delta.settings
    ]
    body = table(("setting", "base", "head", "owner at head", "takes effect on"), rows, len(rows))
    for label, items in (("devices", delta.devices), ("bundles", delta.bundles)):
        if items:
            body += ["", f"**{label}:** " + ", ".join(f"{code(c.name)} {c.change}" for c in items)]
    for label, links in (("cables added", delta.links_added), ("removed", delta.links_removed)):
        if links:
            body += ["", f"**{label}:** {esc(names(links, 6))}"]
    if review.files:
        body += ["", "**files:** " + ", ".join(code(review.prefix + f) for f in review.files)]
    return details(f"Intent changes ({len(delta.settings)})", body)


def _violation_rows(review: Review, found: Sequence[Violation]) -> list[str]:
    """One row per finding, but at most :data:`PER_VALUE` per policy and value: one
    wrong fleet-wide value breaks hundreds of ports, and they all point at one line."""
    groups: dict[tuple[str, Location], list[Violation]] = {}
    for violation in found:
        groups.setdefault((violation.policy, violation.location), []).append(violation)
    rows = []
    for (policy_id, location), group in groups.items():
        for v in group[:PER_VALUE]:
            rows.append(
                (code(policy_id), v.severity.value, where(review, location), esc(v.message))
            )
        if len(group) > PER_VALUE:
            more = names([v.subject for v in group[PER_VALUE:]], 3)
            rows.append(
                (
                    code(policy_id),
                    "",
                    where(review, location),
                    f"… and {len(group) - PER_VALUE} more from this value: {esc(more)}",
                )
            )
    return table(("policy", "severity", "where", "finding"), rows, len(rows))


def _policy_details(review: Review) -> list[str]:
    delta = review.policies
    if delta is None:
        problems = review.head_outcome.problems
        rows = [(where(review, p.location), esc(p.message)) for p in problems]
        return details(
            f"Head does not load ({len(problems)} problem(s))",
            table(("where", "problem"), rows, len(rows)),
        )
    introduced = _violation_rows(review, delta.introduced) if delta.introduced else ["none"]
    body = ["**introduced**", "", *introduced]
    if delta.fixed:
        fixed = [f"{code(v.policy)} {esc(v.subject)}" for v in delta.fixed[:ROWS]]
        body += ["", "**fixed:** " + ", ".join(fixed)]
    if delta.remaining:
        body += ["", f"**already failing at base** ({len(delta.remaining)}):", ""]
        body += _violation_rows(review, delta.remaining)
    title = f"Policies: {len(delta.introduced)} introduced, {len(delta.fixed)} fixed"
    return details(title, body)


def _plan_details(review: Review) -> list[str]:
    plan = review.plan
    if plan is None:
        return []
    body = [f"Observed state: {esc(review.observed.detail)}.", ""]
    body += [
        f"{s.index}. {code(s.phase)}: {len(s.changes)} device(s), "
        f"{sum(len(c) for c in s.changes.values())} change(s)"
        for s in plan.steps
    ]
    if plan.steps:  # the order as a picture GitHub and GitLab render
        body += ["", "```mermaid", plan_mermaid(plan, review.roles).rstrip(), "```"]
    rows = [
        (code(name), code(c.path), value(c.before), value(c.after), where(review, c.owner))
        for step in plan.steps
        for name in step.devices()
        for c in step.changes[name]
    ]
    body += ["", *table(("device", "setting", "from", "to", "owner"), rows, len(rows))]
    unknown = plan.unknown()
    if unknown:
        body += ["", f"**unknown** ({len(unknown)}): " + esc(names(sorted(unknown)))]
    if plan.refused:
        body += ["", f"**refused:** {esc(plan.refused)}"]
    return details(f"Plan and order ({len(plan.steps)} step(s))", body)


def _blast_details(review: Review) -> list[str]:
    blast, drain = review.blast, review.drain
    if blast is None or drain is None:
        return []
    rows = [
        ("devices", esc(names(blast.devices, 24)) or "none"),
        ("ports", esc(names(blast.ports, 12)) or "none"),
        ("racks", esc(names(blast.racks, 24)) or "none"),
        ("rails", esc(", ".join(str(r) for r in blast.rails)) or "none"),
        ("gangs", esc(names(blast.gangs, 24)) or "none"),
        ("drain", esc("; ".join(drain.reasons) or "not required")),
        ("drained GPU nodes", f"{len(drain.hosts)}: {esc(names(drain.hosts, 12)) or 'none'}"),
    ]
    return details("Blast radius", table(("", ""), rows, len(rows)))


def _rollout_details(item: RolloutReview) -> list[str]:
    plan = item.plan
    if plan is None:
        return []
    rows = [
        (
            str(r.wave.number),
            "canary" if r.wave.canary else "wave",
            f"{len(r.wave.targets)}: {esc(names(r.wave.targets, 4))}",
            esc(names(r.racks, 4)),
            _duration(r.bake.minutes),
            f"{r.stall.gpu_hours:.1f}",
        )
        for r in plan.reports
    ]
    head = ("wave", "kind", "targets", "racks", "bake", "stalled GPU-h")
    body = [_rollout_line(item), "", "```mermaid", waves_gantt(plan).rstrip(), "```", ""]
    body += table(head, rows, len(rows))
    return details(f"Rollout <code>{esc(plan.spec.name)}</code>: {len(plan.reports)} wave(s)", body)


def render_markdown(review: Review) -> str:
    head = _headline(review) + _summary(review)
    lines = _intent_details(review) if review.policies is not None else []
    lines += _policy_details(review) + _plan_details(review) + _blast_details(review)
    for item in review.rollouts:
        lines += _rollout_details(item)
    text = "\n".join(head + lines).rstrip() + "\n"
    if len(text) > MAX_CHARS:  # a comment has a size limit (GitHub: 65,536 characters)
        text = "\n".join([*head, "Details left out to fit a comment: see the JSON report."])
    return text.rstrip() + "\n"
