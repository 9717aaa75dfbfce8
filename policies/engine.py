"""The policy engine: registered checks over a :class:`~intent.fleet.Fleet`, as data.

A policy is a plain function from the fleet to findings, registered with an id, a
severity (deny/warn), a title, a rationale and a remediation. The engine runs every
policy, attaches waivers (``policies/waivers.yaml``: policy id + subject glob, with
a reason and an expiry), and returns a :class:`PolicyReport` whose exit code is
derived from its contents: 0 clean (warnings allowed), 1 any active deny, 2 a
policy that raised. A policy that raises is an engine error, never a pass.

Most policies read the fleet alone. An *observed* policy (:func:`observed_policy`) also
reads what the devices report (a ``plumb.snapshot/v1``'s states, device -> path ->
value). Built-in ones live in :data:`OBSERVED`, apart from :data:`BUILTIN`; one runs
only when :func:`evaluate` is given ``observed`` and is left out of the report
otherwise, so a fleet-only run is unchanged.
"""

from __future__ import annotations

import contextlib
import fnmatch
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import date
from enum import StrEnum

from intent.fleet import Fleet
from intent.models import Waiver
from inventory.gcpause import gc_paused
from inventory.problems import UNKNOWN, Location


class Severity(StrEnum):
    deny = "deny"
    warn = "warn"


@dataclass(frozen=True)
class Finding:
    """What a check yields: the subject, what is wrong, and where the values came from."""

    subject: str
    message: str
    locations: tuple[Location, ...] = ()
    objects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Violation:
    policy: str
    severity: Severity
    subject: str
    message: str
    locations: tuple[Location, ...]
    objects: tuple[str, ...]
    waiver: Waiver | None = None

    @property
    def location(self) -> Location:
        return self.locations[0] if self.locations else UNKNOWN


Check = Callable[[Fleet], Iterable[Finding]]
ObservedStates = Mapping[str, Mapping[str, str | int | float | bool | None]]
ObservedCheck = Callable[[Fleet, ObservedStates], Iterable[Finding]]


@dataclass(frozen=True)
class Policy:
    id: str
    severity: Severity
    title: str
    rationale: str
    remediation: str
    check: Check

    def runs_with(self, observed: ObservedStates | None) -> bool:
        return True

    def findings(self, fleet: Fleet, observed: ObservedStates | None) -> Iterable[Finding]:
        return self.check(fleet)


def _nothing_without_observed(fleet: Fleet) -> Iterable[Finding]:
    return ()


@dataclass(frozen=True)
class ObservedPolicy(Policy):
    """A policy over the fleet and the devices' observed states; runs only with them."""

    observed_check: ObservedCheck

    def runs_with(self, observed: ObservedStates | None) -> bool:
        return observed is not None

    def findings(self, fleet: Fleet, observed: ObservedStates | None) -> Iterable[Finding]:
        return () if observed is None else self.observed_check(fleet, observed)


@dataclass(frozen=True)
class EngineError:
    policy: str
    error: str


@dataclass(frozen=True)
class PolicyReport:
    policies: tuple[Policy, ...]
    violations: tuple[Violation, ...]
    waived: tuple[Violation, ...] = ()
    errors: tuple[EngineError, ...] = ()

    def denies(self) -> list[Violation]:
        return [v for v in self.violations if v.severity is Severity.deny]

    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity is Severity.warn]

    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.denies() else 0

    def by_policy(self) -> dict[str, list[Violation]]:
        grouped: dict[str, list[Violation]] = {}
        for violation in self.violations:
            grouped.setdefault(violation.policy, []).append(violation)
        return grouped


@dataclass
class Registry:
    """Policies by id; a test gets a fresh one, the CLI the built-ins plus the repo's own."""

    policies: dict[str, Policy] = field(default_factory=dict)

    def add(self, policy: Policy) -> None:
        if policy.id in self.policies:
            raise ValueError(f"policy {policy.id} is registered twice")
        self.policies[policy.id] = policy

    def __iter__(self) -> Iterator[Policy]:
        return iter(sorted(self.policies.values(), key=lambda p: p.id))

    def __len__(self) -> int:
        return len(self.policies)


