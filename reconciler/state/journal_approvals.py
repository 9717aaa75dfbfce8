"""Approvals in the rollout journal: what a person allowed the controller (``plumb
serve``) to do with a rollout, and what became of it.

* ``start``: start a rollout of a committed spec, bound to the spec's content hash
  and the commit that last changed it (a spec changed since needs a new approval);
* ``drive``: hand an existing rollout (held, or left by a process that stopped) to
  the controller, bound to the same hash and commit the rollout started from;
* ``promote``: let a wave that the spec's ``approval.before_waves`` holds back start.

An approval is ``pending`` until the controller acts on it: ``taken`` (with the
rollout it started or drove) or ``refused`` (with the reason). Statements run on both
backends; each method is one transaction, or runs inside the caller's (``conn``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconciler import failpoint
from reconciler.state.conn import Conn, StateStore


class ApprovalKind(StrEnum):
    start = "start"
    drive = "drive"
    promote = "promote"


class ApprovalState(StrEnum):
    pending = "pending"
    taken = "taken"
    refused = "refused"


@dataclass(frozen=True)
class ApprovalRow:
    id: int
    kind: ApprovalKind
    spec_path: str
    spec_sha256: str
    spec_commit: str | None
    rollout: str | None
    wave: int | None
    actor: str
    approved_at: str
    state: ApprovalState
    outcome: str | None
    settled_at: str | None


@dataclass(frozen=True)
class NewApproval:
    kind: ApprovalKind
    spec_path: str
    spec_sha256: str
    spec_commit: str | None
    actor: str
    rollout: str | None = None
    wave: int | None = None


_COLUMNS = (
    "id, kind, spec_path, spec_sha256, spec_commit, rollout, wave, actor, approved_at,"
    " state, outcome, settled_at"
)


def _row(row: tuple[Any, ...]) -> ApprovalRow:
    (id_, kind, path, sha, commit, rollout, wave, actor, at, state, outcome, settled) = row
    return ApprovalRow(
        int(id_),
        ApprovalKind(kind),
        path,
        sha,
        commit,
        rollout,
        None if wave is None else int(wave),
        actor,
        at,
        ApprovalState(state),
        outcome,
        settled,
    )


class Approvals:
    """The approvals of one state database; get it as ``db.approvals``."""

    def __init__(self, db: StateStore) -> None:
        self._db = db

    def add(self, conn: Conn, new: NewApproval) -> None:
        """Record a pending approval inside the caller's transaction."""
        conn.execute(
            "INSERT INTO rollout_approval (kind, spec_path, spec_sha256, spec_commit, rollout,"
            " wave, actor, approved_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                new.kind.value,
                new.spec_path,
                new.spec_sha256,
                new.spec_commit,
                new.rollout,
                new.wave,
                new.actor,
                self._db.now().isoformat(),
                ApprovalState.pending.value,
            ),
        )

    def settle(
        self,
        conn: Conn,
        id: int,
        state: ApprovalState,
        *,
        outcome: str | None = None,
        rollout: str | None = None,
    ) -> None:
        """Mark an approval taken or refused (with the rollout it led to) inside the
        caller's transaction; an approval already settled stays as it was."""
        conn.execute(
            "UPDATE rollout_approval SET state = ?, outcome = ?, settled_at = ?,"
            " rollout = coalesce(?, rollout) WHERE id = ? AND state = ?",
            (
                state.value,
                outcome,
                self._db.now().isoformat(),
                rollout,
                id,
                ApprovalState.pending.value,
            ),
        )

    def settle_now(self, id: int, state: ApprovalState, **fields: Any) -> None:
        with self._db.transaction() as conn:
            self.settle(conn, id, state, **fields)
        failpoint.hit("journal")

    def take_promotions(self, rollout: str, wave: int) -> None:
        """The promoted wave starts: its pending promotions are taken."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE rollout_approval SET state = ?, outcome = ?, settled_at = ?"
                " WHERE rollout = ? AND wave = ? AND kind = ? AND state = ?",
                (
                    ApprovalState.taken.value,
                    f"wave {wave} started",
                    self._db.now().isoformat(),
                    rollout,
                    wave,
                    ApprovalKind.promote.value,
                    ApprovalState.pending.value,
                ),
            )
        failpoint.hit("journal")

    def rows(
        self, *, state: ApprovalState | None = None, rollout: str | None = None
    ) -> list[ApprovalRow]:
        clauses, args = [], []
        if state is not None:
            clauses.append("state = ?")
            args.append(state.value)
        if rollout is not None:
            clauses.append("rollout = ?")
            args.append(rollout)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.reading() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM rollout_approval{where} ORDER BY id", tuple(args)
            ).fetchall()
        return [_row(r) for r in rows]

    def promoted(self, rollout: str) -> set[int]:
        """Waves of ``rollout`` a person promoted."""
        return {
            a.wave
            for a in self.rows(rollout=rollout)
            if a.kind is ApprovalKind.promote and a.wave is not None
        }

    def controlled(self) -> set[str]:
        """Rollouts the controller was handed (started or driven on approval)."""
        return {
            a.rollout
            for a in self.rows(state=ApprovalState.taken)
            if a.rollout is not None and a.kind is not ApprovalKind.promote
        }
