"""The fleet's state on a PostgreSQL server shared by every clone of the fleet repo and
by CI: the same lease, freeze, audit chain, journal and pins as the embedded SQLite
file (:mod:`reconciler.state.db`), with the same statements and the same guarantees.

How each SQLite guarantee holds here:

* one writer at a time: every write transaction (the schema upgrade included) first
  takes one transaction-level advisory lock (``pg_advisory_xact_lock``), waiting at
  most ``BUSY_TIMEOUT_MS`` like SQLite's ``BEGIN IMMEDIATE`` with its busy timeout; so
  the audit chain stays a single chain however many processes append, and a lease
  check-then-insert cannot race;
* fencing tokens come from an identity sequence, which never hands out a value twice;
* triggers refuse UPDATE, DELETE and TRUNCATE of the audit log and a change to a
  recorded before-state, as the SQLite triggers do;
* a lost connection is never retried: the writer is treated as fenced out
  (:meth:`StateDB.check_write` raises ``FencedOut``) and every later statement raises
  :class:`~reconciler.state.errors.StateUnreachable`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from inventory.extras import optional_imports

with optional_imports():
    import psycopg

from reconciler.state import db as sqlite_db
from reconciler.state.audit import GUARD_TRIGGERS
from reconciler.state.conn import Conn
from reconciler.state.db import StateDB, utc_now
from reconciler.state.errors import SchemaTooNew, StateDamaged, StateError
from reconciler.state.pgconn import (
    PgConn,
    connect,
    redact,
    translate,
    writer_lock_statements,
)
from reconciler.state.version import HEAD, Stored, stored_version, too_new

if TYPE_CHECKING:
    from reconciler.state.upgrade import Upgraded


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
        return translate(self.url, exc, _busy_seconds())

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
            return _stored(conn, self.url).version

    def close(self) -> None:
        with self._lock, contextlib.suppress(psycopg.Error):
            self._pg.close()


def _busy_seconds() -> float:
    return sqlite_db.BUSY_TIMEOUT_MS / 1000


def begin_writer(conn: PgConn) -> None:
    """Open a transaction holding the database's single-writer lock."""
    conn.execute("BEGIN")
    for statement in writer_lock_statements(_busy_seconds()):
        conn.execute(statement)


def open_pg_state_db(url: str, *, clock: Callable[[], datetime] = utc_now) -> PgStateDB:
    """Connect to the fleet's state database at ``url`` and upgrade its schema (creating
    it in an empty database). Raises :class:`StateError`."""
    conn = connect(url)
    try:
        stored = _stored(conn, url)
        if stored.version > HEAD:
            raise SchemaTooNew(too_new(stored.version))
        if not stored.current:
            _upgrade(url, clock().astimezone(UTC))
    except psycopg.Error as exc:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise (translate(url, exc, _busy_seconds()) or StateError(str(exc))) from exc
    except BaseException:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise
    return PgStateDB(conn, url, clock)


def upgrade_pg_state_db(url: str, *, clock: Callable[[], datetime] = utc_now) -> Upgraded:
    """Bring the database at ``url`` to this plumb's schema, saying from which version
    (``plumb state upgrade``); an empty database gets the whole schema."""
    return _upgrade(url, clock().astimezone(UTC))


def _stored(conn: Conn, url: str) -> Stored:
    stored = stored_version(lambda sql: conn.execute(sql).fetchall(), "postgresql")
    if stored.foreign:
        raise _not_plumbs(url, "not a plumb state database")
    return stored


def _not_plumbs(url: str, why: str) -> StateDamaged:
    return StateDamaged(
        f"state database {redact(url)} holds an audit table but no plumb schema version"
        f" ({why}); point the fleet at an empty database"
    )


def _upgrade(url: str, now: datetime) -> Upgraded:
    """Run the schema upgrade on a connection of its own (SQLAlchemy and Alembic load
    here, and only when the database is empty or behind)."""
    from reconciler.state import upgrade

    return upgrade.upgrade_postgresql(
        url, now, refuse=lambda why: _not_plumbs(url, why), busy_seconds=_busy_seconds()
    )
