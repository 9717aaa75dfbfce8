"""The notification outbox and the controller's cursors, in the fleet's state database.

A notice is inserted in the same transaction as the decision it reports (the audit
record, the controller's cursor over the audit log), so it exists exactly when the
decision committed; a sender delivers it later, retrying with backoff
(:meth:`Outbox.failed`) until the target answers 2xx. One row per notice and target,
so one target's outage does not delay another. Statements run on both backends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from reconciler.state.conn import Conn, StateStore

MAX_BACKOFF_SECONDS = 300.0


@dataclass(frozen=True)
class Pending:
    id: int
    event: str
    target: str
    format: str
    payload: dict[str, Any]
    attempts: int


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failures: 1, 2, 4, ... up to 5 min."""
    return min(2.0 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS)


class Outbox:
    def __init__(self, db: StateStore) -> None:
        self._db = db

    def add(
        self, conn: Conn, *, event: str, target: str, format: str, payload: dict[str, Any]
    ) -> None:
        """Queue one notice inside the caller's transaction (``conn`` from it)."""
        now = self._db.now().isoformat()
        conn.execute(
            "INSERT INTO outbox (created_at, event, target, format, payload, next_attempt_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (now, event, target, format, json.dumps(payload, sort_keys=True), now),
        )

    def due(self, limit: int = 20) -> list[Pending]:
        with self._db.reading() as conn:
            rows = conn.execute(
                "SELECT id, event, target, format, payload, attempts FROM outbox"
                " WHERE delivered_at IS NULL AND next_attempt_at <= ? ORDER BY id LIMIT ?",
                (self._db.now().isoformat(), limit),
            ).fetchall()
        return [Pending(int(r[0]), r[1], r[2], r[3], json.loads(r[4]), int(r[5])) for r in rows]

    def delivered(self, id: int) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE outbox SET delivered_at = ?, attempts = attempts + 1, last_error = NULL"
                " WHERE id = ?",
                (self._db.now().isoformat(), id),
            )

    def failed(self, id: int, attempts: int, error: str) -> datetime:
        """Record a failed try; returns when the next one is due."""
        due = self._db.now() + timedelta(seconds=backoff(attempts + 1))
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE outbox SET attempts = ?, last_error = ?, next_attempt_at = ? WHERE id = ?",
                (attempts + 1, error[:500], due.isoformat(), id),
            )
        return due

    def undelivered(self) -> int:
        with self._db.reading() as conn:
            (count,) = conn.execute(
                "SELECT count(*) FROM outbox WHERE delivered_at IS NULL"
            ).fetchone()
        return int(count)

    def cursor(self, name: str) -> int | None:
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT value FROM controller_cursor WHERE name = ?", (name,)
            ).fetchone()
        return int(row[0]) if row else None

    def set_cursor(self, conn: Conn, name: str, value: int) -> None:
        conn.execute(
            "INSERT INTO controller_cursor (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, value),
        )
