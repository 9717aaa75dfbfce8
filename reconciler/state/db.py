"""The fleet's control database, ``<repo>/<state_dir>/plumb.db``: one SQLite file in WAL
mode holding the single-writer lease, the freeze switch, the audit log and the rollout
journal with its rollback pins (:mod:`reconciler.state.journal`).

:func:`open_state_db` creates the file if needed and brings its schema up to date with
forward-only migrations; :class:`StateDB` owns the connection and hands out
``.lease``, ``.freeze``, ``.audit`` and ``.journal``. Every statement runs behind one
lock, so worker threads may share a ``StateDB``; writes use ``BEGIN IMMEDIATE`` so two processes
serialise on the file instead of failing half-way.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from reconciler.state.audit import Audit
from reconciler.state.freeze import Freeze
from reconciler.state.journal import JOURNAL_MIGRATION, Journal
from reconciler.state.lease import Lease, LeaseToken

BUSY_TIMEOUT_MS = 5000

# Append only: a released plumb may have created any prefix of these, never rewrite one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE lease (
            token INTEGER PRIMARY KEY AUTOINCREMENT,
            holder TEXT NOT NULL,
            purpose TEXT NOT NULL,
            acquired_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            released_at TEXT,
            ended_by TEXT,
            end_reason TEXT  -- NULL when released by its holder; the reason when broken
        )""",
        # At most one unreleased lease, enforced by the schema, not only by the code.
        "CREATE UNIQUE INDEX lease_single_holder ON lease((released_at IS NULL))"
        " WHERE released_at IS NULL",
        """CREATE TABLE freeze (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            reason TEXT NOT NULL,
            actor TEXT NOT NULL,
            since TEXT NOT NULL
        )""",
        """CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            intent_commit TEXT,
            device TEXT,
            field TEXT,
            before TEXT NOT NULL,
            after TEXT NOT NULL,
            detail TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )""",
        "CREATE INDEX audit_by_device ON audit(device, seq)",
        "CREATE INDEX audit_by_kind ON audit(kind, seq)",
        """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
           BEGIN SELECT RAISE(ABORT, 'audit log is append-only: UPDATE refused'); END""",
        """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
           BEGIN SELECT RAISE(ABORT, 'audit log is append-only: DELETE refused'); END""",
    ),
    JOURNAL_MIGRATION,
)


class StateBusy(Exception):
    """Another process held the database's write lock past the busy timeout."""


class SchemaTooNew(Exception):
    """The database was migrated by a newer plumb than this one; refuse to touch it."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class StateDB:
    """One connection to ``plumb.db``, shared by threads behind a lock."""

    def __init__(self, conn: sqlite3.Connection, path: Path, clock: Callable[[], datetime]):
        self.path = path
        self._conn = conn
        self._lock = threading.RLock()
        self._clock = clock
        self.audit = Audit(self)
        self.lease = Lease(self, self.audit)
        self.freeze = Freeze(self, self.audit)
        self.journal = Journal(self)

    def now(self) -> datetime:
        """The current time in UTC (from the clock given to :func:`open_state_db`)."""
        return self._clock().astimezone(UTC)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested calls join the outer one."""
        with self._lock:
            if self._conn.in_transaction:
                yield self._conn
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StateBusy(
                    f"{self.path}: another process kept the state database locked for more"
                    f" than {BUSY_TIMEOUT_MS // 1000} s ({exc})"
                ) from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, held for this thread, for statements that only read."""
        with self._lock:
            yield self._conn

    def check_write(self, token: LeaseToken) -> None:
        """Raise ``Frozen`` or ``FencedOut`` unless a device write may start now."""
        with self.reading():
            self.freeze.check()
            self.lease.check(token)

    def schema_version(self) -> int:
        with self.reading() as conn:
            return _current_version(conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> StateDB:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_state_db(path: Path, *, clock: Callable[[], datetime] = utc_now) -> StateDB:
    """Open (creating if needed) the control database at ``path`` and migrate it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, clock().astimezone(UTC))
    except BaseException:
        conn.close()
        raise
    return StateDB(conn, path, clock)


def _current_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def _migrate(conn: sqlite3.Connection, now: datetime) -> None:
    """Apply the migrations this file lacks, all in one transaction (DDL is transactional)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        current = _current_version(conn)
        if current > len(MIGRATIONS):
            raise SchemaTooNew(
                f"state database schema version {current} is newer than this plumb knows"
                f" ({len(MIGRATIONS)}); upgrade plumb"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                (version, now.isoformat()),
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
