"""The fleet's state on a PostgreSQL server shared by every clone of the fleet repo and
by CI: the same lease, freeze, audit chain, journal and pins as the embedded SQLite
file (:mod:`reconciler.state.db`), with the same statements and the same guarantees.

How each SQLite guarantee holds here:

* one writer at a time: every write transaction first takes one transaction-level
  advisory lock (``pg_advisory_xact_lock``), waiting at most ``BUSY_TIMEOUT_MS`` like
  SQLite's ``BEGIN IMMEDIATE`` with its busy timeout; so the audit chain stays a single
  chain however many processes append, and a lease check-then-insert cannot race;
* fencing tokens come from an identity sequence, which never hands out a value twice;
* triggers refuse UPDATE, DELETE and TRUNCATE of the audit log and a change to a
  recorded before-state, as the SQLite triggers do;
* a lost connection is never retried: the writer is treated as fenced out
  (:meth:`StateDB.check_write` raises ``FencedOut``) and every later statement raises
  :class:`~reconciler.state.dbfile.StateUnreachable`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime

from inventory.extras import optional_imports

with optional_imports():
    import psycopg

from reconciler.state import db as sqlite_db
from reconciler.state.audit import GUARD_TRIGGERS
from reconciler.state.db import StateDB, utc_now
from reconciler.state.dbfile import SchemaTooNew, StateDamaged, StateError
from reconciler.state.pgconn import PgConn, connect, redact, translate
from reconciler.state.pgschema import PG_MIGRATIONS

# One key for the whole database: "plumb" in ASCII.
WRITER_LOCK = 0x706C756D62


class PgStateDB(StateDB):
    """The fleet's state in a PostgreSQL database (one database per fleet)."""

    dialect = "postgresql"
    audit_guard_names = (*GUARD_TRIGGERS, "audit_no_truncate")

    def __init__(self, conn: PgConn, url: str, clock: Callable[[], datetime]) -> None:
        super().__init__(conn, None, clock)
        self.url = url
        self._pg = conn

    @property
    def location(self) -> str:
        return redact(self.url)

    def _begin(self) -> None:
        begin_writer(self._pg)

    def _rollback(self) -> None:
        with contextlib.suppress(psycopg.Error):
            if self._pg.in_transaction:
                self._pg.execute("ROLLBACK")

    def _translate(self, exc: Exception) -> StateError | None:
        return translate(self.url, exc, sqlite_db.BUSY_TIMEOUT_MS / 1000)

    def make_room(self) -> None:
        """Nothing to fold in: the server manages its own write-ahead log."""

    def audit_guards(self) -> set[str]:
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass('audit')"
                " AND NOT tgisinternal"
            ).fetchall()
        return {str(name) for (name,) in rows}

    def schema_version(self) -> int:
        with self.reading() as conn:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def close(self) -> None:
        with self._lock, contextlib.suppress(psycopg.Error):
            self._pg.close()


def begin_writer(conn: PgConn) -> None:
    """Open a transaction holding the database's single-writer lock."""
    conn.execute("BEGIN")
    conn.execute(f"SET LOCAL lock_timeout = '{int(sqlite_db.BUSY_TIMEOUT_MS)}ms'")
    conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITER_LOCK,))


def open_pg_state_db(url: str, *, clock: Callable[[], datetime] = utc_now) -> PgStateDB:
    """Connect to the fleet's state database at ``url`` and migrate it (creating the
    schema in an empty database). Raises :class:`StateError`."""
    conn = connect(url)
    try:
        migrate(conn, url, clock().astimezone(UTC))
    except BaseException:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise
    return PgStateDB(conn, url, clock)


def migrate(conn: PgConn, url: str, now: datetime) -> None:
    """Apply the migrations the database lacks, in one transaction under the writer lock
    (two processes opening a fresh database at once build the schema once)."""
    try:
        begin_writer(conn)
        try:
            _migrate(conn, url, now)
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    except psycopg.Error as exc:
        error = translate(url, exc, sqlite_db.BUSY_TIMEOUT_MS / 1000)
        raise (error or StateError(str(exc))) from exc


def _migrate(conn: PgConn, url: str, now: datetime) -> None:
    (has_versions, has_audit) = conn.execute(
        "SELECT to_regclass('schema_version') IS NOT NULL, to_regclass('audit') IS NOT NULL"
    ).fetchone()
    if has_audit and not has_versions:
        raise StateDamaged(
            f"state database {redact(url)} has an audit table but no schema_version: it is"
            " not a plumb state database; point the fleet at an empty database"
        )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version"
        " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    current = int(conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)
    if current > len(PG_MIGRATIONS):
        raise SchemaTooNew(
            f"state database schema version {current} is newer than this plumb knows"
            f" ({len(PG_MIGRATIONS)}); upgrade plumb"
        )
    for version in range(current + 1, len(PG_MIGRATIONS) + 1):
        for statement in PG_MIGRATIONS[version - 1]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
            (version, now.isoformat()),
        )
