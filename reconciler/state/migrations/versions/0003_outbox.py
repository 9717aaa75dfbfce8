"""Schema version 3: the notice outbox and the controller's cursors.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reconciler.state.schema import ZERO, Key, SortedText

revision = "0003"
down_revision: str | None = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outbox",
        sa.Column("id", Key, sa.Identity(), primary_key=True),
        sa.Column("created_at", SortedText, nullable=False),
        sa.Column("event", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("format", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=ZERO),
        sa.Column("next_attempt_at", SortedText, nullable=False),
        sa.Column("delivered_at", sa.Text),
        sa.Column("last_error", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index("outbox_due", "outbox", ["delivered_at", "next_attempt_at"])
    op.create_table(
        "controller_cursor",
        sa.Column("name", SortedText, primary_key=True),
        sa.Column("value", Key, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
