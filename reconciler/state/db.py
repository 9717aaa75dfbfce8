"""The fleet's control database, ``<repo>/<state_dir>/plumb.db``: one SQLite file in WAL
mode holding the single-writer lease, the freeze switch, the audit log and the rollout
journal with its rollback pins (:mod:`reconciler.state.journal`).

:func:`open_state_db` creates the file if needed and brings its schema up to date
(:mod:`reconciler.state.upgrade`, forward-only Alembic revisions; a file already at the
head is only read: :mod:`reconciler.state.version`); :class:`StateDB` owns the
connection and hands out ``.lease``, ``.freeze``, ``.audit`` and ``.journal``, whose
modules know the database only as a :class:`~reconciler.state.conn.StateStore`. Every
statement runs behind one lock, so worker threads may share a ``StateDB``; writes use
``BEGIN IMMEDIATE`` so two processes serialise on the file instead of failing half-way.
Every SQLite error becomes a :class:`~reconciler.state.errors.StateError` naming the file
(:mod:`reconciler.state.dbfile`).

Where the state directory cannot be written (a read-only checkout), the file is opened
read-only and every write raises :class:`StateReadOnly`; reads work as usual, and a
state that was never created reads as empty.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from reconciler.errors import FencedOut
from reconciler.state.audit import GUARD_TRIGGERS, Audit
from reconciler.state.conn import Conn
from reconciler.state.dbfile import (
    SchemaTooNew,
    StateBusy,
    StateDamaged,
    StateError,
    StateFull,
    StateReadOnly,
    StateUnreachable,
    connect_read_only,
    create_atomically,
    damaged,
    keep_out_of_git,
    mark_history,
    read_only,
    refuse_empty,
    refuse_lost_history,
    translate,
    writable,
)
from reconciler.state.drifttold import DriftTold
from reconciler.state.freeze import Freeze
from reconciler.state.holder import process_alive, process_session
from reconciler.state.journal import Journal
from reconciler.state.journal_approvals import Approvals
from reconciler.state.lease import Lease, LeaseToken
from reconciler.state.outbox import Outbox
from reconciler.state.version import HEAD, Stored, stored_version, too_new

if TYPE_CHECKING:
    from reconciler.state.upgrade import Upgraded

BUSY_TIMEOUT_MS = 5000


__all__ = [
    "SchemaTooNew",
    "StateBusy",
    "StateDB",
    "StateDamaged",
    "StateError",
    "StateFull",
    "StateReadOnly",
    "StateUnreachable",
    "open_state_db",
]


def utc_now() -> datetime:
    return datetime.now(UTC)


class StateDB:
    """One connection to the fleet's state, shared by threads behind a lock.

    This class is the SQLite backend; :class:`~reconciler.state.pgdb.PgStateDB` is the
    PostgreSQL one. Both hand out the same ``.lease``, ``.freeze``, ``.audit`` and
    ``.journal``, whose statements run unchanged on either."""

    dialect = "sqlite"
    audit_guard_names: tuple[str, ...] = GUARD_TRIGGERS

    def __init__(
        self,
        conn: Conn,
        path: Path | None,
        clock: Callable[[], datetime],
        *,
        read_only_reason: str | None = None,
    ):
        self.path = path
        self.read_only_reason = read_only_reason
        self._conn = conn
        self._lock = threading.RLock()
        self._clock = clock
        self.audit = Audit(self)
        self.lease = Lease(self, self.audit)
        self.freeze = Freeze(self, self.audit)
        self.journal = Journal(self)
        self.outbox = Outbox(self)
        self.drift_told = DriftTold(self)
        self.approvals = Approvals(self)

    @property
    def location(self) -> str:
        """Where the state lives, for messages (a file, or a URL without its password)."""
        return str(self.path)

    def now(self) -> datetime:
        """The current time in UTC (from the clock given to :func:`open_state_db`)."""
        return self._clock().astimezone(UTC)

    @contextmanager
    def transaction(self) -> Iterator[Conn]:
        """A write transaction that excludes every other writer for its length (SQLite's
        ``BEGIN IMMEDIATE``); nested calls join the outer one."""
        with self._lock:
            if self._conn.in_transaction:
                yield self._conn
                return
            self._reconnect()
            if self.read_only_reason is not None:
                raise self._refuse_write(self.read_only_reason)
            try:
                self._begin()
                try:
                    yield self._conn
                except BaseException:
                    self._rollback()
                    raise
                self._conn.execute("COMMIT")
            except Exception as exc:
                error = self._translate(exc)
                if error is None:
                    raise
                self._rollback()
                raise error from exc

    @contextmanager
    def reading(self) -> Iterator[Conn]:
        """The connection, held for this thread, for statements that only read."""
        with self._lock:
            if not self._conn.in_transaction:
                self._reconnect()
            try:
                yield self._conn
            except Exception as exc:
                error = self._translate(exc)
                if error is None:
                    raise
                raise error from exc

    def session(self) -> str:
        """This process (host, pid, start time): a SQLite state is shared by the
        processes of one host, and a lease's holder is gone when its process is."""
        return process_session()

    def session_alive(self, session: str) -> bool | None:
        return process_alive(session)

    def _refuse_write(self, why: str) -> StateError:
        """The error of a write to a state this process may only read."""
        return read_only(Path(self.location), why)

    def _reconnect(self) -> None:
        """Before a statement outside a transaction: open a new connection if the last
        one was lost (a server database; a file never is). Raises ``StateUnreachable``."""

    def retry_now(self) -> None:
        """Let the next statement try to reconnect at once, whatever the backoff says
        (a caller that paces its own retries, as ``plumb serve`` does)."""

    def drop_connection(self) -> None:
        """Close a connection that may be dead without knowing it yet (its server went
        away while it was idle), so the next statement opens a new one."""

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _translate(self, exc: Exception) -> StateError | None:
        """The :class:`StateError` for a database error; None for any other exception."""
        if not isinstance(exc, sqlite3.Error):
            return None
        return translate(Path(self.location), exc, BUSY_TIMEOUT_MS / 1000)

    def make_room(self) -> None:
        """Move the write-ahead log into the database and truncate it: on a full disk this
        frees the log's space, so a small write (a lease release) can go through."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def check_write(self, token: LeaseToken) -> None:
        """Raise ``Frozen`` or ``FencedOut`` unless a device write may start now. A state
        that cannot be reached proves no lease: that is ``FencedOut`` too (fail closed)."""
        try:
            with self.reading():
                self.freeze.check()
                self.lease.check(token)
        except StateUnreachable as exc:
            raise FencedOut(str(exc)) from exc

    def audit_guards(self) -> set[str]:
        """The names of the triggers that keep the audit table append-only."""
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit'"
            ).fetchall()
        return {str(name) for (name,) in rows}

    def schema_version(self) -> int:
        with self.reading() as conn:
            return _stored(conn, Path(self.location)).version

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
    """Open the control database at ``path`` and upgrade it, creating it if it does not
    exist; read-only where it cannot be written. Raises :class:`StateError`."""
    now = clock().astimezone(UTC)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if path.parent.is_dir():
            raise
        return _empty_read_only(path, clock, exc.strerror or str(exc))
    keep_out_of_git(path.parent)
    if not path.exists():
        if not os.access(path.parent, os.W_OK):
            return _empty_read_only(path, clock, "the state directory is not writable")
        refuse_lost_history(path)
        create_atomically(path, lambda conn: _create(conn, path, now), BUSY_TIMEOUT_MS / 1000)
    refuse_empty(path)
    if not writable(path):
        return _open_read_only(path, clock)
    conn = _connect(path)
    try:
        stored = _stored(conn, path)
        if stored.version > HEAD:
            raise SchemaTooNew(too_new(stored.version))
        if not stored.current:
            _upgrade(conn, path, now)
    except sqlite3.Error as exc:
        conn.close()
        raise translate(path, exc, BUSY_TIMEOUT_MS / 1000) from exc
    except BaseException:
        conn.close()
        raise
    mark_history(path, now.isoformat(timespec="seconds"))
    return StateDB(conn, path, clock)


def upgrade_state_db(path: Path, *, clock: Callable[[], datetime] = utc_now) -> Upgraded:
    """Bring the database at ``path`` to this plumb's schema, saying from which version
    (``plumb state upgrade``); a database that does not exist yet is created."""
    from reconciler.state.upgrade import Upgraded

    if not path.exists():
        open_state_db(path, clock=clock).close()
        if not path.exists():  # the state directory is not writable
            raise read_only(path, "the state directory is not writable")
        return Upgraded(str(path), 0, HEAD, stamped=False)
    refuse_empty(path)
    if not writable(path):
        raise read_only(path, "the file or its directory is not writable")
    conn = _connect(path)
    try:
        return _upgrade(conn, path, clock().astimezone(UTC))
    except sqlite3.Error as exc:
        raise translate(path, exc, BUSY_TIMEOUT_MS / 1000) from exc
    finally:
        conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise translate(path, exc, BUSY_TIMEOUT_MS / 1000) from exc
    return conn


def _open_read_only(path: Path, clock: Callable[[], datetime]) -> StateDB:
    """The existing file, read-only: its schema must be exactly this plumb's."""
    conn = connect_read_only(path, BUSY_TIMEOUT_MS / 1000)
    try:
        stored = _stored(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise translate(path, exc, BUSY_TIMEOUT_MS / 1000) from exc
    except BaseException:
        conn.close()
        raise
    if stored.version > HEAD:
        conn.close()
        raise SchemaTooNew(too_new(stored.version))
    # A file from before Alembic at the head version holds the same schema; it only
    # lacks the record of its revision, which is written where the file can be.
    if stored.version < HEAD:
        conn.close()
        raise read_only(path, f"schema version {stored.version} needs an upgrade to {HEAD} first")
    why = "the file or its directory is not writable"
    return StateDB(conn, path, clock, read_only_reason=why)


def _empty_read_only(path: Path, clock: Callable[[], datetime], why: str) -> StateDB:
    """No state was ever recorded and none can be here: an empty schema in memory."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    _upgrade(conn, path, clock().astimezone(UTC))
    return StateDB(conn, path, clock, read_only_reason=f"{why}; no state recorded yet")


def _stored(conn: Conn, path: Path) -> Stored:
    """The schema version of ``path`` (open as ``conn``); a file with tables but no
    version is refused."""
    stored = stored_version(lambda sql: conn.execute(sql).fetchall(), "sqlite")
    if stored.foreign:
        raise damaged(path, "not a plumb state database")
    return stored


def _create(conn: sqlite3.Connection, path: Path, now: datetime) -> None:
    _upgrade(conn, path, now)


def _upgrade(conn: sqlite3.Connection, path: Path, now: datetime) -> Upgraded:
    """Run the schema upgrade on ``conn`` (SQLAlchemy and Alembic load here, and only
    when a file is created or behind)."""
    from reconciler.state import upgrade

    return upgrade.upgrade_sqlite(
        conn,
        path,
        now,
        refuse=lambda why: damaged(path, why),
        busy_seconds=BUSY_TIMEOUT_MS / 1000,
    )
