"""Schema version 5: approvals of rollouts for the controller.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reconciler.state.schema import Key, SortedText

revision = "0005"
down_revision: str | None = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rollout_approval",
        sa.Column("id", Key, sa.Identity(), primary_key=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("spec_path", sa.Text, nullable=False),
        sa.Column("spec_sha256", sa.Text, nullable=False),
        sa.Column("spec_commit", sa.Text),
        sa.Column("rollout", SortedText),
        sa.Column("wave", sa.Integer),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("approved_at", SortedText, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text),
        sa.Column("settled_at", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index("rollout_approval_by_state", "rollout_approval", ["state", "id"])


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
