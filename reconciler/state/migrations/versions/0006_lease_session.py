"""Schema version 6: the database session (or process) that holds a lease, so a lease
whose holder is gone can be taken over without a human.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("lease", sa.Column("session", sa.Text))


def downgrade() -> None:
    raise NotImplementedError("the state schema only moves forward")
