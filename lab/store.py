"""The lab fleet's database (``<repo>/<state_dir>/lab.db``): simulated devices with a
running and a startup value per setting, injected faults, pending commit-confirm
reverts and write counters. The lab driver (:mod:`lab.driver`) is its
only user; this module knows SQLite, the driver knows the device contract.

Each device's running and its startup configuration are stored as the list of its
values (JSON, so ``int``/``str``/``bool``/``float``/``None`` come back exactly as
written) beside the id of its *shape*, the list of its setting paths in order, which
devices with the same paths share (table ``shapes``). Reading the whole fleet is one
pass over one row per device; each shape is parsed once and its paths are shared by
every configuration of that shape. A path missing from a configuration has no value
there, JSON ``null`` is the value ``None``. A database of
schema version 1 (one row per device and setting) is upgraded in place when opened.
Every write is one ``BEGIN IMMEDIATE`` transaction; each thread gets its own
connection (WAL mode, so readers never wait for the writer), which makes one store
safe to share with a thread pool.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from lab.fleet import Fault, FaultKind
from reconciler.settings import Scalar

SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS devices (
    name TEXT PRIMARY KEY, platform TEXT NOT NULL, role TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shapes (id INTEGER PRIMARY KEY, paths TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS configs (
    device TEXT PRIMARY KEY, running_shape INTEGER NOT NULL, running TEXT NOT NULL,
    startup_shape INTEGER NOT NULL, startup TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS faults (
    id INTEGER PRIMARY KEY AUTOINCREMENT, device TEXT NOT NULL, kind TEXT NOT NULL,
    path_glob TEXT, count INTEGER, probability REAL NOT NULL, seed INTEGER NOT NULL,
    latency_ms INTEGER NOT NULL, draws INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS faults_by_device ON faults (device);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    device TEXT PRIMARY KEY, revert TEXT NOT NULL, deadline REAL NOT NULL);
"""


DEVICE_WRITES = "writes/"  # counter-name prefix of the per-device write counts


class LabSchemaError(Exception):
    """The file is a lab database of another schema version."""


@dataclass(frozen=True)
class PendingRevert:
    """An unconfirmed commit: the values to restore (and paths to remove) at ``deadline``."""

    device: str
    values: dict[str, Scalar]
    absent: tuple[str, ...]
    deadline: float


_FAULT_COLUMNS = ("device", "kind", "path_glob", "count", "probability", "seed", "latency_ms")
_enc = json.dumps
Config = dict[str, Scalar]


class _Shapes:
    """The ``shapes`` table seen from one transaction or read: each shape parsed once,
    its paths interned (shared by every configuration that has them)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._paths: dict[int, list[str]] = {}
        self._ids: dict[str, int] = {}

    def decode(self, shape: int, values: str) -> Config:
        paths = self._paths.get(shape)
        if paths is None:
            row = self.conn.execute("SELECT paths FROM shapes WHERE id = ?", (shape,)).fetchone()
            paths = self._paths[shape] = list(map(sys.intern, json.loads(row[0])))
        return dict(zip(paths, json.loads(values), strict=True))

    def encode(self, config: Mapping[str, Scalar]) -> tuple[int, str]:
        """(shape id, values) of ``config``, its shape added when new."""
        paths = _enc(list(config))
        shape = self._ids.get(paths)
        if shape is None:
            row = self.conn.execute("SELECT id FROM shapes WHERE paths = ?", (paths,)).fetchone()
            if row is None:
                row = self.conn.execute(
                    "INSERT INTO shapes (paths) VALUES (?) RETURNING id", (paths,)
                ).fetchone()
            shape = self._ids[paths] = int(row[0])
        return shape, _enc(list(config.values()))

    def row(
        self, name: str, running: Mapping[str, Scalar], startup: Mapping[str, Scalar]
    ) -> tuple[str, int, str, int, str]:
        """The ``configs`` row of ``name``."""
        return (name, *self.encode(running), *self.encode(startup))


def _upgrade_from_1(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: the rows of table ``settings`` (one per device and path, each value
    JSON text, SQL NULL where a configuration has none) become one running and one
    startup configuration per device."""
    configs: dict[str, tuple[dict[str, Scalar], dict[str, Scalar]]] = {
        name: ({}, {}) for (name,) in conn.execute("SELECT name FROM devices")
    }
    rows = conn.execute("SELECT device, path, running, startup FROM settings")
    for device, path, running, startup in rows:
        pair = configs.setdefault(device, ({}, {}))
        for config, text in zip(pair, (running, startup), strict=True):
            if text is not None:
                config[path] = json.loads(text)
    shapes = _Shapes(conn)
    conn.executemany(
        "INSERT INTO configs VALUES (?, ?, ?, ?, ?)",
        (shapes.row(name, *pair) for name, pair in configs.items()),
    )
    conn.execute("DROP TABLE settings")
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))


