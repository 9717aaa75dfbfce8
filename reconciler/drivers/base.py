"""The driver contract every target implements: the lab fleet, switches over SSH
(netmiko) and hosts through ansible-runner.

``observe(device)`` returns the device's current settings as a flat state (every
field the driver can read, owned by plumb or not). ``apply(device, changes, ...)``
takes a device from its observed state to the desired one in four steps:

1. **stage**: load the changes into a candidate (configure session, patch file...);
2. **compare**: read back what the candidate would change; if it differs from the
   changes asked for, discard and fail;
3. **commit**: make the candidate running; with ``confirm_within`` seconds the device
   reverts by itself unless confirmed in time (a lost controller rolls back);
4. **confirm**: keep the commit.

On any error before the commit the candidate is discarded; an error after it (the
post-commit observe or the confirm) is raised as ``ConnectionLost``, an outcome
unknown, because the commit went out. ``dry_run=True`` stops
after compare: nothing is written, and the result is ``planned``. Errors are raised
as :mod:`reconciler.errors` types, mapped once at the edge; the reconcile loop turns
them into ``failed`` / ``unknown`` outcomes.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, TypeVar

from reconciler.errors import ConfigRejected, ConnectionLost, DeviceError, OutcomeUnknown
from reconciler.settings import Change, Scalar


class Outcome(StrEnum):
    unchanged = "unchanged"  # nothing to do
    planned = "planned"  # dry run: these changes would be made
    applied = "applied"  # written and verified
    failed = "failed"  # not applied (rejected, or verify found a difference)
    unknown = "unknown"  # may or may not have been applied, and could not be observed


class CompareMismatch(ConfigRejected):
    """The staged candidate would change something other than what the plan says."""


@dataclass(frozen=True)
class DeviceRef:
    """What a driver needs to reach one device; the request carries identity, never events."""

    name: str
    platform: str
    role: str
    host: str
    port: int = 22
    vendor: str = ""
    model: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


class _Candidate(Protocol):
    device: str
    discarded: bool


C = TypeVar("C", bound=_Candidate)


def checked_candidate(device: DeviceRef, candidate: object, kind: type[C], dialect: str) -> C:
    """The candidate as a driver's own type, staged for this device and still live."""
    if not isinstance(candidate, kind) or candidate.device != device.name:
        raise TypeError(f"{device.name}: not {dialect} candidate of this device: {candidate!r}")
    if candidate.discarded:
        raise ValueError(f"{device.name}: the candidate was discarded")
    return candidate


@dataclass(frozen=True)
class ApplyResult:
    device: str
    outcome: Outcome
    changes: tuple[Change, ...] = ()
    error: str | None = None


class Driver(abc.ABC):
    """Base class: subclasses implement observe and the four apply steps."""

    name: str = "driver"

    @abc.abstractmethod
    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        """Every setting the driver can read, as a flat state."""

    @abc.abstractmethod
    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> object:
        """Load the changes into a candidate; returns a handle for the later steps."""

    @abc.abstractmethod
    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        """What committing the candidate would change, read back from the device."""

    @abc.abstractmethod
    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        """Make the candidate running (reverting by itself unless confirmed in time)."""

    @abc.abstractmethod
    def confirm(self, device: DeviceRef, candidate: object) -> None:
        """Keep a commit made with ``confirm_within``."""

    @abc.abstractmethod
    def discard(self, device: DeviceRef, candidate: object) -> None:
        """Drop a staged candidate; must be safe to call after any failed step."""

    def close(self) -> None:  # noqa: B027  (optional hook)
        """Release connections."""

    def observe_many(
        self, devices: Sequence[DeviceRef], concurrency: int = 16
    ) -> dict[str, dict[str, Scalar] | DeviceError]:
        """Observe several devices; errors are returned per device, never raised.

        The default runs :meth:`observe` on a bounded thread pool; a driver with a
        cheaper bulk read (the lab's single query) overrides it.
        """

        def one(device: DeviceRef) -> tuple[str, dict[str, Scalar] | DeviceError]:
            try:
                return device.name, self.observe(device)
            except DeviceError as exc:
                return device.name, exc

        with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(devices) or 1))) as pool:
            return dict(pool.map(one, devices))

    def apply(
        self,
        device: DeviceRef,
        changes: Sequence[Change],
        *,
        dry_run: bool,
        confirm_within: float | None = None,
    ) -> ApplyResult:
        """stage -> compare -> commit -> confirm; discard on any error before commit."""
        if not changes:
            return ApplyResult(device.name, Outcome.unchanged)
        candidate = self.stage(device, changes)
        try:
            staged = self.compare(device, candidate)
            wanted = {(c.path, c.after) for c in changes}
            got = {(c.path, c.after) for c in staged}
            if got != wanted:
                extra = sorted(got - wanted)[:3]
                missing = sorted(wanted - got)[:3]
                raise CompareMismatch(
                    device.name,
                    f"candidate differs from the plan: unexpected {extra}, missing {missing}",
                )
            if dry_run:
                self.discard(device, candidate)
                return ApplyResult(device.name, Outcome.planned, tuple(changes))
        except BaseException:
            self.discard(device, candidate)
            raise
        self.commit(device, candidate, confirm_within)
        if confirm_within is not None:
            # Confirm only what we can see took effect; otherwise the device's own
            # timer reverts the commit (a lost or confused controller rolls back).
            try:
                observed = self.observe(device)
                wrong = [c for c in changes if observed.get(c.path) != c.after]
                if wrong:
                    return ApplyResult(
                        device.name,
                        Outcome.failed,
                        tuple(changes),
                        f"after commit {len(wrong)} field(s) differ (first: {wrong[0].path} is "
                        f"{observed.get(wrong[0].path)!r}); not confirmed, the device reverts "
                        "itself",
                    )
                self.confirm(device, candidate)
            except OutcomeUnknown:
                raise
            except DeviceError as exc:
                # The commit went out: whatever fails now, its outcome is unknown.
                raise ConnectionLost(
                    device.name,
                    f"after the commit, before its confirm: {type(exc).__name__}: {exc.detail}",
                ) from exc
        return ApplyResult(device.name, Outcome.applied, tuple(changes))
