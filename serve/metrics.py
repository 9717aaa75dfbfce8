"""The controller's Prometheus metrics (prometheus_client), in a registry of its own so
``/metrics`` shows exactly these (and two processes in one test never share one)."""

from __future__ import annotations

from collections.abc import Mapping

from inventory.extras import optional_imports

with optional_imports():
    from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from serve.corrections import BLOCK_KINDS, Blocked


class ServeMetrics:
    def __init__(self, fleet: str) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.fleet = fleet
        self.leader = Gauge(
            "plumb_serve_leader", "1 while this replica leads the fleet", ["fleet"], registry=r
        )
        self.state_up = Gauge(
            "plumb_state_database_up",
            "1 while this replica's last turn reached the state database",
            ["fleet"],
            registry=r,
        )
        self.drift_fields = Gauge(
            "plumb_drift_fields",
            "drifted fields by mode at the last pass",
            ["fleet", "mode"],
            registry=r,
        )
        self.drift_owned = Gauge(
            "plumb_drift_owned_fields",
            "drifted fields a rollout owns at the last pass (never corrected by drift)",
            ["fleet", "rollout"],
            registry=r,
        )
        self.drift_blocked = Gauge(
            "plumb_drift_blocked",
            "devices whose drift correction is blocked at the last pass, by reason",
            ["fleet", "reason"],
            registry=r,
        )
        self.corrected = Counter(
            "plumb_drift_corrected_fields",
            "fields corrected by the controller",
            ["fleet"],
            registry=r,
        )
        self.pending = Gauge(
            "plumb_pending_changes",
            "changes intent still calls for after the last pass",
            ["fleet"],
            registry=r,
        )
        self.unknown = Gauge(
            "plumb_unknown_devices",
            "devices the last pass could not observe",
            ["fleet"],
            registry=r,
        )
        self.last_reconcile = Gauge(
            "plumb_last_reconcile_timestamp_seconds",
            "end of the last reconcile pass",
            ["fleet"],
            registry=r,
        )
        self.duration = Gauge(
            "plumb_reconcile_duration_seconds",
            "length of the last reconcile pass",
            ["fleet"],
            registry=r,
        )
        self.passes = Counter(
            "plumb_reconcile_passes",
            "reconcile passes by result",
            ["fleet", "result"],
            registry=r,
        )
        self.window_open = Gauge(
            "plumb_sync_window_open", "1 while correction is allowed", ["fleet"], registry=r
        )
        self.lease_age = Gauge(
            "plumb_lease_age_seconds",
            "age of the fleet lease (0 when free)",
            ["fleet"],
            registry=r,
        )
        self.audit_head = Gauge(
            "plumb_audit_head_seq",
            "sequence number of the audit log's head",
            ["fleet"],
            registry=r,
        )
        self.rollouts = Gauge(
            "plumb_rollouts",
            "rollouts in the journal by status",
            ["fleet", "status"],
            registry=r,
        )
        self.outbox = Gauge(
            "plumb_notifications_undelivered",
            "notices waiting in the outbox",
            ["fleet"],
            registry=r,
        )
        self.commit = Gauge(
            "plumb_intent_commit_info",
            "the intent commit reconciled",
            ["fleet", "commit"],
            registry=r,
        )

    def set_blocked(self, blocked: Mapping[str, Blocked]) -> None:
        """Devices whose correction is blocked, by kind (every kind shown, 0 when none)."""
        for kind in BLOCK_KINDS:
            count = sum(1 for b in blocked.values() if b.kind == kind)
            self.drift_blocked.labels(self.fleet, kind).set(count)

    def set_owned(self, owned: Mapping[str, Mapping[str, list[str]]]) -> None:
        """Drifted fields per owning rollout (rollouts that own none are dropped)."""
        self.drift_owned.clear()
        for rollout, devices in owned.items():
            count = sum(len(paths) for paths in devices.values())
            self.drift_owned.labels(self.fleet, rollout).set(count)

    def render(self) -> bytes:
        return generate_latest(self.registry)
