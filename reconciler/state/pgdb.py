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
* a lost connection fences the writer out: the statement that finds it lost raises
  :class:`~reconciler.state.errors.StateUnreachable` (:meth:`StateDB.check_write`
  raises ``FencedOut``), and so does every statement until the server answers again.
  The next statement opens a new connection (after a failed attempt, the next waits
  :func:`retry_after`: 1 s, doubling to 10 s); nothing is replayed. That is safe
  because every device write is checked against the lease's fencing token on the
  connection it runs on: a lease that was broken while this process could not see the
  database refuses its next write, and a lease nobody broke means nobody else wrote.
  A long run (``plumb serve``, a rollout waiting out a bake) so outlives a database
  restart or failover.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from inventory.envsettings import read_settings
from inventory.extras import optional_imports

with optional_imports():
    import psycopg

from reconciler.state import db as sqlite_db
from reconciler.state.audit import GUARD_TRIGGERS
from reconciler.state.conn import Conn
from reconciler.state.db import StateDB, utc_now
from reconciler.state.errors import (
    SchemaTooNew,
    StateDamaged,
    StateError,
    StateReadOnly,
    StateUnreachable,
)
from reconciler.state.pgconn import (
    FENCED_OUT,
    PgConn,
    connect,
    connect_raw,
    redact,
    translate,
    writer_lock_statements,
)
from reconciler.state.retry import retry_after
from reconciler.state.version import HEAD, Stored, stored_version, too_new

if TYPE_CHECKING:
    from reconciler.state.upgrade import Upgraded


class PgStateDB(StateDB):
    """The fleet's state in a PostgreSQL database (one database per fleet)."""

    dialect = "postgresql"
    audit_guard_names = (*GUARD_TRIGGERS, "audit_no_truncate")

    def __init__(
        self,
        conn: PgConn,
        url: str,
        clock: Callable[[], datetime],
        *,
        read_only_reason: str | None = None,
    ) -> None:
        super().__init__(conn, None, clock, read_only_reason=read_only_reason)
        self.url = url
        self._pg = conn
        self._failures = 0  # reconnect attempts that failed in a row
        self._retry_at = 0.0  # time.monotonic() before which none is tried
        self.reconnects = 0  # connections reopened after a loss, for logs and tests
        self._session: tuple[PgConn, str] | None = None

    def session(self) -> str:
        """``pg PID BACKEND_START`` of the state connection: a lease's holder is gone
        when its session is (the process died, or the server dropped the connection);
        a holder that reconnects records its new session at its next heartbeat."""
        if self._session is None or self._session[0] is not self._pg:
            with self.reading() as conn:
                pid, started = conn.execute(
                    "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
                ).fetchone()
            self._session = (self._pg, f"pg {pid} {started.isoformat()}")
        return self._session[1]

    def session_alive(self, session: str) -> bool | None:
        parts = session.split(" ", 2)
        if len(parts) != 3 or parts[0] != "pg" or not parts[1].isdigit():
            return None  # a holder from before the state moved here
        with self.reading() as conn:
            row = conn.execute(
                "SELECT backend_start FROM pg_stat_activity WHERE pid = ?", (int(parts[1]),)
            ).fetchone()
        if row is None:
            return False
        if row[0] is None:  # another role's session: this role may not see its start
            return None
        return bool(row[0].isoformat() == parts[2])

    def _refuse_write(self, why: str) -> StateError:
        return StateReadOnly(
            f"state database {self.location} is not durable: {why}. plumb records"
            " before-states and the audit of device writes there, and a crash could lose"
            " them after the writes happened, so it refuses to record. Turn them on"
            " (ALTER SYSTEM SET fsync = on; ALTER SYSTEM SET full_page_writes = on;"
            " SELECT pg_reload_conf()), or, for a throwaway database only, set"
            " PLUMB_STATE_NONDURABLE=accept. Read-only commands such as `plumb lease show`"
            " and `plumb audit verify` work as they are"
        )

    def retry_now(self) -> None:
        self._retry_at = 0.0

    def drop_connection(self) -> None:
        with self._lock, contextlib.suppress(psycopg.Error):
            if not self._pg.in_transaction:
                self._pg.close()

    def _reconnect(self) -> None:
        if not self._pg.raw.closed and not self._pg.raw.broken:
            return
        now = time.monotonic()
        if now < self._retry_at:
            raise StateUnreachable(
                f"state database {redact(self.url)} cannot be reached (connection lost; the"
                f" next try in {self._retry_at - now:.0f} s): the writer is fenced out until"
                " then"
            )
        try:
            fresh = connect(self.url)
        except StateUnreachable:
            self._failures += 1
            self._retry_at = time.monotonic() + retry_after(self._failures)
            raise
        with contextlib.suppress(psycopg.Error):
            self._pg.close()
        self._conn = self._pg = fresh
        self._failures = 0
        self._retry_at = 0.0
        self.reconnects += 1

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
        error = translate(self.url, exc, _busy_seconds())
        if isinstance(error, StateUnreachable) and not self._pg.raw.closed:
            with contextlib.suppress(psycopg.Error):  # a failed server: start afresh
                self._pg.close()
        return error

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


def open_pg_state_db(
    url: str, *, clock: Callable[[], datetime] = utc_now, then: str = FENCED_OUT
) -> PgStateDB:
    """Connect to the fleet's state database at ``url`` and upgrade its schema (creating
    it in an empty database). Raises :class:`StateError`; a server that cannot be
    reached, :class:`StateUnreachable` whose message ends with ``then``."""
    conn = PgConn(connect_raw(url, autocommit=True, then=then))
    try:
        stored = _stored(conn, url)
        if stored.version > HEAD:
            raise SchemaTooNew(too_new(stored.version))
        if not stored.current:
            _upgrade(url, clock().astimezone(UTC))
        lacking = not_durable(conn)
    except psycopg.Error as exc:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise (translate(url, exc, _busy_seconds()) or StateError(str(exc))) from exc
    except BaseException:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise
    accepted = read_settings().state_nondurable == "accept"
    why = None if not lacking or accepted else ", ".join(lacking)
    return PgStateDB(conn, url, clock, read_only_reason=why)


DURABLE = {"fsync": "on", "full_page_writes": "on"}
"""Server settings without which a committed record can be lost or torn by a crash."""


def not_durable(conn: Conn) -> list[str]:
    """The settings of this session that leave a commit undurable (``fsync = off``...);
    ``synchronous_commit`` is plumb's own (set on every connection, see
    :mod:`.pgconn`) but a connection pooler can drop it, so it is read back too."""
    names = (*DURABLE, "synchronous_commit")
    row = conn.execute(
        "SELECT " + ", ".join(f"current_setting('{name}')" for name in names)
    ).fetchone()
    found = dict(zip(names, row, strict=True))
    lacking = [
        f"{name} = {found[name]}" for name, wanted in DURABLE.items() if found[name] != wanted
    ]
    if found["synchronous_commit"] == "off":
        lacking.append("synchronous_commit = off")
    return lacking


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
