"""Human text: violations grouped by policy, each with file:line:col, repeats collapsed.

A fleet-wide value that is wrong breaks thousands of ports at once; they share one
location, so they print once with a count instead of drowning the one that matters.
"""

from __future__ import annotations

from ci.outcome import ValidateOutcome
from policies.engine import Violation

SHOWN_PER_LOCATION = 3


def _group_lines(violations: list[Violation], outcome: ValidateOutcome) -> list[str]:
    lines: list[str] = []
    by_location: dict[str, list[Violation]] = {}
    for violation in violations:
        key = (
            outcome.path(violation.location)
            + f":{violation.location.line}:{violation.location.col}"
        )
        by_location.setdefault(key, []).append(violation)
    for key, group in by_location.items():
        for violation in group[:SHOWN_PER_LOCATION]:
            lines.append(f"  {key}: {violation.message}")
            for extra in violation.locations[1:]:
                lines.append(f"      see {outcome.path(extra)}:{extra.line}:{extra.col}")
        if len(group) > SHOWN_PER_LOCATION:
            subjects = ", ".join(
                v.subject for v in group[SHOWN_PER_LOCATION : SHOWN_PER_LOCATION + 3]
            )
            lines.append(
                f"  {key}: ... and {len(group) - SHOWN_PER_LOCATION} more from this "
                f"value ({subjects}, ...)"
            )
    return lines


def render(outcome: ValidateOutcome) -> str:
    if outcome.report is None or outcome.problems:
        problems = [
            f"{outcome.path(p.location)}:{p.location.line}:{p.location.col}: {p.message}"
            if p.location.line
            else f"error: {p.message}"
            for p in outcome.problems
        ]
        problems.append(
            f"error: {len(outcome.problems)} problem(s) in the fleet repo; nothing was evaluated"
        )
        return "\n".join(problems) + "\n"
    report = outcome.report
    lines: list[str] = []
    policies = {p.id: p for p in report.policies}
    for policy_id, violations in report.by_policy().items():
        pol = policies.get(policy_id)
        severity = violations[0].severity.value.upper()
        title = pol.title if pol else "waivers must not be expired"
        lines.append(f"{severity} {policy_id}: {title} ({len(violations)})")
        lines.extend(_group_lines(violations, outcome))
        if pol is not None:
            lines.append(f"  fix: {pol.remediation}")
        lines.append("")
    for error in report.errors:
        lines.append(
            f"ERROR {error.policy}: the policy raised {error.error}; "
            "treated as an engine error, not a pass"
        )
    denies, warnings = len(report.denies()), len(report.warnings())
    verdict = "FAIL" if report.exit_code() else "ok"
    lines.append(
        f"{verdict}: {outcome.fleet}: {len(report.policies)} policies, {denies} deny, "
        f"{warnings} warn, {len(report.waived)} waived, {len(report.errors)} engine errors"
    )
    return "\n".join(lines) + "\n"
