"""Leader election among ``plumb serve`` replicas of one fleet, on the PostgreSQL state:
a session-level advisory lock (``pg_try_advisory_lock``) on a connection of its own.

The server releases a session lock when the session ends: a leader that is killed, or
whose connection drops, loses it within the server's keepalive and connection-check
intervals, and a standby's next try wins. Leadership only decides who *tries* to
write: every device write still goes through the fleet lease and its fencing token
(:mod:`reconciler.state.lease`). A new leader ends a lease an earlier controller left
behind (audited), so a former leader that is still running but has lost its session
finds its token broken at its next write check and stops (``FencedOut``).
"""

from __future__ import annotations

import contextlib
import hashlib

from inventory.extras import optional_imports

with optional_imports():
    import psycopg

from reconciler.state.errors import StateUnreachable
from reconciler.state.pgconn import PgConn, connect, unreachable


def leader_key(fleet: str) -> int:
    """The advisory lock key of a fleet's controller: a signed 64-bit hash of its name."""
    digest = hashlib.sha256(f"plumb serve {fleet}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class LeaderLock:
    """This process's claim to lead ``fleet``'s controller."""

    def __init__(self, url: str, fleet: str) -> None:
        self._url = url
        self.key = leader_key(fleet)
        self._conn: PgConn | None = None
        self._held = False

    def try_acquire(self) -> bool:
        """Take the lock if it is free (never waits): True while this process holds it,
        False while another session does. A server that cannot be asked raises
        :class:`StateUnreachable` (who leads is then unknown, which is not "another
        replica leads"); the next call opens a new connection."""
        if self._held and self.still_held():
            return True
        try:
            if self._conn is None:
                self._conn = connect(self._url)
            (won,) = self._conn.execute("SELECT pg_try_advisory_lock(?)", (self.key,)).fetchone()
        except StateUnreachable:
            self._drop()
            raise
        except psycopg.Error as exc:
            self._drop()
            raise unreachable(self._url, exc, "who leads is unknown") from exc
        self._held = bool(won)
        return self._held

    def still_held(self) -> bool:
        """Is the session that took the lock alive and still holding it?"""
        if self._conn is None or not self._held:
            return False
        try:
            (held,) = self._conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND pid = pg_backend_pid() AND objsubid = 1"
                " AND objid::text::bigint = (?::bigint & 4294967295)"
                " AND classid::text::bigint = ((?::bigint >> 32) & 4294967295)",
                (self.key, self.key),
            ).fetchone()
        except psycopg.Error:
            self._drop()
            return False
        if not held:
            self._held = False
        return bool(held)

    def release(self) -> None:
        if self._conn is not None and self._held:
            with contextlib.suppress(psycopg.Error):
                self._conn.execute("SELECT pg_advisory_unlock(?)", (self.key,))
        self._drop()

    def _drop(self) -> None:
        self._held = False
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None
