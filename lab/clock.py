"""The lab fleet's virtual clock and attached defects, persisted in the lab database
(``<repo>/<state_dir>/lab.db``, tables ``lab_clock`` and ``lab_defects``, beside the
:class:`~lab.store.LabStore` tables and never touching them).

Virtual time moves only by :meth:`LabClock.advance`, so a day-long bake runs in
seconds and a rollout can be resumed from another process at the same instant. The
telemetry itself is computed, not stored (:mod:`lab.metrics`): only the
clock, the telemetry seed and the defects live here.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from lab.metrics import Defect, parse_match

BUSY_TIMEOUT_MS = 10_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lab_clock (id INTEGER PRIMARY KEY CHECK (id = 0),"
    " minutes REAL NOT NULL, seed INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS lab_defects (id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " match TEXT NOT NULL, effects TEXT NOT NULL, note TEXT NOT NULL)",
    "INSERT OR IGNORE INTO lab_clock VALUES (0, 0.0, 0)",
)


class LabClock:
    """The virtual clock (a :class:`~lab.metrics.VirtualClock`) at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._db.execute("PRAGMA journal_mode = WAL")
        with self._write() as db:
            for statement in _SCHEMA:
                db.execute(statement)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _row(self) -> tuple[float, int]:
        with self._lock:
            minutes, seed = self._db.execute("SELECT minutes, seed FROM lab_clock").fetchone()
        return float(minutes), int(seed)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LabClock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- time ------------------------------------------------------------------------

    def now(self) -> float:
        """Minutes of virtual time since the lab epoch."""
        return self._row()[0]

    @property
    def seed(self) -> int:
        """Seeds every telemetry series of the lab."""
        return self._row()[1]

    def advance(self, minutes: float) -> float:
        """Move virtual time forward by ``minutes``; returns the new time."""
        if not minutes >= 0:
            raise ValueError(f"virtual time only moves forward, not by {minutes} minutes")
        with self._write() as db:
            row = db.execute(
                "UPDATE lab_clock SET minutes = minutes + ? RETURNING minutes", (minutes,)
            ).fetchone()
        return float(row[0])

    def reset(self, *, minutes: float = 0.0, seed: int | None = None) -> None:
        """Set the clock (and optionally the telemetry seed); defects stay attached."""
        with self._write() as db:
            db.execute("UPDATE lab_clock SET minutes = ?", (minutes,))
            if seed is not None:
                db.execute("UPDATE lab_clock SET seed = ?", (seed,))

    # -- defects -----------------------------------------------------------------------

    def attach(self, defect: Defect) -> Defect:
        """Store ``defect``; returns it with its id."""
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO lab_defects (match, effects, note) VALUES (?, ?, ?)",
                (json.dumps(dict(defect.match)), json.dumps(defect.effects()), defect.note),
            )
        return replace(defect, id=cursor.lastrowid)

    def defects(self) -> list[Defect]:
        """Attached defects, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, match, effects, note FROM lab_defects ORDER BY id"
            ).fetchall()
        return [
            Defect.with_effects(json.loads(match), json.loads(effects), note=note, id=int(id_))
            for id_, match, effects, note in rows
        ]

    def detach(self, defect_id: int) -> bool:
        """Remove one defect; False if there was none with that id."""
        with self._write() as db:
            return db.execute("DELETE FROM lab_defects WHERE id = ?", (defect_id,)).rowcount == 1

    def clear_defects(self) -> int:
        with self._write() as db:
            return db.execute("DELETE FROM lab_defects").rowcount


# -- one call per CLI command -----------------------------------------------------------


def clock_now(path: Path) -> float:
    with LabClock(path) as clock:
        return clock.now()


def advance_clock(path: Path, minutes: float) -> float:
    with LabClock(path) as clock:
        return clock.advance(minutes)


def attach_defect(path: Path, match: str, effects: Mapping[str, float], note: str = "") -> Defect:
    """Attach a defect given as ``"attr=value,..."`` and effect fields (see ``Defect``)."""
    with LabClock(path) as clock:
        return clock.attach(Defect.with_effects(parse_match(match), effects, note=note))


def list_defects(path: Path) -> list[Defect]:
    with LabClock(path) as clock:
        return clock.defects()


def detach_defect(path: Path, defect_id: int) -> bool:
    with LabClock(path) as clock:
        return clock.detach(defect_id)
