"""The rollout journal in ``plumb.db``: every rollout, its waves and targets, each
target's before-state and node lifecycle, and the rollback pins. Everything a resumed
or rolled-back rollout needs survives a crash here.

Durability rules the schema itself enforces:

* a target's before-state is written once, before its first write, and never changed
  (a trigger refuses an update of a recorded before-state);
* at most one active pin per device and path.

Each method is one transaction; after it commits, the ``journal`` failpoint fires
(:mod:`reconciler.failpoint`), so crash drills can stop the process between any two
journal steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconciler import failpoint
from reconciler.settings import Scalar
from reconciler.state.conn import StateStore


class RolloutStatus(StrEnum):
    running = "running"  # waves in progress (or the process died: see the lease)
    held = "held"  # a wave was held: missing evidence; resume re-bakes and re-judges
    awaiting_promotion = "awaiting_promotion"  # before a wave the spec holds for a person
    aborted = "aborted"  # a wave aborted, or an operator aborted; nothing more is applied
    rolling_back = "rolling_back"
    rolled_back = "rolled_back"
    completed = "completed"

    @property
    def active(self) -> bool:
        return self in (
            RolloutStatus.running,
            RolloutStatus.held,
            RolloutStatus.awaiting_promotion,
            RolloutStatus.rolling_back,
        )


class WaveStatus(StrEnum):
    pending = "pending"
    draining = "draining"
    applying = "applying"
    accepting = "accepting"
    baking = "baking"
    assessing = "assessing"
    passed = "passed"
    held = "held"
    aborted = "aborted"
    rolled_back = "rolled_back"


class TargetStatus(StrEnum):
    pending = "pending"  # nothing recorded yet
    recorded = "recorded"  # before-state durable; not written
    in_flight = "in_flight"  # a write may have reached the device: re-observe first
    applied = "applied"  # at the intended state, verified by re-observe
    failed = "failed"  # not applied (or partly: see error); before-state kept
    unknown = "unknown"  # could not be observed after a write
    rolling_back = "rolling_back"
    rolled_back = "rolled_back"  # at its before-state again, verified
    rollback_failed = "rollback_failed"

    @property
    def written(self) -> bool:
        """A write may have reached the device: rollback must consider it."""
        return self not in (TargetStatus.pending, TargetStatus.recorded)


class Lifecycle(StrEnum):
    in_service = "in_service"
    draining = "draining"
    maintenance = "maintenance"
    acceptance = "acceptance"
    repair = "repair"
    not_drained = "not_drained"  # a target of a rollout without drain (switches)


@dataclass(frozen=True)
class RolloutRow:
    id: str
    spec_name: str
    spec_path: str
    spec_sha256: str
    spec_commit: str | None
    intent_commit: str | None
    status: RolloutStatus
    reason: str | None
    actor: str
    created_at: str
    updated_at: str
    plan: dict[str, Any]


@dataclass(frozen=True)
class WaveRow:
    rollout: str
    number: int
    canary: bool
    status: WaveStatus
    bake_minutes: float
    attempts: int
    started_at: str | None
    finished_at: str | None
    drain_start: float | None
    returned_at: float | None
    bake_start: float | None
    bake_end: float | None
    stall_gpu_hours: float
    decision: str | None
    evidence: dict[str, Any] | None


@dataclass(frozen=True)
class TargetRow:
    rollout: str
    device: str
    wave: int
    status: TargetStatus
    lifecycle: Lifecycle
    intended: dict[str, Scalar]
    before: dict[str, Scalar] | None
    before_at: str | None
    writes: int
    error: str | None


@dataclass(frozen=True)
class Pin:
    id: int
    device: str
    path: str
    value: Scalar
    reason: str
    rollout: str | None
    pinned_at: str


@dataclass(frozen=True)
class NewWave:
    number: int
    canary: bool
    bake_minutes: float


@dataclass(frozen=True)
class NewTarget:
    device: str
    wave: int
    intended: Mapping[str, Scalar]
    lifecycle: Lifecycle


class JournalError(Exception):
    """A journal operation that would break one of its rules."""


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


_WAVE_COLUMNS = (
    "rollout, number, canary, status, bake_minutes, attempts, started_at, finished_at,"
    " drain_start, returned_at, bake_start, bake_end, stall_gpu_hours, decision, evidence"
)
_TARGET_COLUMNS = (
    "rollout, device, wave, status, lifecycle, intended, before, before_at, writes, error"
)
_WAVE_FIELDS = frozenset(_WAVE_COLUMNS.replace(" ", "").split(",")) - {"rollout", "number"}


def _wave(row: tuple[Any, ...]) -> WaveRow:
    (rollout, number, canary, status, bake, attempts, started, finished) = row[:8]
    drain_start, returned, bake_start, bake_end, stall, decision, evidence = row[8:]
    return WaveRow(
        rollout,
        int(number),
        bool(canary),
        WaveStatus(status),
        float(bake),
        int(attempts),
        started,
        finished,
        drain_start,
        returned,
        bake_start,
        bake_end,
        float(stall),
        decision,
        None if evidence is None else json.loads(evidence),
    )


def _target(row: tuple[Any, ...]) -> TargetRow:
    rollout, device, wave, status, lifecycle, intended, before, before_at, writes, error = row
    return TargetRow(
        rollout,
        device,
        int(wave),
        TargetStatus(status),
        Lifecycle(lifecycle),
        json.loads(intended),
        None if before is None else json.loads(before),
        before_at,
        int(writes),
        error,
    )


class Journal:
    """The rollout journal and pins of one state database; get it as ``db.journal``."""

    def __init__(self, db: StateStore) -> None:
        self._db = db

    def _commit(self) -> None:
        failpoint.hit("journal")

    # -- rollouts ----------------------------------------------------------------------

    def new_id(self, spec_name: str) -> str:
        """``NAME-N``: the next free number for this spec."""
        with self._db.reading() as conn:
            count = conn.execute(
                "SELECT count(*) FROM rollout WHERE spec_name = ?", (spec_name,)
            ).fetchone()[0]
        return f"{spec_name}-{int(count) + 1}"

    def create(
        self,
        row: RolloutRow,
        waves: Sequence[NewWave],
        targets: Sequence[NewTarget],
    ) -> None:
        """Record a new rollout with every wave and target, in one transaction."""
        now = self._db.now().isoformat()
        with self._db.transaction() as conn:
            if conn.execute("SELECT 1 FROM rollout WHERE id = ?", (row.id,)).fetchone():
                raise JournalError(f"rollout {row.id} already exists")
            conn.execute(
                "INSERT INTO rollout VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.spec_name,
                    row.spec_path,
                    row.spec_sha256,
                    row.spec_commit,
                    row.intent_commit,
                    row.status.value,
                    row.reason,
                    row.actor,
                    now,
                    now,
                    _dumps(row.plan),
                ),
            )
            conn.executemany(
                "INSERT INTO rollout_wave (rollout, number, canary, status, bake_minutes)"
                " VALUES (?, ?, ?, ?, ?)",
                [
                    (row.id, w.number, int(w.canary), WaveStatus.pending.value, w.bake_minutes)
                    for w in waves
                ],
            )
            conn.executemany(
                "INSERT INTO rollout_target (rollout, device, wave, status, lifecycle, intended)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        row.id,
                        t.device,
                        t.wave,
                        TargetStatus.pending.value,
                        t.lifecycle.value,
                        _dumps(dict(t.intended)),
                    )
                    for t in targets
                ],
            )
        self._commit()

    def get(self, rollout: str) -> RolloutRow | None:
        with self._db.reading() as conn:
            row = conn.execute("SELECT * FROM rollout WHERE id = ?", (rollout,)).fetchone()
        return None if row is None else self._rollout(row)

    def all(self) -> list[RolloutRow]:
        with self._db.reading() as conn:
            rows = conn.execute("SELECT * FROM rollout ORDER BY created_at, id").fetchall()
        return [self._rollout(r) for r in rows]

    @staticmethod
    def _rollout(row: tuple[Any, ...]) -> RolloutRow:
        values = list(row)
        values[6] = RolloutStatus(values[6])
        values[11] = json.loads(values[11])
        return RolloutRow(*values)

    def set_status(self, rollout: str, status: RolloutStatus, reason: str | None = None) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE rollout SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                (status.value, reason, self._db.now().isoformat(), rollout),
            )
        self._commit()

    # -- waves -------------------------------------------------------------------------

    def waves(self, rollout: str) -> list[WaveRow]:
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT {_WAVE_COLUMNS} FROM rollout_wave WHERE rollout = ? ORDER BY number",
                (rollout,),
            ).fetchall()
        return [_wave(r) for r in rows]

    def update_wave(self, rollout: str, number: int, **fields: Any) -> None:
        """Set wave columns (``status``, ``bake_start``, ``evidence`` as a dict, ...)."""
        unknown = set(fields) - _WAVE_FIELDS
        if unknown:
            raise JournalError(f"no wave column {sorted(unknown)}")
        values = {
            k: (_dumps(v) if k == "evidence" and v is not None else getattr(v, "value", v))
            for k, v in fields.items()
        }
        assignments = ", ".join(f"{k} = :{k}" for k in values)
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE rollout_wave SET {assignments} WHERE rollout = :r AND number = :n",
                {**values, "r": rollout, "n": number},
            )
            conn.execute(
                "UPDATE rollout SET updated_at = ? WHERE id = ?",
                (self._db.now().isoformat(), rollout),
            )
        self._commit()

    # -- targets -----------------------------------------------------------------------

    def targets(self, rollout: str, wave: int | None = None) -> list[TargetRow]:
        query = f"SELECT {_TARGET_COLUMNS} FROM rollout_target WHERE rollout = ?"
        args: tuple[Any, ...] = (rollout,)
        if wave is not None:
            query += " AND wave = ?"
            args += (wave,)
        with self._db.reading() as conn:
            rows = conn.execute(query + " ORDER BY wave, device", args).fetchall()
        return [_target(r) for r in rows]

    def record_before(self, rollout: str, states: Mapping[str, Mapping[str, Scalar]]) -> None:
        """Record the before-states of targets that have none, all in one transaction,
        and mark them ``recorded``. A target that already has one keeps it."""
        now = self._db.now().isoformat()
        with self._db.transaction() as conn:
            conn.executemany(
                "UPDATE rollout_target SET before = ?, before_at = ?, status = ?"
                " WHERE rollout = ? AND device = ? AND before IS NULL",
                [
                    (_dumps(dict(state)), now, TargetStatus.recorded.value, rollout, device)
                    for device, state in states.items()
                ],
            )
        self._commit()

    def set_targets(
        self,
        rollout: str,
        devices: Iterable[str],
        status: TargetStatus,
        *,
        errors: Mapping[str, str | None] | None = None,
        wrote: bool = False,
    ) -> None:
        """Set the status of ``devices`` (with per-device errors; ``wrote`` counts a
        write). A write is only allowed to a target whose before-state is recorded."""
        errors = errors or {}
        names = list(devices)
        with self._db.transaction() as conn:
            if status is TargetStatus.in_flight:
                # One query per 500 devices, not a round trip per device (what a
                # networked database charges for).
                recorded: set[str] = set()
                for start in range(0, len(names), 500):
                    chunk = names[start : start + 500]
                    marks = ", ".join("?" * len(chunk))
                    rows = conn.execute(
                        "SELECT device FROM rollout_target WHERE rollout = ?"
                        f" AND before IS NOT NULL AND device IN ({marks})",
                        (rollout, *chunk),
                    ).fetchall()
                    recorded.update(str(row[0]) for row in rows)
                missing = [n for n in names if n not in recorded]
                if missing:
                    raise JournalError(
                        f"refusing to write {', '.join(missing[:5])}: no before-state recorded"
                    )
            conn.executemany(
                "UPDATE rollout_target SET status = ?, error = ?, writes = writes + ?"
                " WHERE rollout = ? AND device = ?",
                [(status.value, errors.get(n), int(wrote), rollout, n) for n in names],
            )
        self._commit()

    def set_lifecycle(self, rollout: str, devices: Iterable[str], lifecycle: Lifecycle) -> None:
        with self._db.transaction() as conn:
            conn.executemany(
                "UPDATE rollout_target SET lifecycle = ? WHERE rollout = ? AND device = ?",
                [(lifecycle.value, rollout, n) for n in devices],
            )
        self._commit()

    # -- pins --------------------------------------------------------------------------

    def pin(
        self, rollout: str | None, values: Mapping[str, Mapping[str, Scalar]], reason: str
    ) -> int:
        """Pin ``device -> path -> value`` (replacing an active pin on the same field)."""
        now = self._db.now().isoformat()
        rows = [
            (device, path, _dumps(value), reason, rollout, now)
            for device, state in values.items()
            for path, value in state.items()
        ]
        with self._db.transaction() as conn:
            conn.executemany(
                "UPDATE pin SET released_at = ?, released_by = 'replaced'"
                " WHERE device = ? AND path = ? AND released_at IS NULL",
                [(now, r[0], r[1]) for r in rows],
            )
            conn.executemany(
                "INSERT INTO pin (device, path, value, reason, rollout, pinned_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        self._commit()
        return len(rows)

    def pins(self, rollout: str | None = None) -> list[Pin]:
        query = (
            "SELECT id, device, path, value, reason, rollout, pinned_at FROM pin"
            " WHERE released_at IS NULL"
        )
        args: tuple[Any, ...] = ()
        if rollout is not None:
            query += " AND rollout = ?"
            args = (rollout,)
        with self._db.reading() as conn:
            rows = conn.execute(query + " ORDER BY device, path", args).fetchall()
        return [Pin(i, d, p, json.loads(v), r, ro, at) for i, d, p, v, r, ro, at in rows]

    def holds(self) -> dict[str, dict[str, tuple[Scalar, str]]]:
        """Active pins as ``build_plan`` holds: device -> path -> (value, reason)."""
        out: dict[str, dict[str, tuple[Scalar, str]]] = {}
        for pin in self.pins():
            out.setdefault(pin.device, {})[pin.path] = (pin.value, pin.reason)
        return out

    def release_pins(
        self, actor: str, *, rollout: str | None = None, device: str | None = None
    ) -> int:
        """Release active pins of a rollout and/or a device; returns how many."""
        if rollout is None and device is None:
            raise JournalError("name a rollout or a device whose pins to release")
        clauses, args = ["released_at IS NULL"], []
        for column, value in (("rollout", rollout), ("device", device)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        with self._db.transaction() as conn:
            count = conn.execute(
                f"UPDATE pin SET released_at = ?, released_by = ? WHERE {' AND '.join(clauses)}",
                (self._db.now().isoformat(), actor, *args),
            ).rowcount
        self._commit()
        return int(count)
