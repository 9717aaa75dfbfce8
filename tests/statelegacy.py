"""The state schema as plumb created it before it used Alembic, statement for statement
(schema versions 1 to 5, from ``reconciler/state/db.py`` and the table modules for
SQLite and ``reconciler/state/pgschema.py`` for PostgreSQL, as of commit fce9c82), and
:func:`build_legacy`, which makes a database at any of those versions the way that
plumb did: the upgrade tests start from them.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import psycopg

LEGACY_HEAD = 5
"""The last schema version plumb created without Alembic."""

VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version"
    " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
)

SQLITE: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE lease (
            token INTEGER PRIMARY KEY AUTOINCREMENT,
            holder TEXT NOT NULL,
            purpose TEXT NOT NULL,
            acquired_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            released_at TEXT,
            ended_by TEXT,
            end_reason TEXT  -- NULL when released by its holder; the reason when broken
        )""",
        # At most one unreleased lease, enforced by the schema, not only by the code.
        "CREATE UNIQUE INDEX lease_single_holder ON lease((released_at IS NULL))"
        " WHERE released_at IS NULL",
        """CREATE TABLE freeze (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            reason TEXT NOT NULL,
            actor TEXT NOT NULL,
            since TEXT NOT NULL
        )""",
        """CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            intent_commit TEXT,
            device TEXT,
            field TEXT,
            before TEXT NOT NULL,
            after TEXT NOT NULL,
            detail TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )""",
        "CREATE INDEX audit_by_device ON audit(device, seq)",
        "CREATE INDEX audit_by_kind ON audit(kind, seq)",
        """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
           BEGIN SELECT RAISE(ABORT, 'audit log is append-only: UPDATE refused'); END""",
        """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
           BEGIN SELECT RAISE(ABORT, 'audit log is append-only: DELETE refused'); END""",
    ),
    (
        """CREATE TABLE rollout (
            id TEXT PRIMARY KEY,
            spec_name TEXT NOT NULL,
            spec_path TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL,
            spec_commit TEXT,
            intent_commit TEXT,
            status TEXT NOT NULL,
            reason TEXT,
            actor TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            plan TEXT NOT NULL
        )""",
        """CREATE TABLE rollout_wave (
            rollout TEXT NOT NULL REFERENCES rollout(id),
            number INTEGER NOT NULL,
            canary INTEGER NOT NULL,
            status TEXT NOT NULL,
            bake_minutes REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            started_at TEXT,
            finished_at TEXT,
            drain_start REAL,
            returned_at REAL,
            bake_start REAL,
            bake_end REAL,
            stall_gpu_hours REAL NOT NULL DEFAULT 0,
            decision TEXT,
            evidence TEXT,
            PRIMARY KEY (rollout, number)
        )""",
        """CREATE TABLE rollout_target (
            rollout TEXT NOT NULL REFERENCES rollout(id),
            device TEXT NOT NULL,
            wave INTEGER NOT NULL,
            status TEXT NOT NULL,
            lifecycle TEXT NOT NULL,
            intended TEXT NOT NULL,
            before TEXT,
            before_at TEXT,
            writes INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            PRIMARY KEY (rollout, device)
        )""",
        "CREATE INDEX rollout_target_by_wave ON rollout_target(rollout, wave)",
        """CREATE TRIGGER before_state_is_written_once BEFORE UPDATE OF before ON rollout_target
           WHEN OLD.before IS NOT NULL AND NEW.before IS NOT OLD.before
           BEGIN SELECT RAISE(ABORT, 'a recorded before-state is never changed'); END""",
        """CREATE TABLE pin (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            device TEXT NOT NULL,
            path TEXT NOT NULL,
            value TEXT NOT NULL,
            reason TEXT NOT NULL,
            rollout TEXT,
            pinned_at TEXT NOT NULL,
            released_at TEXT,
            released_by TEXT
        )""",
        "CREATE UNIQUE INDEX pin_one_active ON pin(device, path) WHERE released_at IS NULL",
    ),
    (
        """CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            event TEXT NOT NULL,
            target TEXT NOT NULL,  -- the environment variable holding the webhook URL
            format TEXT NOT NULL,  -- json | slack
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at TEXT NOT NULL,
            delivered_at TEXT,
            last_error TEXT
        )""",
        "CREATE INDEX outbox_due ON outbox(delivered_at, next_attempt_at)",
        """CREATE TABLE controller_cursor (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        )""",
    ),
    (
        """CREATE TABLE drift_told (
            fingerprint TEXT PRIMARY KEY,  -- sha256 of the told drift or block
            device TEXT NOT NULL,
            subject TEXT NOT NULL,  -- the field's path, or "blocked:<kind>"
            told_at TEXT NOT NULL
        )""",
    ),
    (
        """CREATE TABLE rollout_approval (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,           -- start | drive | promote
            spec_path TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL,
            spec_commit TEXT,
            rollout TEXT,                 -- NULL for a start until the rollout is begun
            wave INTEGER,                 -- promote only
            actor TEXT NOT NULL,
            approved_at TEXT NOT NULL,
            state TEXT NOT NULL,          -- pending | taken | refused
            outcome TEXT,
            settled_at TEXT
        )""",
        "CREATE INDEX rollout_approval_by_state ON rollout_approval(state, id)",
    ),
)