class LabStore:
    """The lab database at ``path``; create it with :meth:`create`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        with self._write() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] == 1:
                _upgrade_from_1(conn)
            elif row[0] != SCHEMA_VERSION:
                raise LabSchemaError(
                    f"{self.path}: lab schema version {row[0]}, this plumb reads {SCHEMA_VERSION}"
                )
        if row is not None and row[0] == 1:
            self._conn().execute("VACUUM")  # give back the pages of the rows dropped

    # -- connections and transactions ------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise RuntimeError(f"lab store {self.path} is closed")
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._connections.append(conn)
        self._local.conn = conn
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    # -- devices and settings ---------------------------------------------------------

    def create(
        self, devices: Sequence[tuple[str, str, str]], states: Mapping[str, Mapping[str, Scalar]]
    ) -> None:
        """Replace any existing lab by ``devices`` (name, platform, role) in ``states``."""
        names = {name for name, _, _ in devices}
        unknown = sorted(set(states) - names)
        if unknown:
            raise ValueError(f"states for devices not in the lab: {', '.join(unknown[:5])}")
        with self._write() as conn:
            for table in ("configs", "shapes", "devices", "faults", "pending", "counters"):
                conn.execute(f"DELETE FROM {table}")
            conn.executemany("INSERT INTO devices VALUES (?, ?, ?)", devices)
            shapes = _Shapes(conn)
            rows = []
            for name, _, _ in devices:
                config = dict(states.get(name, {}))
                rows.append(shapes.row(name, config, config))
            conn.executemany("INSERT INTO configs VALUES (?, ?, ?, ?, ?)", rows)

    def exists(self) -> bool:
        """Whether a lab with at least one device has been created."""
        return self._conn().execute("SELECT 1 FROM devices LIMIT 1").fetchone() is not None

    def has_device(self, name: str) -> bool:
        row = self._conn().execute("SELECT 1 FROM devices WHERE name = ?", (name,)).fetchone()
        return row is not None

    def devices(self) -> list[tuple[str, str, str]]:
        """(name, platform, role) of every device, by name."""
        rows = self._conn().execute("SELECT name, platform, role FROM devices ORDER BY name")
        return [(str(n), str(p), str(r)) for n, p, r in rows]

    def device_names(self) -> list[str]:
        return [name for name, _, _ in self.devices()]

    def _read(self, name: str, column: str) -> dict[str, Scalar]:
        conn = self._conn()
        query = f"SELECT {column}_shape, {column} FROM configs WHERE device = ?"
        row = conn.execute(query, (name,)).fetchone()
        if row is None:
            raise KeyError(name)
        return _Shapes(conn).decode(*row)

    def read_running(self, name: str) -> dict[str, Scalar]:
        return self._read(name, "running")

    def read_startup(self, name: str) -> dict[str, Scalar]:
        return self._read(name, "startup")

    def read_all_running(
        self, names: Collection[str] | None = None
    ) -> dict[str, dict[str, Scalar]]:
        """Running state of every device (of those in ``names``), by name, in one pass;
        only the configurations asked for are parsed."""
        conn = self._conn()
        shapes = _Shapes(conn)
        rows = conn.execute("SELECT device, running_shape, running FROM configs ORDER BY device")
        return {
            name: shapes.decode(shape, values)
            for name, shape, values in rows
            if names is None or name in names
        }

    @staticmethod
    def _configs(
        conn: sqlite3.Connection, name: str
    ) -> tuple[dict[str, Scalar], dict[str, Scalar]]:
        """(running, startup) of ``name`` inside a write transaction; KeyError if unknown."""
        row = conn.execute(
            "SELECT running_shape, running, startup_shape, startup FROM configs WHERE device = ?",
            (name,),
        )
        found = row.fetchone()
        if found is None:
            raise KeyError(name)
        shapes = _Shapes(conn)
        return shapes.decode(found[0], found[1]), shapes.decode(found[2], found[3])

    @staticmethod
    def _store(
        conn: sqlite3.Connection,
        name: str,
        running: Mapping[str, Scalar],
        startup: Mapping[str, Scalar],
    ) -> None:
        shapes = _Shapes(conn)
        conn.execute(
            "UPDATE configs SET running_shape = ?, running = ?, startup_shape = ?, startup = ?"
            " WHERE device = ?",
            (*shapes.encode(running), *shapes.encode(startup), name),
        )

    def commit(
        self, name: str, values: Mapping[str, Scalar], *, save: bool, revert_at: float | None = None
    ) -> None:
        """Write ``values`` to running (and startup when ``save``) in one transaction.

        With ``revert_at`` the before-values are recorded, in the same transaction, as a
        pending revert due at that time (merged with an earlier unconfirmed one)."""
        with self._write() as conn:
            running, startup = self._configs(conn, name)
            if revert_at is not None:
                self._arm(conn, name, running, values, revert_at)
            running.update(values)
            if save:
                startup.update(values)
            self._store(conn, name, running, startup)
            self._bump(
                conn, {"writes": 1, "fields_written": len(values), f"{DEVICE_WRITES}{name}": 1}
            )

    def set_facts(self, facts: Mapping[str, Mapping[str, Scalar]]) -> None:
        """Set read-only facts (what devices report but nobody configures, such as LLDP
        neighbours) in running and startup, in one transaction. Not a configuration
        write: no counter moves."""
        with self._write() as conn:
            configs = {name: self._configs(conn, name) for name in facts}
            for name, (running, startup) in configs.items():
                running.update(facts[name])
                startup.update(facts[name])
                self._store(conn, name, running, startup)

    def save_startup(self, name: str) -> None:
        """startup := running (``write memory``)."""
        with self._write() as conn:
            self._configs(conn, name)
            conn.execute(
                "UPDATE configs SET startup_shape = running_shape, startup = running"
                " WHERE device = ?",
                (name,),
            )

    def reboot(self, name: str) -> None:
        """running := startup; unsaved changes and any pending revert are lost."""
        with self._write() as conn:
            self._configs(conn, name)
            conn.execute(
                "UPDATE configs SET running_shape = startup_shape, running = startup"
                " WHERE device = ?",
                (name,),
            )
            conn.execute("DELETE FROM pending WHERE device = ?", (name,))
            self._bump(conn, {"reboots": 1})

    # -- counters -------------------------------------------------------------------

    @staticmethod
    def _bump(conn: sqlite3.Connection, deltas: Mapping[str, int]) -> None:
        conn.executemany(
            "INSERT INTO counters VALUES (?, ?) ON CONFLICT (name) DO UPDATE"
            " SET value = value + excluded.value",
            deltas.items(),
        )

    def add_to_counter(self, name: str, delta: int = 1) -> None:
        with self._write() as conn:
            self._bump(conn, {name: delta})

    def counters(self) -> dict[str, int]:
        """writes, fields_written, reverts, reboots, ... (absent until first counted)."""
        return {str(n): int(v) for n, v in self._conn().execute("SELECT name, value FROM counters")}

    def write_count(self) -> int:
        return self.counters().get("writes", 0)

    def device_writes(self) -> dict[str, int]:
        """Commits per device (each write transaction counts once)."""
        n = len(DEVICE_WRITES)
        return {k[n:]: v for k, v in self.counters().items() if k.startswith(DEVICE_WRITES)}

    # -- faults ---------------------------------------------------------------------

    def add_fault(self, fault: Fault) -> Fault:
        """Store ``fault``; returns it with its id."""
        insert = f"INSERT INTO faults ({', '.join(_FAULT_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)"
        with self._write() as conn:
            cursor = conn.execute(insert, [getattr(fault, c) for c in _FAULT_COLUMNS])
        return replace(fault, id=cursor.lastrowid, draws=0)

    def faults_for(self, device: str | None) -> list[Fault]:
        """The faults of ``device`` (of every device for None), oldest first."""
        where = "" if device is None else "WHERE device = ?"
        rows = self._conn().execute(
            f"SELECT {', '.join(_FAULT_COLUMNS)}, id, draws FROM faults {where} ORDER BY id",
            () if device is None else (device,),
        )
        return [Fault(d, FaultKind(k), *rest) for d, k, *rest in rows]

    def consume_fault(self, fault_id: int) -> bool:
        """Use one firing of a counted fault; False if none is left (it is then gone)."""
        with self._write() as conn:
            used = conn.execute(
                "UPDATE faults SET count = count - 1 WHERE id = ? AND (count IS NULL OR count > 0)",
                (fault_id,),
            ).rowcount
            conn.execute("DELETE FROM faults WHERE count <= 0")
        return used == 1

    def next_draw(self, fault_id: int) -> int:
        """The index of the fault's next random draw (0, 1, 2, ...), persisted."""
        with self._write() as conn:
            row = conn.execute(
                "UPDATE faults SET draws = draws + 1 WHERE id = ? RETURNING draws", (fault_id,)
            ).fetchone()
        return int(row[0]) - 1 if row is not None else 0

    def clear_faults(self, device: str | None = None) -> None:
        with self._write() as conn:
            if device is None:
                conn.execute("DELETE FROM faults")
            else:
                conn.execute("DELETE FROM faults WHERE device = ?", (device,))

    # -- commit-confirm ---------------------------------------------------------------

    def _arm(
        self,
        conn: sqlite3.Connection,
        name: str,
        running: Mapping[str, Scalar],
        paths: Iterable[str],
        deadline: float,
    ) -> None:
        row = conn.execute("SELECT revert FROM pending WHERE device = ?", (name,)).fetchone()
        revert = json.loads(row[0]) if row else {"values": {}, "absent": []}
        known = set(revert["values"]) | set(revert["absent"])
        for path in paths:
            if path in known:
                continue  # an earlier unconfirmed commit already holds the oldest value
            if path in running:
                revert["values"][path] = running[path]
            else:
                revert["absent"].append(path)
        conn.execute(
            "INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", (name, _enc(revert), deadline)
        )

    def set_pending(self, name: str, revert_values: Mapping[str, Scalar], deadline: float) -> None:
        """Arm a revert of ``name`` to ``revert_values`` at ``deadline`` (replacing any)."""
        revert = _enc({"values": dict(revert_values), "absent": []})
        with self._write() as conn:
            self._configs(conn, name)
            conn.execute(
                "INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", (name, revert, deadline)
            )

    def clear_pending(self, name: str) -> bool:
        """Confirm: drop the pending revert; False if there was none."""
        with self._write() as conn:
            return conn.execute("DELETE FROM pending WHERE device = ?", (name,)).rowcount == 1

    def expired_pending(self, now: float) -> list[PendingRevert]:
        """Unconfirmed commits whose deadline is ``now`` or earlier, by device."""
        rows = self._conn().execute(
            "SELECT device, revert, deadline FROM pending WHERE deadline <= ? ORDER BY device",
            (now,),
        )
        return [
            PendingRevert(name, revert["values"], tuple(revert["absent"]), deadline)
            for name, revert, deadline in ((n, json.loads(t), d) for n, t, d in rows)
        ]

    def revert_expired(self, now: float) -> list[str]:
        """Apply every pending revert due by ``now`` (running and startup); returns devices."""
        if not self.expired_pending(now):
            return []  # the common case stays a read, never a write lock
        reverted = []
        with self._write() as conn:
            for pending in self.expired_pending(now):
                running, startup = self._configs(conn, pending.device)
                for config in (running, startup):
                    config.update(pending.values)
                    for path in pending.absent:
                        config.pop(path, None)
                self._store(conn, pending.device, running, startup)
                conn.execute("DELETE FROM pending WHERE device = ?", (pending.device,))
                reverted.append(pending.device)
            self._bump(conn, {"reverts": len(reverted)})
        return reverted
