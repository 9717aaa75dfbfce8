"""Schema version 4: what the controller already told about drift.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from reconciler.state.schema import SortedText

revision = "0004"
down_revision: str | None = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "drift_told",
        sa.Column("fingerprint", SortedText, primary_key=True),
        sa.Column("device", SortedText, nullable=False),
        sa.Column("subject", SortedText, nullable=False),
        sa.Column("told_at", SortedText, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
