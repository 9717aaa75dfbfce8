"""Rollout figures on the controller's ``/metrics``, read from the journal each turn:
the phase of each rollout (the active ones and the latest few), the wave it is at,
its wave decisions, the GPU-hours its drains stalled, and approvals still pending."""

from __future__ import annotations

from collections import Counter as Tally

from inventory.extras import optional_imports

with optional_imports():
    from prometheus_client import CollectorRegistry, Gauge

from reconciler.state.db import StateDB
from reconciler.state.journal import RolloutRow, WaveStatus
from reconciler.state.journal_approvals import ApprovalState

LATEST = 5
"""Finished rollouts kept on /metrics beside the active ones."""


def shown(rows: list[RolloutRow]) -> list[RolloutRow]:
    """The active rollouts and the latest finished ones (bounded label sets)."""
    finished = [r for r in rows if not r.status.active]
    return [r for r in rows if r.status.active] + finished[-LATEST:]


class RolloutMetrics:
    def __init__(self, registry: CollectorRegistry, fleet: str) -> None:
        r = registry
        self.fleet = fleet
        self.phase = Gauge(
            "plumb_rollout_phase",
            "1 for the rollout's current phase (status)",
            ["fleet", "rollout", "phase"],
            registry=r,
        )
        self.wave = Gauge(
            "plumb_rollout_wave",
            "the wave a rollout is at (the first not passed)",
            ["fleet", "rollout"],
            registry=r,
        )
        self.decisions = Gauge(
            "plumb_rollout_decisions",
            "waves of a rollout by decision (proceed, hold, abort, accepted)",
            ["fleet", "rollout", "decision"],
            registry=r,
        )
        self.stalled = Gauge(
            "plumb_rollout_stalled_gpu_hours",
            "GPU-hours stalled by a rollout's drains so far",
            ["fleet", "rollout"],
            registry=r,
        )
        self.approvals = Gauge(
            "plumb_rollout_approvals_pending",
            "approvals the controller has not acted on yet",
            ["fleet"],
            registry=r,
        )

    def refresh(self, db: StateDB) -> None:
        journal, fleet = db.journal, self.fleet
        for gauge in (self.phase, self.wave, self.decisions, self.stalled):
            gauge.clear()
        for row in shown(journal.all()):
            waves = journal.waves(row.id)
            self.phase.labels(fleet, row.id, row.status.value).set(1)
            current = [w.number for w in waves if w.status is not WaveStatus.passed]
            self.wave.labels(fleet, row.id).set(current[0] if current else len(waves))
            for decision, count in Tally(w.decision for w in waves if w.decision).items():
                self.decisions.labels(fleet, row.id, decision).set(count)
            self.stalled.labels(fleet, row.id).set(sum(w.stall_gpu_hours for w in waves))
        pending = db.approvals.rows(state=ApprovalState.pending)
        self.approvals.labels(fleet).set(len(pending))
