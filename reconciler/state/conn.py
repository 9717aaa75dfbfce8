"""What the state modules need of a database connection, whichever backend holds the
state: ``sqlite3.Connection`` has this shape as it is; the PostgreSQL backend wraps its
connection to match (:mod:`reconciler.state.pgconn`). Statements use ``?`` and
``:name`` placeholders on both."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
