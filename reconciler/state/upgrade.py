"""Bringing a state database's schema to this plumb's head revision, on either backend:
the one module that runs Alembic, and (with :mod:`reconciler.state.schema` and the
revisions) the only one that imports SQLAlchemy. The backends call it when they create
a database or find one behind (:mod:`reconciler.state.version` tells them, without
importing either library), and ``plumb state upgrade`` calls it through them.

Everything happens in one transaction that first takes the database's single-writer
lock (SQLite's ``BEGIN IMMEDIATE``; PostgreSQL's advisory lock), so two processes
opening a database at once upgrade it once, and a failed step leaves it as it was.
Under the lock the version is read again and:

* a database holding tables but no version is not plumb's: refused
  (:class:`~reconciler.state.errors.StateDamaged`);
* one newer than this plumb is refused
  (:class:`~reconciler.state.errors.SchemaTooNew`);
* one from before Alembic (``schema_version`` only) is stamped with the revision of
  its version, then upgraded;
* the revisions it lacks run in order, each adding its number to ``schema_version``.

Database errors are mapped by the backend's own edge module (``dbfile``, ``pgconn``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext, MigrationInfo
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool, StaticPool

from reconciler.state import dbfile
from reconciler.state.errors import SchemaTooNew, StateError
from reconciler.state.migrations import SCRIPT_LOCATION
from reconciler.state.version import HEAD, Stored, revision_id, stored_version, too_new

NOT_UPGRADED = (
    "nothing was upgraded; check the database and its network, then run the command again"
)


@dataclass(frozen=True, slots=True)
class Upgraded:
    """What an upgrade found and left: schema versions (0: there was no schema)."""

    location: str  # for messages: a file, or a URL without its password
    before: int
    after: int
    stamped: bool  # a database from before Alembic, whose revision is now recorded

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.stamped


def upgrade_sqlite(
    conn: sqlite3.Connection,
    path: Path,
    now: datetime,
    *,
    refuse: Callable[[str], StateError],
    busy_seconds: float,
) -> Upgraded:
    """Upgrade the SQLite database ``path`` through ``conn`` (in autocommit mode, as the
    backend opens it; it stays open). ``refuse(why)`` is the error for a file that is
    not plumb's."""
    engine = sa.create_engine(
        "sqlite://", creator=lambda: conn, poolclass=StaticPool, pool_reset_on_return=None
    )

    @sa.event.listens_for(engine, "begin")
    def _take_the_write_lock(connection: sa.Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        with engine.begin() as connection:
            return _upgrade(connection, "sqlite", str(path), now, refuse)
    except DBAPIError as exc:
        if isinstance(exc.orig, sqlite3.Error):
            raise dbfile.translate(path, exc.orig, busy_seconds) from exc
        raise


def upgrade_postgresql(
    url: str,
    now: datetime,
    *,
    refuse: Callable[[str], StateError],
    busy_seconds: float,
) -> Upgraded:
    """Upgrade the PostgreSQL database at ``url``, on a connection of its own."""
    from reconciler.state import pgconn  # psycopg only where PostgreSQL is used

    engine = sa.create_engine(
        "postgresql+psycopg://",
        creator=lambda: pgconn.connect_raw(url, autocommit=False, then=NOT_UPGRADED),
        poolclass=NullPool,
    )
    try:
        with engine.begin() as connection:
            for statement in pgconn.writer_lock_statements(busy_seconds):
                connection.exec_driver_sql(statement)
            return _upgrade(connection, "postgresql", pgconn.redact(url), now, refuse)
    except DBAPIError as exc:
        error = pgconn.translate(url, exc.orig, busy_seconds) if exc.orig else None
        raise (error or StateError(str(exc))) from exc
    finally:
        engine.dispose()


def _upgrade(
    connection: sa.Connection,
    dialect: str,
    location: str,
    now: datetime,
    refuse: Callable[[str], StateError],
) -> Upgraded:
    """Inside the write transaction: check, stamp a database from before Alembic, run
    the missing revisions."""
    before = _read(connection, dialect)
    if before.foreign:
        raise refuse("not a plumb state database")
    if before.version > HEAD:
        raise SchemaTooNew(too_new(before.version))
    if before.current:
        return Upgraded(location, before.version, before.version, stamped=False)
    config = _alembic(connection, now)
    if not before.recorded and before.version:
        command.stamp(config, revision_id(before.version))
    command.upgrade(config, revision_id(HEAD))
    after = _read(connection, dialect)
    if not after.current:  # the revisions and HEAD disagree: a packaging error
        raise StateError(f"upgrade ended at schema version {after.version}, not {HEAD}")
    return Upgraded(location, before.version, after.version, stamped=not before.recorded)


def _read(connection: sa.Connection, dialect: str) -> Stored:
    return stored_version(lambda sql: connection.exec_driver_sql(sql).fetchall(), dialect)


def _alembic(connection: sa.Connection, now: datetime) -> Config:
    """Alembic configured in code, on ``connection`` (see ``migrations/env.py``)."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION).replace("%", "%%"))
    config.attributes["connection"] = connection
    config.attributes["on_version_apply"] = (_legacy_version(now),)
    return config


def _legacy_version(now: datetime) -> Callable[..., None]:
    """Record each revision applied in ``schema_version`` too (older plumbs read it)."""

    def record(*, ctx: MigrationContext, step: MigrationInfo, **_: Any) -> None:
        if not step.is_upgrade or step.is_stamp or step.up_revision_id is None:
            return
        assert ctx.connection is not None
        ctx.connection.execute(
            sa.text("INSERT INTO schema_version (version, applied_at) VALUES (:v, :at)"),
            {"v": int(step.up_revision_id), "at": now.isoformat()},
        )

    return record