_APPEND_ONLY = """
CREATE FUNCTION plumb_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit log is append-only: % refused', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END
$$"""

_BEFORE_ONCE = """
CREATE FUNCTION plumb_before_state_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.before IS NOT NULL AND NEW.before IS DISTINCT FROM OLD.before THEN
        RAISE EXCEPTION 'a recorded before-state is never changed'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END
$$"""

POSTGRESQL: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE lease (
            token BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            holder TEXT NOT NULL,
            purpose TEXT NOT NULL,
            acquired_at TEXT COLLATE "C" NOT NULL,
            heartbeat_at TEXT COLLATE "C" NOT NULL,
            released_at TEXT COLLATE "C",
            ended_by TEXT,
            end_reason TEXT
        )""",
        "CREATE UNIQUE INDEX lease_single_holder ON lease((released_at IS NULL))"
        " WHERE released_at IS NULL",
        """CREATE TABLE "freeze" (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            reason TEXT NOT NULL,
            actor TEXT NOT NULL,
            since TEXT NOT NULL
        )""",
        """CREATE TABLE audit (
            seq BIGINT PRIMARY KEY,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            intent_commit TEXT,
            device TEXT COLLATE "C",
            field TEXT,
            before TEXT NOT NULL,
            after TEXT NOT NULL,
            detail TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )""",
        "CREATE INDEX audit_by_device ON audit(device, seq)",
        "CREATE INDEX audit_by_kind ON audit(kind, seq)",
        _APPEND_ONLY,
        "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
        " FOR EACH ROW EXECUTE FUNCTION plumb_audit_append_only()",
        "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
        " FOR EACH ROW EXECUTE FUNCTION plumb_audit_append_only()",
        "CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit"
        " FOR EACH STATEMENT EXECUTE FUNCTION plumb_audit_append_only()",
    ),
    (
        """CREATE TABLE rollout (
            id TEXT COLLATE "C" PRIMARY KEY,
            spec_name TEXT NOT NULL,
            spec_path TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL,
            spec_commit TEXT,
            intent_commit TEXT,
            status TEXT NOT NULL,
            reason TEXT,
            actor TEXT NOT NULL,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT NOT NULL,
            plan TEXT NOT NULL
        )""",
        """CREATE TABLE rollout_wave (
            rollout TEXT COLLATE "C" NOT NULL REFERENCES rollout(id),
            number INTEGER NOT NULL,
            canary INTEGER NOT NULL,
            status TEXT NOT NULL,
            bake_minutes DOUBLE PRECISION NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            started_at TEXT,
            finished_at TEXT,
            drain_start DOUBLE PRECISION,
            returned_at DOUBLE PRECISION,
            bake_start DOUBLE PRECISION,
            bake_end DOUBLE PRECISION,
            stall_gpu_hours DOUBLE PRECISION NOT NULL DEFAULT 0,
            decision TEXT,
            evidence TEXT,
            PRIMARY KEY (rollout, number)
        )""",
        """CREATE TABLE rollout_target (
            rollout TEXT COLLATE "C" NOT NULL REFERENCES rollout(id),
            device TEXT COLLATE "C" NOT NULL,
            wave INTEGER NOT NULL,
            status TEXT NOT NULL,
            lifecycle TEXT NOT NULL,
            intended TEXT NOT NULL,
            before TEXT,
            before_at TEXT,
            writes INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            PRIMARY KEY (rollout, device)
        )""",
        "CREATE INDEX rollout_target_by_wave ON rollout_target(rollout, wave)",
        _BEFORE_ONCE,
        "CREATE TRIGGER before_state_is_written_once BEFORE UPDATE OF before ON rollout_target"
        " FOR EACH ROW EXECUTE FUNCTION plumb_before_state_once()",
        """CREATE TABLE pin (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            device TEXT COLLATE "C" NOT NULL,
            path TEXT COLLATE "C" NOT NULL,
            value TEXT NOT NULL,
            reason TEXT NOT NULL,
            rollout TEXT,
            pinned_at TEXT NOT NULL,
            released_at TEXT,
            released_by TEXT
        )""",
        "CREATE UNIQUE INDEX pin_one_active ON pin(device, path) WHERE released_at IS NULL",
    ),
    (
        """CREATE TABLE outbox (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            created_at TEXT COLLATE "C" NOT NULL,
            event TEXT NOT NULL,
            target TEXT NOT NULL,
            format TEXT NOT NULL,
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at TEXT COLLATE "C" NOT NULL,
            delivered_at TEXT,
            last_error TEXT
        )""",
        "CREATE INDEX outbox_due ON outbox(delivered_at, next_attempt_at)",
        """CREATE TABLE controller_cursor (
            name TEXT COLLATE "C" PRIMARY KEY,
            value BIGINT NOT NULL
        )""",
    ),
    (
        """CREATE TABLE drift_told (
            fingerprint TEXT COLLATE "C" PRIMARY KEY,
            device TEXT COLLATE "C" NOT NULL,
            subject TEXT COLLATE "C" NOT NULL,
            told_at TEXT COLLATE "C" NOT NULL
        )""",
    ),
    (
        """CREATE TABLE rollout_approval (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            kind TEXT NOT NULL,
            spec_path TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL,
            spec_commit TEXT,
            rollout TEXT COLLATE "C",
            wave INTEGER,
            actor TEXT NOT NULL,
            approved_at TEXT COLLATE "C" NOT NULL,
            state TEXT NOT NULL,
            outcome TEXT,
            settled_at TEXT
        )""",
        "CREATE INDEX rollout_approval_by_state ON rollout_approval(state, id)",
    ),
)


def build_legacy(location: str, version: int) -> None:
    """Create the schema of ``version`` at ``location`` (a SQLite file path, or an empty
    PostgreSQL database's URL) as the plumb of that version did, in one transaction."""
    statements = SQLITE if not location.startswith("postgresql://") else POSTGRESQL
    at = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    script = [VERSION_TABLE]
    for number, migration in enumerate(statements[:version], start=1):
        script += [*migration, f"INSERT INTO schema_version VALUES ({number}, '{at}')"]
    if location.startswith("postgresql://"):
        with psycopg.connect(location) as pg, pg.transaction():
            for statement in script:
                pg.execute(statement)  # type: ignore[arg-type]  # DDL text, no parameters
        return
    conn = sqlite3.connect(Path(location), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in script:
            conn.execute(statement)
        conn.execute("COMMIT")
    finally:
        conn.close()
