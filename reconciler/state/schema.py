"""The state database's tables and indexes at the head revision, once for both backends
(SQLAlchemy Core): the lease, the freeze switch, the audit chain, the rollout journal
with its pins and approvals, the notice outbox and what drift was told.

This module describes; it does not create. Databases are created and brought up to
date only by the Alembic revisions in :mod:`reconciler.state.migrations` (run by
:mod:`reconciler.state.upgrade`), whose result a test compares with :data:`metadata`
on both backends. The triggers, the one part the two dialects write differently, live
in the revision that adds them, both variants side by side (``audit_no_update``,
``audit_no_delete`` and, on PostgreSQL, ``audit_no_truncate`` on ``audit``;
``before_state_is_written_once`` on ``rollout_target``).

Where the dialects differ in a type, the column says so once:

* :data:`Key` is ``INTEGER`` on SQLite (so a single-column primary key is the rowid,
  and ``AUTOINCREMENT`` never reuses a value) and ``BIGINT`` on PostgreSQL (where an
  identity column never reuses one either);
* :data:`SortedText` is text that rows are ordered or compared by (ids, device names,
  timestamps): the ``C`` collation on PostgreSQL, so rows come back in the byte order
  SQLite uses;
* :data:`Real` is ``REAL`` on SQLite and ``DOUBLE PRECISION`` on PostgreSQL.

Statements on the hot path (the pre-write check, the per-target journal step, the
audit append) stay hand-written in the table modules: they run as they are on both.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

Key: sa.types.TypeEngine[int] = sa.Integer().with_variant(sa.BigInteger(), "postgresql")
SortedText: sa.types.TypeEngine[str] = sa.Text().with_variant(
    postgresql.TEXT(collation="C"), "postgresql"
)
Real: sa.types.TypeEngine[float] = sa.REAL().with_variant(
    postgresql.DOUBLE_PRECISION(), "postgresql"
)
ZERO = sa.text("0")
UNRELEASED = sa.text("released_at IS NULL")

metadata = sa.MetaData()


def _counter(name: str) -> sa.Column[int]:
    """A primary key the database numbers, never reusing a value."""
    return sa.Column(name, Key, sa.Identity(), primary_key=True)


schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.Text, nullable=False),
)

lease = sa.Table(
    "lease",
    metadata,
    _counter("token"),  # the fencing token
    sa.Column("holder", sa.Text, nullable=False),
    sa.Column("purpose", sa.Text, nullable=False),
    sa.Column("acquired_at", SortedText, nullable=False),
    sa.Column("heartbeat_at", SortedText, nullable=False),
    sa.Column("released_at", SortedText),
    sa.Column("ended_by", sa.Text),
    sa.Column("end_reason", sa.Text),  # NULL when released by its holder; why, when broken
    sa.Column("session", sa.Text),  # the holder's database session or process (lease.py)
    # At most one unreleased lease, enforced by the schema, not only by the code.
    sa.Index(
        "lease_single_holder",
        sa.text("(released_at IS NULL)"),
        unique=True,
        sqlite_where=UNRELEASED,
        postgresql_where=UNRELEASED,
    ),
    sqlite_autoincrement=True,
)

freeze = sa.Table(
    "freeze",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("since", sa.Text, nullable=False),
    sa.CheckConstraint("id = 1"),  # one row: frozen or not
)

audit = sa.Table(
    "audit",
    metadata,
    sa.Column("seq", Key, primary_key=True, autoincrement=False),
    sa.Column("at", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("intent_commit", sa.Text),
    sa.Column("device", SortedText),
    sa.Column("field", sa.Text),
    sa.Column("before", sa.Text, nullable=False),
    sa.Column("after", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.Text, nullable=False),
    sa.Column("hash", sa.Text, nullable=False),
    sa.Index("audit_by_device", "device", "seq"),
    sa.Index("audit_by_kind", "kind", "seq"),
)

rollout = sa.Table(
    "rollout",
    metadata,
    sa.Column("id", SortedText, primary_key=True),
    sa.Column("spec_name", sa.Text, nullable=False),
    sa.Column("spec_path", sa.Text, nullable=False),
    sa.Column("spec_sha256", sa.Text, nullable=False),
    sa.Column("spec_commit", sa.Text),
    sa.Column("intent_commit", sa.Text),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("created_at", SortedText, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Column("plan", sa.Text, nullable=False),
)

rollout_wave = sa.Table(
    "rollout_wave",
    metadata,
    sa.Column("rollout", SortedText, sa.ForeignKey("rollout.id"), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("canary", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("bake_minutes", Real, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default=ZERO),
    sa.Column("started_at", sa.Text),
    sa.Column("finished_at", sa.Text),
    sa.Column("drain_start", Real),
    sa.Column("returned_at", Real),
    sa.Column("bake_start", Real),
    sa.Column("bake_end", Real),
    sa.Column("stall_gpu_hours", Real, nullable=False, server_default=ZERO),
    sa.Column("decision", sa.Text),
    sa.Column("evidence", sa.Text),
    sa.PrimaryKeyConstraint("rollout", "number"),
)

rollout_target = sa.Table(
    "rollout_target",
    metadata,
    sa.Column("rollout", SortedText, sa.ForeignKey("rollout.id"), nullable=False),
    sa.Column("device", SortedText, nullable=False),
    sa.Column("wave", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("lifecycle", sa.Text, nullable=False),
    sa.Column("intended", sa.Text, nullable=False),
    sa.Column("before", sa.Text),  # written once (before_state_is_written_once)
    sa.Column("before_at", sa.Text),
    sa.Column("writes", sa.Integer, nullable=False, server_default=ZERO),
    sa.Column("error", sa.Text),
    sa.PrimaryKeyConstraint("rollout", "device"),
    sa.Index("rollout_target_by_wave", "rollout", "wave"),
)

pin = sa.Table(
    "pin",
    metadata,
    _counter("id"),
    sa.Column("device", SortedText, nullable=False),
    sa.Column("path", SortedText, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("rollout", sa.Text),
    sa.Column("pinned_at", sa.Text, nullable=False),
    sa.Column("released_at", sa.Text),
    sa.Column("released_by", sa.Text),
    # At most one active pin per device and path.
    sa.Index(
        "pin_one_active",
        "device",
        "path",
        unique=True,
        sqlite_where=UNRELEASED,
        postgresql_where=UNRELEASED,
    ),
    sqlite_autoincrement=True,
)

outbox = sa.Table(
    "outbox",
    metadata,
    _counter("id"),
    sa.Column("created_at", SortedText, nullable=False),
    sa.Column("event", sa.Text, nullable=False),
    sa.Column("target", sa.Text, nullable=False),  # the variable holding the webhook URL
    sa.Column("format", sa.Text, nullable=False),  # json | slack
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default=ZERO),
    sa.Column("next_attempt_at", SortedText, nullable=False),
    sa.Column("delivered_at", sa.Text),
    sa.Column("last_error", sa.Text),
    sa.Index("outbox_due", "delivered_at", "next_attempt_at"),
    sqlite_autoincrement=True,
)

controller_cursor = sa.Table(
    "controller_cursor",
    metadata,
    sa.Column("name", SortedText, primary_key=True),
    sa.Column("value", Key, nullable=False),
)

drift_told = sa.Table(
    "drift_told",
    metadata,
    sa.Column("fingerprint", SortedText, primary_key=True),  # sha256 of the drift or block
    sa.Column("device", SortedText, nullable=False),
    sa.Column("subject", SortedText, nullable=False),  # the field's path, or "blocked:<kind>"
    sa.Column("told_at", SortedText, nullable=False),
)

rollout_approval = sa.Table(
    "rollout_approval",
    metadata,
    _counter("id"),
    sa.Column("kind", sa.Text, nullable=False),  # start | drive | promote
    sa.Column("spec_path", sa.Text, nullable=False),
    sa.Column("spec_sha256", sa.Text, nullable=False),
    sa.Column("spec_commit", sa.Text),
    sa.Column("rollout", SortedText),  # NULL for a start until the rollout is begun
    sa.Column("wave", sa.Integer),  # promote only
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("approved_at", SortedText, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # pending | taken | refused
    sa.Column("outcome", sa.Text),
    sa.Column("settled_at", sa.Text),
    sa.Index("rollout_approval_by_state", "state", "id"),
    sqlite_autoincrement=True,
)

# What a state database holds, parents before children: the order ``plumb state
# migrate`` copies in (the version tables stay with each database).
STATE_TABLES = tuple(t for t in metadata.sorted_tables if t is not schema_version)
