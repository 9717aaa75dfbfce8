"""The state database's error tree, shared by both backends and by the modules of each
table: every error either backend's driver raises is mapped once, at its edge
(:mod:`reconciler.state.dbfile` for SQLite, :mod:`reconciler.state.pgconn` for
PostgreSQL), to one of these::

    StateError             the state database cannot be used as it is
    ├── StateBusy          another process held the write lock past the busy timeout
    ├── SchemaTooNew       migrated by a newer plumb
    ├── StateDamaged       empty (0 bytes), not a SQLite file, malformed, or not plumb's
    ├── StateReadOnly      a write on a state that cannot be written here
    ├── StateFull          the disk (or the file size limit) is full, or a write failed
    └── StateUnreachable   the PostgreSQL server cannot be reached (or the connection was
                           lost): the writer is treated as fenced out
"""

from __future__ import annotations


class StateError(Exception):
    """The state database cannot be used as it is; the message says why and what to do."""


class StateBusy(StateError):
    """Another process held the database's write lock past the busy timeout."""


class SchemaTooNew(StateError):
    """The database was migrated by a newer plumb than this one; refuse to touch it."""


class StateDamaged(StateError):
    """The file is empty, not a SQLite database, malformed, or holds no plumb state."""


class StateReadOnly(StateError):
    """A write was asked of a state database opened read-only."""


class StateFull(StateError):
    """A write failed for lack of space (or another I/O error while writing)."""


class StateUnreachable(StateError):
    """The state server cannot be reached: no lease can be proven, so no write starts."""
