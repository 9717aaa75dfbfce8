"""Which state database a fleet uses, from ``plumb.yaml``'s ``state:`` (see
:class:`intent.models.StateConfig`), and opening it: the embedded SQLite file
(:mod:`reconciler.state.db`) or a PostgreSQL database shared by every clone
(:mod:`reconciler.state.pgdb`).

A PostgreSQL URL comes from the environment or from a file only its owner can read,
never from the repo: it may carry a password, and the repo is read by many.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from intent.models import PlumbConfig, StateConfig
from inventory.secretfile import SecretFileError, first_line
from reconciler.state.db import StateDB, open_state_db, upgrade_state_db, utc_now
from reconciler.state.errors import StateError

if TYPE_CHECKING:
    from reconciler.state.upgrade import Upgraded

STATE_FILE = "plumb.db"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


def sqlite_path(root: Path, config: PlumbConfig) -> Path:
    """The SQLite file: ``state.path`` (relative to the repo, or absolute), else
    ``<state_dir>/plumb.db``."""
    if config.state.path is not None:
        return root / Path(config.state.path).expanduser()
    return root / config.state_dir / STATE_FILE


def state_url(root: Path, state: StateConfig, environ: Mapping[str, str] | None = None) -> str:
    """The PostgreSQL URL: ``$<url_env>`` if set (``environ`` instead of the process's
    environment: tests), else the first line of ``url_file`` (which must be a regular
    file no one but its owner can read or write)."""
    from inventory.envsettings import named_secret

    from_env = named_secret(state.url_env, environ)
    if from_env is not None:
        return _checked_url(from_env.get_secret_value(), f"${state.url_env}")
    if state.url_file is None:
        raise StateError(
            f"plumb.yaml sets state.backend: postgresql but ${state.url_env} is not set and"
            " no state.url_file is named; export the database URL in that variable"
        )
    path = root / Path(state.url_file).expanduser()
    try:
        url = first_line(path, "state.url_file", "the state URL")
    except SecretFileError as exc:
        raise StateError(str(exc)) from exc
    return _checked_url(url, str(path))


def _checked_url(url: str, source: str) -> str:
    if not is_postgres_url(url):
        raise StateError(
            f"{source} does not hold a PostgreSQL URL (postgresql://user@host:port/database)"
        )
    return url


def fleet_state_location(
    root: Path, config: PlumbConfig, environ: Mapping[str, str] | None = None
) -> str:
    """Where this fleet's state is: a file path, or a PostgreSQL URL."""
    if config.state.backend == "postgresql":
        return state_url(root, config.state, environ)
    return str(sqlite_path(root, config))


def open_state(
    location: str, *, clock: Callable[[], datetime] = utc_now, then: str | None = None
) -> StateDB:
    """The state database at ``location``: a PostgreSQL URL, or a SQLite file path.
    ``then`` ends the message of a server that cannot be reached (what to do next)."""
    if is_postgres_url(location):
        from reconciler.state.pgdb import open_pg_state_db  # psycopg only when it is used

        if then is None:
            return open_pg_state_db(location, clock=clock)
        return open_pg_state_db(location, clock=clock, then=then)
    return open_state_db(Path(location), clock=clock)


def upgrade_state(location: str, *, clock: Callable[[], datetime] = utc_now) -> Upgraded:
    """Bring the state database at ``location`` to this plumb's schema version."""
    if is_postgres_url(location):
        from reconciler.state.pgdb import upgrade_pg_state_db

        return upgrade_pg_state_db(location, clock=clock)
    return upgrade_state_db(Path(location), clock=clock)


def open_fleet_state(
    root: Path, config: PlumbConfig, *, clock: Callable[[], datetime] = utc_now
) -> StateDB:
    """Open the state database ``plumb.yaml`` names for the fleet at ``root``, with its
    lease rules (``state.lease_takeover_minutes``)."""
    return with_state_rules(open_state(fleet_state_location(root, config), clock=clock), config)


def with_state_rules(db: StateDB, config: PlumbConfig) -> StateDB:
    """``db`` with the rules ``plumb.yaml`` declares for its state."""
    minutes = config.state.lease_takeover_minutes
    db.lease.takeover_after = None if minutes is None else timedelta(minutes=minutes)
    return db
