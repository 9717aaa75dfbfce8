"""What the controller has already told people about drift, in the fleet's state
database, so a restart (or a new leader) does not tell it again.

Each row is the fingerprint of one told thing: a drifted field (device, path, observed
and intended value) or a device whose correction is blocked (device and the kind of
block). A pass replaces the set with what it found, in the transaction that queues its
notice: a drift that went away and comes back is told again, one that is still there
is not, and a drift whose values changed is a new fingerprint. Statements run on both
backends.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from reconciler.state.conn import Conn, StateStore


def fingerprint(device: str, subject: str, *values: object) -> str:
    """A stable key of one told thing, whatever the values' types."""
    text = json.dumps([device, subject, *(repr(v) for v in values)], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


Found = Mapping[str, tuple[str, str]]  # fingerprint -> (device, subject)


class DriftTold:
    def __init__(self, db: StateStore) -> None:
        self._db = db

    def told(self, conn: Conn) -> frozenset[str]:
        return frozenset(r[0] for r in conn.execute("SELECT fingerprint FROM drift_told"))

    def replace(self, conn: Conn, found: Found) -> frozenset[str]:
        """Make the told set ``found`` inside the caller's transaction; the fingerprints
        that were not told before (what a notice should tell now)."""
        before = self.told(conn)
        gone = before - found.keys()
        new = frozenset(found.keys() - before)
        if gone:
            conn.executemany("DELETE FROM drift_told WHERE fingerprint = ?", [(f,) for f in gone])
        if new:
            now = self._db.now().isoformat()
            conn.executemany(
                "INSERT INTO drift_told (fingerprint, device, subject, told_at)"
                " VALUES (?, ?, ?, ?)",
                [(f, *found[f], now) for f in sorted(new)],
            )
        return new
