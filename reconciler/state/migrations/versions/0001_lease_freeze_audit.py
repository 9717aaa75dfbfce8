"""Schema version 1: the single-writer lease, the freeze switch and the append-only,
hash-chained audit log (and ``schema_version``, the version table older plumbs read).

Revision ID: 0001
Revises: none
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reconciler.state.schema import UNRELEASED, Key, SortedText

revision = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None

SQLITE_GUARDS = (
    """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
       BEGIN SELECT RAISE(ABORT, 'audit log is append-only: UPDATE refused'); END""",
    """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
       BEGIN SELECT RAISE(ABORT, 'audit log is append-only: DELETE refused'); END""",
)
POSTGRESQL_GUARDS = (
    """CREATE FUNCTION plumb_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
           RAISE EXCEPTION 'audit log is append-only: % refused', TG_OP
               USING ERRCODE = 'integrity_constraint_violation';
       END
       $$""",
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
    " FOR EACH ROW EXECUTE FUNCTION plumb_audit_append_only()",
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
    " FOR EACH ROW EXECUTE FUNCTION plumb_audit_append_only()",
    # SQLite has no TRUNCATE; PostgreSQL's skips row triggers, so it has its own.
    "CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit"
    " FOR EACH STATEMENT EXECUTE FUNCTION plumb_audit_append_only()",
)


def upgrade() -> None:
    if not sa.inspect(op.get_bind()).has_table("schema_version"):
        op.create_table(
            "schema_version",
            sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("applied_at", sa.Text, nullable=False),
        )
    op.create_table(
        "lease",
        sa.Column("token", Key, sa.Identity(), primary_key=True),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("purpose", sa.Text, nullable=False),
        sa.Column("acquired_at", SortedText, nullable=False),
        sa.Column("heartbeat_at", SortedText, nullable=False),
        sa.Column("released_at", SortedText),
        sa.Column("ended_by", sa.Text),
        sa.Column("end_reason", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "lease_single_holder",
        "lease",
        [sa.text("(released_at IS NULL)")],
        unique=True,
        sqlite_where=UNRELEASED,
        postgresql_where=UNRELEASED,
    )
    op.create_table(
        "freeze",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("since", sa.Text, nullable=False),
        sa.CheckConstraint("id = 1"),
    )
    op.create_table(
        "audit",
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
    )
    op.create_index("audit_by_device", "audit", ["device", "seq"])
    op.create_index("audit_by_kind", "audit", ["kind", "seq"])
    guards = SQLITE_GUARDS if op.get_bind().dialect.name == "sqlite" else POSTGRESQL_GUARDS
    for statement in guards:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
