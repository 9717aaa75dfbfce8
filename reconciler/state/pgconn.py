"""The PostgreSQL edge of the state database: the one module (with
:mod:`reconciler.state.pgdb`) that talks to psycopg. It connects, turns the state
modules' ``?`` and ``:name`` placeholders into psycopg's, and maps psycopg's errors
once, to the same :class:`~reconciler.state.errors.StateError` tree the SQLite
backend raises::

    psycopg.Error
    ├── OperationalError (connection refused, lost, closed)   -> StateUnreachable
    ├── LockNotAvailable (lock_timeout, another writer)       -> StateBusy
    ├── DiskFull / OutOfMemory / IoError                      -> StateFull
    ├── ReadOnlySqlTransaction / InsufficientPrivilege        -> StateReadOnly
    └── anything else                                         -> StateError

A URL is never shown with its password (:func:`redact`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    import psycopg
    from psycopg import errors as pgerrors
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    from psycopg.pq import TransactionStatus

from reconciler.state.conn import Cursor
from reconciler.state.errors import (
    StateBusy,
    StateError,
    StateFull,
    StateReadOnly,
    StateUnreachable,
)

CONNECT_TIMEOUT_S = 5
# The advisory lock every writer of a state database holds: "plumb" in ASCII.
WRITER_LOCK = 0x706C756D62
# Notice a dead server or a cut network within seconds, not at the kernel's two hours.
_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 15000,
}
FENCED_OUT = (
    "treated as fenced out, no further device write is started; once the database answers,"
    " `plumb lease show` says whether a lease is still held: run the command again, or end"
    " a lease its holder left (the holder is gone) with `plumb lease break --reason ...`"
)

_PASSWORD = re.compile(r"(://[^:/@]*:)[^/]*@")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """``?`` -> ``%s`` and ``:name`` -> ``%(name)s`` (a ``::`` cast is left alone)."""
    return _NAMED.sub(r"%(\1)s", sql.replace("?", "%s"))


def redact(url: str) -> str:
    """The URL with its password replaced by ``***`` (safe for messages and logs)."""
    return _PASSWORD.sub(r"\1***@", url)


class PgConn:
    """A psycopg connection in autocommit mode, shaped like ``sqlite3.Connection`` for
    the state modules (:class:`~reconciler.state.conn.Conn`)."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    @property
    def in_transaction(self) -> bool:
        status = self.raw.info.transaction_status
        return status in (TransactionStatus.INTRANS, TransactionStatus.INERROR)

    def execute(self, sql: str, parameters: Any = None, /) -> Cursor:
        args = parameters if parameters else None
        return self.raw.execute(to_pyformat(sql) if args is not None else sql, args)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(to_pyformat(sql), list(parameters))
        return cursor

    def close(self) -> None:
        self.raw.close()


def connect(url: str) -> PgConn:
    """An autocommit connection to ``url``; raises :class:`StateUnreachable`."""
    return PgConn(connect_raw(url, autocommit=True))


def connect_raw(url: str, *, autocommit: bool, then: str = FENCED_OUT) -> psycopg.Connection[Any]:
    """A psycopg connection to ``url`` with plumb's timeouts and keepalives (the schema
    upgrade runs on one that is not in autocommit mode); raises :class:`StateUnreachable`
    whose message ends with ``then``."""
    try:
        info = make_conninfo(
            url,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name="plumb",
            options=_options(url),
            **_KEEPALIVE,
        )
        # No server-side prepared statements: a generic plan cached while the journal
        # was small scans the whole table for every row once it has grown (measured:
        # 4,096 targets took 20 s that way, ~2 s with per-call plans).
        return psycopg.connect(info, autocommit=autocommit, prepare_threshold=None)
    except psycopg.Error as exc:
        raise unreachable(url, exc, then) from exc


SESSION_SETTINGS = {
    # a commit is on disk before it returns, whatever the server's default, so the
    # audit of a device write is not lost to a crash after the write
    "synchronous_commit": "on",
    # the server, too, finds a client that is gone (a partitioned or frozen host) within
    # about 11 s and ends its session: a controller's leader lock is then free for a
    # standby, and a lease holder's session is seen to be gone (lease.py)
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "15000",
}
"""Settings of every plumb session (all of them settable by any role)."""


def _options(url: str) -> str:
    """The URL's own ``options`` and :data:`SESSION_SETTINGS`."""
    given = str(conninfo_to_dict(url).get("options") or "")
    ours = " ".join(f"-c {name}={value}" for name, value in SESSION_SETTINGS.items())
    return f"{given} {ours}".strip()


def writer_lock_statements(busy_seconds: float) -> tuple[str, str]:
    """What a transaction runs first to become the database's single writer: wait at
    most ``busy_seconds`` for the one advisory lock every writer takes."""
    return (
        f"SET LOCAL lock_timeout = '{int(busy_seconds * 1000)}ms'",
        f"SELECT pg_advisory_xact_lock({WRITER_LOCK})",
    )


def unreachable(url: str, exc: BaseException, then: str = FENCED_OUT) -> StateUnreachable:
    """The error for a server that cannot be reached; ``then`` says what follows."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StateUnreachable(
        f"state database {redact(url)} cannot be reached ({first_line}): {then}"
    )


def translate(url: str, exc: BaseException, busy_seconds: float) -> StateError | None:
    """The :class:`StateError` for a psycopg error; None for any other exception."""
    if not isinstance(exc, psycopg.Error):
        return None
    where = redact(url)
    if isinstance(exc, pgerrors.LockNotAvailable):
        return StateBusy(
            f"{where}: another process kept the state database locked for more than"
            f" {busy_seconds:g} s ({exc})"
        )
    if isinstance(exc, pgerrors.DiskFull | pgerrors.OutOfMemory | pgerrors.IoError):
        return StateFull(
            f"cannot write the state database {where} ({exc}): the server is out of space;"
            " free space there and run the command again (what it recorded before this"
            " point is kept)"
        )
    if isinstance(exc, pgerrors.ReadOnlySqlTransaction | pgerrors.InsufficientPrivilege):
        return StateReadOnly(
            f"state database {where} refuses this write ({exc}): the role or the server is"
            " read-only; read-only commands such as `plumb lease show` work as they are"
        )
    if isinstance(exc, psycopg.OperationalError) and not isinstance(
        exc, pgerrors.QueryCanceled | pgerrors.DeadlockDetected
    ):
        return unreachable(url, exc)
    return StateError(f"state database {where}: {str(exc).strip()}")
