"""Offer availability overrides (/offers off|on|request) and the lead kind (quote / reservation).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "offer_availability",
        sa.Column("offer_id", sa.String(length=64), nullable=False),
        sa.Column("availability", sa.String(length=16), nullable=False),
        sa.Column("changed_by", sa.BigInteger(), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("offer_id", name=op.f("pk_offer_availability")),
    )
    with op.batch_alter_table("leads") as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=16), server_default="quote", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("leads") as batch_op:
        batch_op.drop_column("kind")
    op.drop_table("offer_availability")
