"""The reconcile loop: observe every target, then apply a plan step by step.

The thin imperative shell around the pure core (render, diff, order). Per-target
outcomes are collected, never aborted on the first error. A timeout (or a dropped
connection) means *unknown*: the device is observed again before anything else,
and if it still cannot be observed it is reported ``unknown`` (a hard fault) and
never retried blindly. Before every device write the guard checks the kill switch
and the lease's fencing token; either stops the apply cleanly at the next device.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from reconciler.drivers.base import DeviceRef, Driver, Outcome
from reconciler.errors import DeviceError, FencedOut, Frozen, Handling, classify
from reconciler.plan import Plan
from reconciler.settings import Change, Scalar
from reconciler.state.audit import SECRET_FIELD
from reconciler.targets import Targets


@dataclass(frozen=True)
class Observation:
    device: str
    state: dict[str, Scalar] | None
    error: str | None = None


class WriteGuard(Protocol):
    def before_write(self, device: str) -> None:
        """Raise Frozen or FencedOut if no write may start now."""


class AuditSink(Protocol):
    def record(self, kind: str, **fields: Any) -> None:
        """Append one audit record."""


class NoGuard:
    def before_write(self, device: str) -> None:
        return None


class NoAudit:
    def record(self, kind: str, **fields: Any) -> None:
        return None


@dataclass(frozen=True)
class DeviceResult:
    device: str
    step: int
    outcome: Outcome
    changes: tuple[Change, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class ApplyReport:
    results: tuple[DeviceResult, ...]
    stopped: str | None = None
    not_started: tuple[str, ...] = ()

    def by_outcome(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for result in self.results:
            counts[result.outcome.value] = counts.get(result.outcome.value, 0) + 1
        return counts

    def ok(self) -> bool:
        bad = {Outcome.failed, Outcome.unknown}
        return self.stopped is None and not any(r.outcome in bad for r in self.results)


@dataclass(frozen=True)
class InterruptedApply:
    """What an apply a signal stopped had done: the devices that ran (those in flight
    at the signal were let finish), which of them were in flight, and the rest."""

    report: ApplyReport
    in_flight: tuple[str, ...]
    not_started: tuple[str, ...]


def interrupted_apply(exc: BaseException) -> InterruptedApply | None:
    """The partial apply a KeyboardInterrupt or SIGTERM unwound, if it stopped one."""
    found = getattr(exc, "apply_report", None)
    return found if isinstance(found, InterruptedApply) else None


def observe_all(
    targets: Targets,
    names: Iterable[str],
    *,
    concurrency: int = 16,
    on_done: Callable[[Observation], None] | None = None,
) -> dict[str, Observation]:
    """Observe every named device, each driver with its own bulk read, the drivers at
    the same time (EOS and SONiC switches and GPU nodes are different devices: one
    kind need not wait for another) sharing ``concurrency`` in proportion to their
    devices, so that no more devices are talked to at once than in an apply; errors
    become observations, never exceptions."""
    groups: dict[int, tuple[Driver, list[DeviceRef]]] = {}
    for name in names:
        driver = targets.driver(name)
        groups.setdefault(id(driver), (driver, []))[1].append(targets.ref(name))
    observations: dict[str, Observation] = {}
    lock = threading.Lock()

    total = sum(len(refs) for _, refs in groups.values())

    def observe_group(group: tuple[Driver, list[DeviceRef]]) -> None:
        driver, refs = group
        share = max(1, concurrency * len(refs) // max(1, total))
        for name, found in driver.observe_many(refs, share).items():
            if isinstance(found, DeviceError):
                obs = Observation(name, None, f"{type(found).__name__}: {found.detail}")
            else:
                obs = Observation(name, found)
            with lock:
                observations[name] = obs
                if on_done is not None:
                    on_done(obs)

    if len(groups) == 1:
        observe_group(next(iter(groups.values())))
    else:
        with ThreadPoolExecutor(max_workers=len(groups)) as pool:
            list(pool.map(observe_group, groups.values()))
    return {name: observations[name] for name in _in_order(groups) if name in observations}


def _in_order(groups: Mapping[int, tuple[Driver, list[DeviceRef]]]) -> list[str]:
    """Device names group by group, as they were asked for (results keep that order)."""
    return [ref.name for _, refs in groups.values() for ref in refs]


def _settle_unknown(
    driver: Driver,
    ref: DeviceRef,
    changes: Sequence[Change],
    error: DeviceError,
    confirm_within: float | None,
) -> tuple[Outcome, str]:
    """After a timeout or drop: observe again and decide from what the device holds.

    Under commit-confirm a commit that took effect must still be confirmed, or the
    device reverts it by itself once the window closes.
    """
    try:
        state = driver.observe(ref)
    except DeviceError as again:
        return Outcome.unknown, f"{error.detail}; re-observe failed: {again.detail}"
    took = [c for c in changes if state.get(c.path) == c.after]
    if len(took) == len(changes):
        if confirm_within is not None:
            try:
                driver.confirm(ref, None)
            except DeviceError as failed:
                return Outcome.failed, (
                    f"{error.detail}; changes in place but confirm failed "
                    f"({failed.detail}): the device reverts them itself"
                )
        return (
            Outcome.applied,
            f"{error.detail}; re-observed: all {len(changes)} change(s) in place",
        )
    if not took:
        return Outcome.failed, f"{error.detail}; re-observed: not applied"
    return Outcome.failed, (
        f"{error.detail}; re-observed: {len(took)} of {len(changes)} change(s) in place"
    )


def _verify(
    driver: Driver, ref: DeviceRef, changes: Sequence[Change]
) -> tuple[Outcome, str | None]:
    """Re-observe after a commit the driver reported done. The write went out, so a
    device that cannot be observed now is unknown, never failed."""
    try:
        state = driver.observe(ref)
    except DeviceError as exc:
        return Outcome.unknown, (
            f"committed, but the verify observe failed: {type(exc).__name__}: {exc.detail}"
        )
    wrong = [c.path for c in changes if state.get(c.path) != c.after]
    if wrong:
        return Outcome.failed, f"verify: {len(wrong)} field(s) differ: {wrong[:3]}"
    return Outcome.applied, None


def apply_device(
    targets: Targets,
    name: str,
    changes: Sequence[Change],
    *,
    step: int,
    dry_run: bool,
    confirm_within: float | None,
    audit: AuditSink,
) -> DeviceResult:
    """Apply one device's changes of one step and verify them by re-observing."""
    driver, ref = targets.driver(name), targets.ref(name)
    if not dry_run:
        for change in changes:
            secret = SECRET_FIELD.search(change.path) is not None
            audit.record(
                "write",
                device=name,
                field=change.path,
                before=None if secret else change.before,
                after=None if secret else change.after,
                detail={"step": step, "redacted": True} if secret else {"step": step},
            )
    error: str | None
    try:
        result = driver.apply(ref, changes, dry_run=dry_run, confirm_within=confirm_within)
    except DeviceError as exc:
        handling = classify(exc)
        if handling is Handling.reobserve:
            outcome, error = _settle_unknown(driver, ref, changes, exc, confirm_within)
        else:
            prefix = "terminal: " if handling is Handling.terminal else ""
            outcome, error = Outcome.failed, f"{prefix}{type(exc).__name__}: {exc.detail}"
    else:
        outcome, error = result.outcome, result.error
        if outcome is Outcome.applied:
            outcome, error = _verify(driver, ref, changes)
    if not dry_run:
        audit.record(
            "result",
            device=name,
            detail={
                "step": step,
                "outcome": outcome.value,
                "error": error,
                "changes": len(changes),
            },
        )
    return DeviceResult(name, step, outcome, tuple(changes), error)


