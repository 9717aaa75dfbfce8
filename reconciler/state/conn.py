"""What the state modules need of a database, whichever backend holds the state.

The modules of each table (:mod:`~reconciler.state.audit`, ``lease``, ``freeze``,
``journal``, ``journal_approvals``, ``outbox``, ``drifttold``) are written against
:class:`StateStore` and :class:`Conn` alone; the backends
(:class:`~reconciler.state.db.StateDB`, :class:`~reconciler.state.pgdb.PgStateDB`)
import those modules and hand them out, never the reverse.

``sqlite3.Connection`` has the :class:`Conn` shape as it is; the PostgreSQL backend
wraps its connection to match (:mod:`reconciler.state.pgconn`). Statements use ``?``
and ``:name`` placeholders on both."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor: ...

    def close(self) -> None: ...


class StateStore(Protocol):
    """One open state database, as the table modules use it."""

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        ...

    @property
    def audit_guard_names(self) -> tuple[str, ...]:
        """The triggers that keep the audit table append-only on this backend."""
        ...

    def now(self) -> datetime:
        """The current time in UTC, from the clock the database was opened with."""
        ...

    def transaction(self) -> AbstractContextManager[Conn]:
        """A write transaction excluding every other writer; nested calls join it."""
        ...

    def reading(self) -> AbstractContextManager[Conn]:
        """The connection, held for this thread, for statements that only read."""
        ...

    def session(self) -> str:
        """This process's identity as a lease holder (see :mod:`.holder`)."""
        ...

    def session_alive(self, session: str) -> bool | None:
        """Is the holder ``session`` names still there? None when it cannot be told."""
        ...

    def audit_guards(self) -> set[str]:
        """The names of the triggers on the audit table as the database has them."""
        ...

    def make_room(self) -> None:
        """Free what space the backend can so a small write (a lease release) fits."""
        ...
