"""The fleet's single-writer lease, with fencing tokens.

Whoever writes to devices (``plumb apply``, a rollout) first acquires the lease. A
second acquirer is refused at once with the holder's name and age; it never waits and
never takes over a lease because it looks old: a holder that is slow, paused or cut off
may still be writing. It takes over only a holder that is provably gone, its process or
database session ended and its heartbeat older than a declared bound
(:attr:`Lease.takeover_after`); otherwise only a human who has checked can say it is
gone (:meth:`Lease.break_lease`). Both are audited as a ``break``.

Every acquisition gets a new token, strictly greater than every earlier one (SQLite
``AUTOINCREMENT`` and a PostgreSQL identity sequence never reuse a value). The writer
calls :meth:`Lease.check` with its token right before each device write; once the
lease was released, broken or acquired by someone else, that raises
:class:`~reconciler.errors.FencedOut`, so a writer that lost its lease without noticing
stops at its next write.

While the lease is :meth:`Lease.held`, a daemon thread records a heartbeat (and the
holder's current session) every :data:`HEARTBEAT_SECONDS`, so ``plumb lease show``
tells a busy holder (a long bake, a slow rollback) from one that is gone. A stale
heartbeat alone never frees a lease.

The lease table keeps every acquisition (holder, purpose, times, who ended it and
why). A command's acquisition and release are also audited; the controller's
per-turn leases (``audited=False``) are not: a turn that writes nothing must leave no
audit record, and what a turn does write is audited as writes and results. Breaks are
always audited.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from reconciler.errors import FencedOut
from reconciler.state.audit import Audit, AuditKind
from reconciler.state.conn import Conn, StateStore
from reconciler.state.errors import StateError, StateFull, StateUnreachable

HEARTBEAT_SECONDS = 15.0

_CURRENT = (
    "SELECT token, holder, purpose, acquired_at, heartbeat_at, session FROM lease"
    " WHERE released_at IS NULL"
)


@dataclass(frozen=True, slots=True)
class LeaseToken:
    """Proof of one acquisition; ``value`` is the fencing token."""

    value: int
    holder: str
    purpose: str


@dataclass(frozen=True, slots=True)
class LeaseInfo:
    token: int
    holder: str
    purpose: str
    since: datetime
    heartbeat_at: datetime
    session: str | None = None  # the holder's process or database session (holder.py)

    def describe(self, now: datetime) -> str:
        return (
            f"{self.holder} ({self.purpose}, token {self.token}) since"
            f" {self.since.isoformat(timespec='seconds')} ({format_age(now - self.since)} ago,"
            f" last heartbeat {format_age(now - self.heartbeat_at)} ago)"
        )


BREAK_HINT = "if that holder is gone, run `plumb lease break --reason ...`"


class LeaseHeld(Exception):
    """Someone else holds the fleet's lease; the message says who, since when, and what
    can be done."""

    def __init__(
        self, holder: str, purpose: str, since: datetime, *, now: datetime, hint: str = BREAK_HINT
    ) -> None:
        super().__init__(
            f"fleet lease is held by {holder} for {purpose!r} since"
            f" {since.isoformat(timespec='seconds')} ({format_age(now - since)} ago); {hint}"
        )
        self.holder = holder
        self.purpose = purpose
        self.since = since


def format_age(age: timedelta) -> str:
    """``2d3h``, ``3h12m``, ``4m05s``, ``7s``: precise enough to tell stale from busy."""
    seconds = max(int(age.total_seconds()), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def _info(row: tuple[int, str, str, str, str, str | None]) -> LeaseInfo:
    token, holder, purpose, since, heartbeat, session = row
    return LeaseInfo(
        token,
        holder,
        purpose,
        datetime.fromisoformat(since),
        datetime.fromisoformat(heartbeat),
        session,
    )


class Lease:
    """The lease of one state database; get it as ``db.lease``.

    ``takeover_after`` (``state.lease_takeover_minutes`` in ``plumb.yaml``; None: never)
    lets :meth:`acquire` end a lease whose holder is provably gone, instead of refusing:
    its database session (PostgreSQL) or process (SQLite, on this host) no longer
    exists **and** its last heartbeat is older than the bound. The takeover is audited
    as a ``break`` (``automatic``), and the old holder's token, once broken, refuses any
    write it still tries (``FencedOut``). A holder that is merely slow, paused or cut
    off from the database (its session still open, or unknown to this process) is
    never taken over: that stays a human's explicit ``plumb lease break``."""

    def __init__(self, db: StateStore, audit: Audit) -> None:
        self._db = db
        self._audit = audit
        self.takeover_after: timedelta | None = None

    def acquire(self, holder: str, purpose: str, *, audited: bool = True) -> LeaseToken:
        """Take the lease, or raise :class:`LeaseHeld` at once if anyone holds it."""
        if not holder or not purpose:
            raise ValueError("a lease needs a holder and a purpose")
        with self._db.transaction() as conn:
            held = conn.execute(_CURRENT).fetchone()
            now = self._db.now()
            if held is not None:
                info = _info(held)
                gone, hint = self._gone(info, now)
                if gone is None:
                    raise LeaseHeld(info.holder, info.purpose, info.since, now=now, hint=hint)
                self._end(conn, info, holder, gone, now, automatic="true")
            (fence,) = conn.execute(
                "INSERT INTO lease (holder, purpose, acquired_at, heartbeat_at, session)"
                " VALUES (?, ?, ?, ?, ?) RETURNING token",
                (holder, purpose, now.isoformat(), now.isoformat(), self._db.session()),
            ).fetchone()
            token = LeaseToken(int(fence), holder, purpose)
            if audited:
                self._audit_event("acquire", holder, token.value, purpose=purpose)
        return token

    def _gone(self, info: LeaseInfo, now: datetime) -> tuple[str | None, str]:
        """(why ``info``'s holder may be taken over now, or None; what to tell a refused
        acquirer)."""
        bound = self.takeover_after
        if bound is None or info.session is None:
            return None, BREAK_HINT
        if self._db.session_alive(info.session) is not False:
            return None, BREAK_HINT  # alive, or this process cannot tell: a human decides
        silent = now - info.heartbeat_at
        if silent < bound:
            return None, (
                f"its holder's {_what(info.session)} is gone: the next writer takes the lease"
                f" over once its last heartbeat is {format_age(bound)} old (in"
                f" {format_age(bound - silent)}), or end it now with"
                " `plumb lease break --reason ...`"
            )
        why = (
            f"taken over: the holder's {_what(info.session)} is gone and its last heartbeat"
            f" is {format_age(silent)} old (state.lease_takeover_minutes:"
            f" {bound.total_seconds() / 60:g})"
        )
        return why, BREAK_HINT

    def check(self, token: LeaseToken) -> None:
        """Raise :class:`FencedOut` unless ``token`` is the current holder's."""
        with self._db.reading() as conn:
            row = conn.execute(
                "SELECT released_at, ended_by, end_reason FROM lease WHERE token = ?",
                (token.value,),
            ).fetchone()
            if row is not None and row[0] is None:
                return
            current = conn.execute(_CURRENT).fetchone()
        if row is None:
            why = "was never issued by this fleet's lease"
        elif row[2] is None:
            why = f"was released by {row[1]} at {row[0]}"
        else:
            why = f"was broken by {row[1]} at {row[0]}: {row[2]}"
        now_held = f"; now held by {_info(current).describe(self._db.now())}" if current else ""
        raise FencedOut(f"lease token {token.value} ({token.holder}) {why}{now_held}")

    def heartbeat(self, token: LeaseToken) -> None:
        """Record that the holder is alive (shown to others; never used to take a lease)."""
        with self._db.transaction() as conn:
            self.check(token)
            conn.execute(
                "UPDATE lease SET heartbeat_at = ?, session = ? WHERE token = ?",
                (self._db.now().isoformat(), self._db.session(), token.value),
            )

    def release(self, token: LeaseToken, *, audited: bool = True) -> bool:
        """Give the lease up; False if ``token`` no longer held it (released or broken)."""
        with self._db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE lease SET released_at = ?, ended_by = ?"
                " WHERE token = ? AND released_at IS NULL",
                (self._db.now().isoformat(), token.holder, token.value),
            )
            if cursor.rowcount == 0:
                return False
            if audited:
                self._audit_event("release", token.holder, token.value)
        return True

    def break_lease(self, actor: str, reason: str) -> LeaseInfo | None:
        """End whoever holds the lease (the only way to take it from a holder); audited.

        Returns the lease that was broken, or None if nobody held it."""
        if not actor or not reason.strip():
            raise ValueError("breaking the lease needs an actor and a reason")
        with self._db.transaction() as conn:
            held = conn.execute(_CURRENT).fetchone()
            if held is None:
                return None
            info = _info(held)
            self._end(conn, info, actor, reason, self._db.now())
        return info

    def _end(
        self, conn: Conn, info: LeaseInfo, actor: str, reason: str, now: datetime, **extra: str
    ) -> None:
        """Break ``info``'s lease (inside the caller's transaction), audited."""
        conn.execute(
            "UPDATE lease SET released_at = ?, ended_by = ?, end_reason = ? WHERE token = ?",
            (now.isoformat(), actor, reason, info.token),
        )
        self._audit_event(
            "break",
            actor,
            info.token,
            reason=reason,
            holder=info.holder,
            purpose=info.purpose,
            since=info.since.isoformat(),
            **extra,
        )

    def current(self) -> LeaseInfo | None:
        with self._db.reading() as conn:
            row = conn.execute(_CURRENT).fetchone()
        return _info(row) if row else None

    @contextmanager
    def held(self, holder: str, purpose: str, *, audited: bool = True) -> Iterator[LeaseToken]:
        """Hold the lease for the ``with`` block; released on the way out, error or not.

        When the release itself cannot be written (a full disk), the write-ahead log is
        folded into the database to free its space and the release is tried once more:
        a lease left held would stop every later writer until someone breaks it."""
        token = self.acquire(holder, purpose, audited=audited)
        beat = Heartbeat(self, token, HEARTBEAT_SECONDS)
        beat.start()
        try:
            yield token
        finally:
            beat.stop()
            try:
                self.release(token, audited=audited)
            except StateFull:
                self._db.make_room()
                self.release(token, audited=audited)

    def _audit_event(self, action: str, actor: str, fence: int, **detail: str) -> None:
        self._audit.append(
            AuditKind.lease,
            actor=actor,
            intent_commit=None,
            detail={"action": action, "fence": fence, **detail},
        )


def _what(session: str) -> str:
    return "database session" if session.startswith("pg ") else "process"


class Heartbeat:
    """A daemon thread that records the holder's heartbeat every ``every`` seconds until
    stopped, or until the lease is lost or the state cannot be written: the writer's own
    fencing check, not the heartbeat, is what stops its writes. A state database that
    cannot be reached skips a beat (the connection is reopened at a later one)."""

    def __init__(self, lease: Lease, token: LeaseToken, every: float) -> None:
        self._lease = lease
        self._token = token
        self._every = every
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"lease-heartbeat-{token.value}", daemon=True
        )
        self.beats = 0
        self.ended_by: str | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._every + 5)

    def _run(self) -> None:
        while not self._stopped.wait(self._every):
            try:
                self._lease.heartbeat(self._token)
            except StateUnreachable:
                continue
            except (FencedOut, StateError) as exc:
                self.ended_by = str(exc)
                return
            self.beats += 1
