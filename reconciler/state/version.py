"""Which schema version a state database holds, read with one or two plain queries, so
that opening a database that is already current costs no SQLAlchemy or Alembic import
(those load only when a database is created or must be upgraded:
:mod:`reconciler.state.upgrade`).

The schema's history is the Alembic revisions in :mod:`reconciler.state.migrations`,
numbered ``0001``, ``0002``, ... in one line, and revision ``N`` is schema version
``N``; :data:`HEAD` is the last one (a test checks it against the revisions). Alembic
records the revision in :data:`REVISION_TABLE`. Each upgrade also adds its number to
:data:`LEGACY_TABLE`, the table plumb kept its version in before it used Alembic: so a
database this plumb upgraded still reads as "newer than this plumb knows" to an older
plumb, instead of being written with a schema it does not know. A database from before
Alembic has only that table; its number says which revision it is at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

HEAD = 6
REVISION_TABLE = "plumb_revision"
LEGACY_TABLE = "schema_version"

# Runs one statement without parameters and returns its rows.
Query = Callable[[str], Sequence[Sequence[Any]]]


def revision_id(version: int) -> str:
    """The Alembic revision of schema version ``version`` (``5`` -> ``"0005"``)."""
    return f"{version:04d}"


@dataclass(frozen=True, slots=True)
class Stored:
    """What a database says about its schema."""

    version: int  # 0: no plumb schema yet
    recorded: bool  # the Alembic revision table is there
    foreign: bool = False  # it holds tables, but none says it is a plumb state database

    @property
    def current(self) -> bool:
        """At this plumb's head, with its revision recorded: nothing to upgrade."""
        return self.recorded and self.version == HEAD and not self.foreign


def too_new(version: int) -> str:
    return (
        f"state database schema version {version} is newer than this plumb knows"
        f" ({HEAD}); upgrade plumb"
    )


def stored_version(query: Query, dialect: str) -> Stored:
    """Read the schema version of the database ``query`` runs on."""
    if dialect == "sqlite":
        tables = {str(name) for (name,) in query("SELECT name FROM sqlite_master")}
        has_revision, has_legacy = REVISION_TABLE in tables, LEGACY_TABLE in tables
        # Anything at all (tables, indexes) without a version table is not plumb's.
        other = bool(tables - {REVISION_TABLE, LEGACY_TABLE})
    else:
        ((has_revision, has_legacy, other),) = query(
            f"SELECT to_regclass('{REVISION_TABLE}') IS NOT NULL,"
            f" to_regclass('{LEGACY_TABLE}') IS NOT NULL,"
            # A shared server may hold other applications' tables; an audit table
            # without a version beside it is what must not be taken for empty.
            " to_regclass('audit') IS NOT NULL"
        )
    if has_revision:
        rows = query(f"SELECT version_num FROM {REVISION_TABLE}")
        revisions = [str(revision) for (revision,) in rows]
        if len(revisions) != 1 or not revisions[0].isdigit():
            return Stored(0, recorded=True, foreign=True)
        return Stored(int(revisions[0]), recorded=True)
    if has_legacy:
        ((version,),) = query(f"SELECT max(version) FROM {LEGACY_TABLE}")
        return Stored(int(version or 0), recorded=False)
    return Stored(0, recorded=False, foreign=bool(other))
