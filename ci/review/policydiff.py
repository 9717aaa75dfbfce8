"""Which violations a change introduces and which it fixes (pure).

A violation is the same violation at both revisions when its policy id and subject
are the same: line numbers move with every edit above them, so they never decide.
"""

from __future__ import annotations

from ci.review.model import PolicyDelta
from policies.engine import PolicyReport, Violation


def _key(violation: Violation) -> tuple[str, str]:
    return violation.policy, violation.subject


def policy_delta(base: PolicyReport, head: PolicyReport) -> PolicyDelta:
    """Head's active violations split into introduced and remaining; base's active
    violations with no match at head, active or waived, are fixed."""
    before = {_key(v) for v in base.violations}
    after = {_key(v) for v in (*head.violations, *head.waived)}
    return PolicyDelta(
        introduced=tuple(v for v in head.violations if _key(v) not in before),
        fixed=tuple(v for v in base.violations if _key(v) not in after),
        remaining=tuple(v for v in head.violations if _key(v) in before),
    )


def introduced_denies(delta: PolicyDelta) -> dict[str, list[Violation]]:
    """The introduced deny violations, by policy id, in report order."""
    grouped: dict[str, list[Violation]] = {}
    for violation in delta.introduced:
        if violation.severity.value == "deny":
            grouped.setdefault(violation.policy, []).append(violation)
    return grouped