_ACTIVE: ContextVar[Registry | None] = ContextVar("plumb_policy_registry", default=None)
BUILTIN = Registry()
OBSERVED = Registry()  # built-in policies over observed state; run with a snapshot only


@contextlib.contextmanager
def registering_into(registry: Registry) -> Iterator[Registry]:
    """While active, ``@policy`` registers into ``registry`` instead of the built-ins."""
    token = _ACTIVE.set(registry)
    try:
        yield registry
    finally:
        _ACTIVE.reset(token)


def policy(
    id: str, *, severity: str = "deny", title: str, rationale: str, remediation: str
) -> Callable[[Check], Check]:
    """Register a check function as a policy (decorator)."""

    def register(check: Check) -> Check:
        active = _ACTIVE.get()
        registry = BUILTIN if active is None else active
        registry.add(Policy(id, Severity(severity), title, rationale, remediation, check))
        return check

    return register


def observed_policy(
    id: str, *, severity: str = "deny", title: str, rationale: str, remediation: str
) -> Callable[[ObservedCheck], ObservedCheck]:
    """Register a check over the fleet and observed device states (decorator); built-in
    ones go to :data:`OBSERVED`, so the fleet-only set (:data:`BUILTIN`) is unchanged."""

    def register(check: ObservedCheck) -> ObservedCheck:
        active = _ACTIVE.get()
        registry = OBSERVED if active is None else active
        registry.add(
            ObservedPolicy(
                id,
                Severity(severity),
                title,
                rationale,
                remediation,
                _nothing_without_observed,
                check,
            )
        )
        return check

    return register


def _waiver_for(violation: Violation, waivers: Iterable[Waiver]) -> Waiver | None:
    for waiver in waivers:
        if waiver.policy == violation.policy and fnmatch.fnmatchcase(
            violation.subject, waiver.subject
        ):
            return waiver
    return None


WAIVER_EXPIRED = "waiver.expired"


@gc_paused()
def evaluate(
    fleet: Fleet,
    policies: Iterable[Policy],
    *,
    today: date,
    observed: ObservedStates | None = None,
) -> PolicyReport:
    """Run every policy on the fleet (observed policies only when ``observed`` states are
    given); waivers in force move matches aside."""
    ran = tuple(p for p in policies if p.runs_with(observed))
    active_waivers = [w for w in fleet.waivers if w.expires >= today]
    violations: list[Violation] = []
    waived: list[Violation] = []
    errors: list[EngineError] = []
    for pol in ran:
        try:
            findings = list(pol.findings(fleet, observed))
        except Exception as exc:  # a broken policy is an engine error, never a pass
            summary = traceback.format_exception_only(type(exc), exc)[-1].strip()
            errors.append(EngineError(pol.id, summary))
            continue
        for finding in findings:
            violation = Violation(
                pol.id,
                pol.severity,
                finding.subject,
                finding.message,
                finding.locations,
                finding.objects,
            )
            waiver = _waiver_for(violation, active_waivers)
            if waiver is None:
                violations.append(violation)
            else:
                waived.append(replace(violation, waiver=waiver))
    for index, waiver in enumerate(fleet.waivers):
        if waiver.expires < today:
            where = fleet.where.waivers[index] if index < len(fleet.where.waivers) else UNKNOWN
            violations.append(
                Violation(
                    WAIVER_EXPIRED,
                    Severity.deny,
                    f"{waiver.policy}:{waiver.subject}",
                    f"waiver for {waiver.policy} on {waiver.subject} expired on {waiver.expires} "
                    f"({waiver.reason})",
                    (where,),
                    (),
                )
            )
    violations.sort(key=lambda v: (v.policy, v.location, v.subject))
    return PolicyReport(ran, tuple(violations), tuple(waived), tuple(errors))
