"""The state database as a file: creating it so no reader ever sees it half-made, opening
it read-only where it cannot be written, and turning SQLite's errors into
:class:`StateError` messages that say what happened to which file and what to do.

SQLite's errors become the :mod:`reconciler.state.errors` tree here (raised ``from``
the SQLite error), which this module re-exports for its callers.

A fresh ``plumb.db`` is built under a temporary name and linked into place only once
its schema is complete, so an empty ``plumb.db`` is never plumb's doing: it is damage
(a truncation, a failed copy) and is refused instead of being silently re-created.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from reconciler.state.errors import (
    SchemaTooNew,
    StateBusy,
    StateDamaged,
    StateError,
    StateFull,
    StateReadOnly,
    StateUnreachable,
)

__all__ = [
    "SchemaTooNew",
    "StateBusy",
    "StateDamaged",
    "StateError",
    "StateFull",
    "StateReadOnly",
    "StateUnreachable",
    "connect_read_only",
    "create_atomically",
    "damaged",
    "keep_out_of_git",
    "read_only",
    "refuse_empty",
    "state_file_error",
    "translate",
    "writable",
]


_FULL = {sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR}
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


def translate(path: Path, exc: sqlite3.Error, busy_seconds: float) -> StateError:
    """The :class:`StateError` for a SQLite error on the state database at ``path``."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in _BUSY:
        return StateBusy(
            f"{path}: another process kept the state database locked for more"
            f" than {busy_seconds:g} s ({exc})"
        )
    if code in _FULL:
        return StateFull(
            f"cannot write the state database {path} ({exc}): the disk or the file size"
            " limit is full, or the disk is failing; free space and run the command again"
            " (what it recorded before this point is kept)"
        )
    if code == sqlite3.SQLITE_READONLY:
        return read_only(path, str(exc))
    if code in _DAMAGED:
        return damaged(path, str(exc))
    return StateError(f"state database {path}: {exc}")


def state_file_error(exc: BaseException) -> str | None:
    """A message for a SQLite error on a state file plumb cannot name (the lab's); None
    when ``exc`` is no SQLite error."""
    if not isinstance(exc, sqlite3.Error):
        return None
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _FULL:
        return (
            f"cannot write a state file ({exc}): the disk or the file size limit is full,"
            " or the disk is failing; free space and run the command again"
        )
    return f"a state file could not be used: {exc}"


def damaged(path: Path, why: str) -> StateDamaged:
    return StateDamaged(
        f"state database {path} is damaged ({why}): its lease, freeze, audit log and rollout"
        " journal cannot be read, and plumb will not start a new one over it. Restore it"
        " from a backup; if this fleet never had state worth keeping, move it aside and run"
        " the command again"
    )


def read_only(path: Path, why: str) -> StateReadOnly:
    return StateReadOnly(
        f"state database {path} is read-only here ({why}): this command records to it;"
        " run it where the state directory is writable (read-only commands such as"
        " `plumb lease show` and `plumb audit verify` work as they are)"
    )


STATE_GITIGNORE = "# plumb's state (lease, audit log, journal, lab): never committed\n*\n"


def keep_out_of_git(state_dir: Path) -> None:
    """Write ``<state_dir>/.gitignore`` ignoring everything in it, unless one is there:
    the state is the fleet's own record, not intent, and must not be committed."""
    marker = state_dir / ".gitignore"
    if not marker.exists():
        with contextlib.suppress(OSError):  # read-only: nothing is written there anyway
            marker.write_text(STATE_GITIGNORE)


HISTORY_SUFFIX = ".history"


def history_marker(path: Path) -> Path:
    """``plumb.db.history`` beside the database: written when its history begins, so a
    database file deleted later is noticed instead of silently starting afresh."""
    return path.with_name(path.name + HISTORY_SUFFIX)


class HistoryLost(StateError):
    """The database is gone but its history marker says there was one."""


def refuse_lost_history(path: Path) -> None:
    """Refuse to create a database where one was (its marker remains): the audit log,
    lease, freeze and journal would begin again with no word."""
    marker = history_marker(path)
    if not path.exists() and marker.exists():
        began = marker.read_text(errors="replace").strip()
        raise HistoryLost(
            f"{path} is gone, but the fleet's state history began there ({began}): a new"
            " database would lose the audit log, lift a freeze and forget rollouts and pins."
            " Restore it from a backup, or start a new history on purpose with"
            " `plumb state new-history --reason TEXT`"
        )


def mark_history(path: Path, began: str) -> None:
    """Write the history marker of ``path`` if it is missing (best effort)."""
    marker = history_marker(path)
    if not marker.exists():
        with contextlib.suppress(OSError):
            marker.write_text(f"state history of {path.name} since {began}\n")


def writable(path: Path) -> bool:
    """Whether plumb may write ``path`` (and its ``-wal``/``-shm`` files beside it)."""
    return os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)


def refuse_empty(path: Path) -> None:
    """An existing 0-byte ``plumb.db`` is damage, never a file to start afresh in."""
    if path.stat().st_size == 0:
        raise damaged(path, "the file is empty (0 bytes)")


def create_atomically(
    path: Path, build: Callable[[sqlite3.Connection], None], busy_seconds: float
) -> None:
    """Make ``path`` a complete database built by ``build``, or leave it to whoever made it
    first: the schema is built under a temporary name and hard-linked into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.new")
    try:
        conn = sqlite3.connect(temporary, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            build(conn)
        finally:
            conn.close()
        with contextlib.suppress(FileExistsError):  # another process was first: also complete
            os.link(temporary, path)
    except sqlite3.Error as exc:
        raise translate(path, exc, busy_seconds) from exc
    finally:
        for leftover in (temporary, *(Path(f"{temporary}{s}") for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def connect_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection; falls back to ``immutable`` when SQLite cannot create the
    WAL's shared-memory file beside a database in a read-only directory."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    return sqlite3.connect(f"{uri}&immutable=1", uri=True, timeout=timeout, check_same_thread=False)

