"""The inbox: processed_updates keeps a received update's raw payload until it is handled.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-10
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows written before this revision have no payload: they count as handled, as they were.
    with op.batch_alter_table("processed_updates") as batch_op:
        batch_op.add_column(sa.Column("payload", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("processed_updates") as batch_op:
        batch_op.drop_column("lease_until")
        batch_op.drop_column("payload")
