"""The context of one operation that touches devices or the state database: the
loaded fleet, who is acting, which intent commit, the state DB and the targets.

Both front doors open it: the CLI after loading the fleet its own way (problems
printed as ``file:line:col``), the controller on every turn. Nothing here prints or
exits; a fleet that does not load raises :class:`~inventory.problems.InputError`."""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci.gitrepo import repo_state
from intent.fleet import Fleet, load_fleet
from reconciler.state.db import StateDB
from reconciler.state.location import open_fleet_state
from reconciler.targets import Targets


def current_actor() -> str:
    """``$PLUMB_ACTOR``, else ``user@host``."""
    from inventory.envsettings import read_settings

    explicit = read_settings().actor
    if explicit:
        return explicit
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


@dataclass
class FleetContext:
    fleet: Fleet
    actor: str
    commit: str | None
    _db: StateDB | None = field(default=None, repr=False)

    @property
    def holder(self) -> str:
        """Lease holder: who, and which process, so a breaker can tell if it is gone."""
        return f"{self.actor} pid {os.getpid()}"

    @property
    def state_dir(self) -> Path:
        return self.fleet.root / self.fleet.config.state_dir

    @property
    def db(self) -> StateDB:
        if self._db is None:
            self._db = open_fleet_state(self.fleet.root, self.fleet.config)
        return self._db

    def targets(self) -> Targets:
        return Targets.for_fleet(self.fleet)

    def audit(self, kind: str, **fields: Any) -> None:
        self.db.audit.append(kind, actor=self.actor, intent_commit=self.commit, **fields)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class AuditToDb:
    """The reconcile loop's audit sink, writing to the state database."""

    def __init__(self, context: FleetContext) -> None:
        self.context = context

    def record(self, kind: str, **fields: Any) -> None:
        self.context.audit(kind, **fields)


class DbGuard:
    """Before every device write: the kill switch, then the lease's fencing token."""

    def __init__(self, db: StateDB, token: Any) -> None:
        self.db = db
        self.token = token

    def before_write(self, device: str) -> None:
        self.db.check_write(self.token)


@contextmanager
def open_context(fleet: Fleet, actor: str | None = None) -> Iterator[FleetContext]:
    """The context of ``fleet`` as acted on by ``actor`` (default: this user and host);
    the state database is opened on first use and closed on exit."""
    context = FleetContext(fleet, actor or current_actor(), repo_state(fleet.root).commit)
    try:
        yield context
    finally:
        context.close()


@contextmanager
def fleet_context(root: Path, actor: str | None = None) -> Iterator[FleetContext]:
    """Load the fleet repo at ``root`` (raising ``InputError`` when it does not load)
    and open its context."""
    with open_context(load_fleet(root), actor) as context:
        yield context
