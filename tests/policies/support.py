"""Helpers shared by the policy tests: one policy's violations, and the line an edit wrote."""

from __future__ import annotations

from policies.engine import BUILTIN, Policy, PolicyReport, Severity, Violation
from tests.fleetcopy import FleetCopy


def flagged(report: PolicyReport, policy_id: str) -> list[Violation]:
    """Active violations of one policy, in report order."""
    return [v for v in report.violations if v.policy == policy_id]


def subjects(report: PolicyReport, policy_id: str) -> set[str]:
    """The subjects one policy flagged."""
    return {v.subject for v in flagged(report, policy_id)}


def only(report: PolicyReport, policy_id: str) -> Violation:
    """The single violation of one policy; fails if there are none or several."""
    found = flagged(report, policy_id)
    assert len(found) == 1, [f"{v.subject}: {v.message}" for v in found]
    return found[0]


def line_of(orion: FleetCopy, relative: str, needle: str) -> int:
    """1-based line of the one line of ``relative`` that contains ``needle``."""
    lines = (orion.path / relative).read_text().splitlines()
    hits = [number for number, line in enumerate(lines, start=1) if needle in line]
    assert len(hits) == 1, f"{needle!r} is on lines {hits} of {relative}"
    return hits[0]


def at(orion: FleetCopy, relative: str, needle: str) -> tuple[str, int]:
    """(file, line) of the line holding ``needle``, to compare with a violation's location."""
    return relative, line_of(orion, relative, needle)


def primary(violation: Violation) -> tuple[str, int]:
    """(file, line) of a violation's primary location."""
    return violation.location.file, violation.location.line


def places(violation: Violation) -> list[tuple[str, int]]:
    """(file, line) of every location of a violation, primary first."""
    return [(loc.file, loc.line) for loc in violation.locations]


def assert_denied(violations: list[Violation]) -> None:
    """Every given violation is a deny."""
    assert violations
    assert all(v.severity is Severity.deny for v in violations)


def builtin(*ids: str) -> list[Policy]:
    """The named built-in policies, for tests that run only a few of them."""
    return [BUILTIN.policies[policy_id] for policy_id in ids]
