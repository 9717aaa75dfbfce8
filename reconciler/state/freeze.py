"""The fleet's kill switch: while frozen, no device write may start.

:meth:`Freeze.check` is called right before every device write (one primary-key
SELECT on a one-row table), so a freeze stops a running apply or rollout at its next
write, whoever holds the lease; writes already sent are not undone. Freezing and
unfreezing are audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reconciler.errors import Frozen
from reconciler.state.audit import Audit, AuditKind
from reconciler.state.conn import StateStore

_STATUS = 'SELECT reason, actor, since FROM "freeze" WHERE id = 1'


@dataclass(frozen=True, slots=True)
class FreezeStatus:
    reason: str
    actor: str
    since: datetime

    def describe(self) -> str:
        return (
            f"fleet frozen by {self.actor} since {self.since.isoformat(timespec='seconds')}:"
            f" {self.reason}"
        )


def _status(row: tuple[str, str, str] | None) -> FreezeStatus | None:
    if row is None:
        return None
    reason, actor, since = row
    return FreezeStatus(reason, actor, datetime.fromisoformat(since))


class Freeze:
    """The freeze switch of one state database; get it as ``db.freeze``."""

    def __init__(self, db: StateStore, audit: Audit) -> None:
        self._db = db
        self._audit = audit

    def freeze(self, actor: str, reason: str) -> FreezeStatus:
        """Stop every write from starting. Freezing a frozen fleet records the new reason
        and actor but keeps the original ``since``."""
        if not actor or not reason.strip():
            raise ValueError("a freeze needs an actor and a reason")
        with self._db.transaction() as conn:
            conn.execute(
                'INSERT INTO "freeze" (id, reason, actor, since) VALUES (1, ?, ?, ?)'
                " ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, actor = excluded.actor",
                (reason, actor, self._db.now().isoformat()),
            )
            status = _status(conn.execute(_STATUS).fetchone())
            self._audit.append(
                AuditKind.freeze,
                actor=actor,
                intent_commit=None,
                detail={"action": "freeze", "reason": reason},
            )
        assert status is not None
        return status

    def unfreeze(self, actor: str) -> FreezeStatus | None:
        """Let writes start again; returns the freeze that was lifted (None if not frozen)."""
        if not actor:
            raise ValueError("unfreezing needs an actor")
        with self._db.transaction() as conn:
            lifted = _status(conn.execute(_STATUS).fetchone())
            if lifted is None:
                return None
            conn.execute('DELETE FROM "freeze" WHERE id = 1')
            self._audit.append(
                AuditKind.freeze,
                actor=actor,
                intent_commit=None,
                detail={
                    "action": "unfreeze",
                    "lifted_reason": lifted.reason,
                    "frozen_by": lifted.actor,
                    "frozen_since": lifted.since.isoformat(),
                },
            )
        return lifted

    def status(self) -> FreezeStatus | None:
        with self._db.reading() as conn:
            return _status(conn.execute(_STATUS).fetchone())

    def check(self) -> None:
        """Raise :class:`~reconciler.errors.Frozen` (with the reason) if the fleet is frozen."""
        status = self.status()
        if status is not None:
            raise Frozen(status.describe())
