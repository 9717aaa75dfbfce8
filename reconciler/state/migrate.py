"""Moving a fleet's state from one database to another (``plumb state migrate``):
typically from the embedded SQLite file to the PostgreSQL database the team will share.

Every row moves as it is stored (timestamps, canonical JSON, hashes), in one
transaction of the target, so the audit chain arrives with the same hashes; it is
verified on arrival, and the copy is rolled back unless the target's chain checks out
and ends at the source's head. The move is refused while someone holds the source's
lease (a writer could add rows behind it), when the source's chain is broken, or when
the target already holds a fleet's history. The move itself is audited in the target.
Which tables move, in which order, comes from the schema (:mod:`reconciler.state.schema`),
so a table added there moves too.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.state.audit import AuditKind
from reconciler.state.db import StateDB
from reconciler.state.errors import StateError
from reconciler.state.schema import STATE_TABLES

# Parents before children (the journal's foreign keys), each in its key order.
TABLES: tuple[tuple[str, str], ...] = tuple(
    (f'"{table.name}"', ", ".join(column.name for column in table.primary_key.columns))
    for table in STATE_TABLES
)
# Identity columns whose sequences must continue after the copied values.
SEQUENCES: tuple[tuple[str, str], ...] = tuple(
    (table.name, column.name)
    for table in STATE_TABLES
    for column in table.columns
    if column.identity is not None
)


class MigrationRefused(StateError):
    """The state cannot be moved as asked; nothing was written to the target."""


@dataclass(frozen=True)
class Migrated:
    rows: dict[str, int]
    audit_rows: int
    head_seq: int
    head_hash: str


NOT_MIGRATED = (
    "nothing was copied; check the URL, the server and its network, then run"
    " `plumb state migrate` again"
)
"""What a target that cannot be reached means for ``plumb state migrate``."""


def migrate_state(source: StateDB, target: StateDB, *, actor: str) -> Migrated:
    """Copy every row of ``source`` into the empty ``target`` and verify the chain there."""
    if source.schema_version() != target.schema_version():
        raise MigrationRefused(
            f"{source.location} is at schema version {source.schema_version()} and"
            f" {target.location} at {target.schema_version()}: open both with this plumb first"
        )
    held = source.lease.current()
    if held is not None:
        raise MigrationRefused(
            f"the lease of {source.location} is held by {held.describe(source.now())}: wait"
            " for it to end (or break it) before moving the state"
        )
    verdict = source.audit.verify()
    if not verdict.ok:
        first = verdict.problems[0] if verdict.problems else "append-only guard missing"
        raise MigrationRefused(
            f"the audit chain of {source.location} does not verify ({first}); it is not"
            " moved: run `plumb audit verify` and restore it first"
        )
    rows: dict[str, int] = {}
    with target.transaction() as out:
        for table, _ in TABLES:
            (count,) = out.execute(f"SELECT count(*) FROM {table}").fetchone()
            if int(count):
                raise MigrationRefused(
                    f"{target.location} already holds state ({table}: {count} rows); migrate"
                    " only into an empty database"
                )
        for table, order in TABLES:
            with source.reading() as conn:
                cursor = conn.execute(f"SELECT * FROM {table} ORDER BY {order}")
                names = [column[0] for column in cursor.description]
                values = cursor.fetchall()
            rows[table.strip('"')] = len(values)
            if values:
                marks = ", ".join("?" for _ in names)
                out.executemany(
                    f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})",
                    [tuple(row) for row in values],
                )
        if target.dialect == "postgresql":
            for table, column in SEQUENCES:
                out.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                    f" coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
                )
        arrived = target.audit.verify()
        if not arrived.ok or (arrived.head_seq, arrived.head_hash) != (
            verdict.head_seq,
            verdict.head_hash,
        ):
            raise MigrationRefused(
                f"the audit chain did not arrive intact in {target.location}"
                f" ({arrived.problems[:1] or arrived.missing_guards}); nothing was kept"
            )
        target.audit.append(
            AuditKind.decision,
            actor=actor,
            intent_commit=None,
            detail={
                "action": "state migrated",
                "from": source.location,
                "rows": rows,
                "head_seq": verdict.head_seq,
                "head_hash": verdict.head_hash,
            },
        )
    return Migrated(rows, verdict.rows, verdict.head_seq, verdict.head_hash)