def apply_plan(
    plan: Plan,
    targets: Targets,
    *,
    dry_run: bool,
    guard: WriteGuard | None = None,
    audit: AuditSink | None = None,
    confirm_within: float | None = None,
    concurrency: int = 16,
    on_device: Callable[[DeviceResult], None] | None = None,
) -> ApplyReport:
    """Apply the plan's steps in order; a step with any failed or unknown device stops
    the apply before the next step (later steps rely on earlier ones)."""
    guard = guard or NoGuard()
    sink = audit or NoAudit()
    if plan.refused is not None:
        return ApplyReport((), f"plan refused: {plan.refused}")
    results: list[DeviceResult] = []
    running: set[str] = set()
    stop = threading.Event()
    stop_reason: list[str] = []
    not_started: list[str] = []
    lock = threading.Lock()

    def run(step: int, name: str, changes: Mapping[str, tuple[Change, ...]]) -> None:
        if stop.is_set():
            with lock:
                not_started.append(name)
            return
        try:
            if not dry_run:
                guard.before_write(name)
        except (Frozen, FencedOut) as exc:
            with lock:
                if not stop.is_set():
                    stop_reason.append(f"{type(exc).__name__}: {exc}")
                    sink.record("decision", device=name, detail={"stopped": str(exc)})
                stop.set()
                not_started.append(name)
            return
        with lock:
            running.add(name)
        try:
            result = apply_device(
                targets,
                name,
                changes[name],
                step=step,
                dry_run=dry_run,
                confirm_within=confirm_within,
                audit=sink,
            )
        finally:
            with lock:
                running.discard(name)
        with lock:
            results.append(result)
        if on_device is not None:
            on_device(result)

    signalled: BaseException | None = None
    in_flight: tuple[str, ...] = ()
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        try:
            for index, step in enumerate(plan.steps):
                if stop.is_set():
                    not_started.extend(d for s in plan.steps[index:] for d in s.devices())
                    break
                list(pool.map(lambda n, s=step: run(s.index, n, s.changes), step.devices()))
                bad = [
                    r
                    for r in results
                    if r.step == step.index and r.outcome in (Outcome.failed, Outcome.unknown)
                ]
                if bad and not stop.is_set():
                    stop_reason.append(
                        f"step {step.index} ({step.phase}): {len(bad)} device(s) "
                        "failed or unknown; later steps were not started"
                    )
                    sink.record(
                        "decision",
                        detail={"stopped_after_step": step.index, "bad": [r.device for r in bad]},
                    )
                    stop.set()
        except BaseException as exc:
            stop.set()  # a signal or an error in this thread: start no further device
            with lock:
                in_flight = tuple(sorted(running))
            signalled = exc
        # leaving the pool waits for the devices in flight: their outcome is known
    results.sort(key=lambda r: (r.step, r.device))
    report = ApplyReport(
        tuple(results), stop_reason[0] if stop_reason else None, tuple(sorted(set(not_started)))
    )
    if signalled is not None:
        ran = {r.device for r in results}
        rest = sorted({d for s in plan.steps for d in s.devices()} - ran)
        partial = InterruptedApply(report, in_flight, tuple(rest))
        setattr(signalled, "apply_report", partial)  # noqa: B010  (any exception type)
        raise signalled
    return report
