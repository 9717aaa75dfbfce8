"""Schema version 2: the rollout journal (rollouts, waves, targets with their
before-states, written once) and the rollback pins.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reconciler.state.schema import UNRELEASED, ZERO, Key, Real, SortedText

revision = "0002"
down_revision: str | None = "0001"
branch_labels = None
depends_on = None

SQLITE_GUARD = """CREATE TRIGGER before_state_is_written_once
    BEFORE UPDATE OF before ON rollout_target
    WHEN OLD.before IS NOT NULL AND NEW.before IS NOT OLD.before
    BEGIN SELECT RAISE(ABORT, 'a recorded before-state is never changed'); END"""
POSTGRESQL_GUARD = (
    """CREATE FUNCTION plumb_before_state_once() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
           IF OLD.before IS NOT NULL AND NEW.before IS DISTINCT FROM OLD.before THEN
               RAISE EXCEPTION 'a recorded before-state is never changed'
                   USING ERRCODE = 'integrity_constraint_violation';
           END IF;
           RETURN NEW;
       END
       $$""",
    "CREATE TRIGGER before_state_is_written_once BEFORE UPDATE OF before ON rollout_target"
    " FOR EACH ROW EXECUTE FUNCTION plumb_before_state_once()",
)


def upgrade() -> None:
    op.create_table(
        "rollout",
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
    op.create_table(
        "rollout_wave",
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
    op.create_table(
        "rollout_target",
        sa.Column("rollout", SortedText, sa.ForeignKey("rollout.id"), nullable=False),
        sa.Column("device", SortedText, nullable=False),
        sa.Column("wave", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("lifecycle", sa.Text, nullable=False),
        sa.Column("intended", sa.Text, nullable=False),
        sa.Column("before", sa.Text),
        sa.Column("before_at", sa.Text),
        sa.Column("writes", sa.Integer, nullable=False, server_default=ZERO),
        sa.Column("error", sa.Text),
        sa.PrimaryKeyConstraint("rollout", "device"),
    )
    op.create_index("rollout_target_by_wave", "rollout_target", ["rollout", "wave"])
    if op.get_bind().dialect.name == "sqlite":
        op.execute(SQLITE_GUARD)
    else:
        for statement in POSTGRESQL_GUARD:
            op.execute(statement)
    op.create_table(
        "pin",
        sa.Column("id", Key, sa.Identity(), primary_key=True),
        sa.Column("device", SortedText, nullable=False),
        sa.Column("path", SortedText, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("rollout", sa.Text),
        sa.Column("pinned_at", sa.Text, nullable=False),
        sa.Column("released_at", sa.Text),
        sa.Column("released_by", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "pin_one_active",
        "pin",
        ["device", "path"],
        unique=True,
        sqlite_where=UNRELEASED,
        postgresql_where=UNRELEASED,
    )


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
