"""Writes a dead run left behind, settled before ``plumb apply`` plans.

A run that dies between a device's commit and its confirm (a crash, SIGKILL, a power
cut) leaves a commit awaiting confirmation: the device holds the new values, so a new
plan sees nothing to do, and the device reverts by itself when the window closes. The
audit log knows better: a ``write`` record with no ``result`` record after it is a write
whose outcome nobody saw. Under the lease, before planning, each such device is observed
again: if it holds what was written, its commit is confirmed (as ``rollout resume``
does); if not, the write did not last and the plan makes it again. Either way a
``result`` record closes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reconciler.drivers.base import Outcome
from reconciler.errors import DeviceError
from reconciler.state.audit import AuditRecord
from reconciler.state.db import StateDB
from reconciler.targets import TargetError, Targets


@dataclass(frozen=True)
class Settled:
    device: str
    outcome: Outcome
    message: str


def settle_interrupted(db: StateDB, targets: Targets, record: Callable[..., None]) -> list[Settled]:
    """Observe every device with an open write, confirm what is in place, close each."""
    settled: list[Settled] = []
    for device, writes in sorted(db.audit.open_writes().items()):
        try:
            driver, ref = targets.driver(device), targets.ref(device)
            state = driver.observe(ref)
        except (DeviceError, TargetError, KeyError) as exc:
            settled.append(Settled(device, Outcome.unknown, f"cannot observe it to settle: {exc}"))
            continue  # stays open: the next run tries again
        outcome, message = _judge(writes, state)
        if outcome is Outcome.applied:
            try:
                driver.confirm(ref, None)
                message += "; its commit awaiting confirmation is confirmed"
            except DeviceError as exc:  # nothing pending: confirmed before the run died
                message += f"; nothing to confirm ({exc.detail})"
        record(
            "result",
            device=device,
            detail={
                "settled": "write left open by an interrupted run",
                "outcome": outcome.value,
                "error": None if outcome is Outcome.applied else message,
                "changes": len(writes),
            },
        )
        settled.append(Settled(device, outcome, message))
    return settled


def _judge(writes: list[AuditRecord], state: Mapping[str, object]) -> tuple[Outcome, str]:
    """Whether the device holds the last value written to each field (redacted values,
    recorded as None, cannot be compared and are left to the plan)."""
    last = {w.field: w.after for w in writes if w.field is not None}
    redacted = {w.field for w in writes if w.detail.get("redacted")}
    wrong = [f for f, after in last.items() if f not in redacted and state.get(f) != after]
    if wrong:
        return Outcome.failed, (
            f"{len(wrong)} of {len(last)} written field(s) not in place (first: {wrong[0]}):"
            " the write did not last; planned again"
        )
    return Outcome.applied, f"all {len(last)} written field(s) in place"
