"""Leads: who claimed a lead ("Беру" on its card) and when, the unclaimed lead's reminder and the
admins' escalation marks, and the two optional qualification answers (when, for how long).

Leads written before this revision had no claim button: they are marked reminded and escalated, so
the reminder task never pings the sales chat about them.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    "claimed_by", "claimed_by_name", "claimed_at", "reminded_at", "escalated_at", "need_when", "need_for"
)  # fmt: skip


def upgrade() -> None:
    with op.batch_alter_table("leads") as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("claimed_by_name", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("reminded_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("escalated_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("need_when", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("need_for", sa.String(length=16), nullable=True))
    leads = sa.table(
        "leads",
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("reminded_at", sa.DateTime(timezone=True)),
        sa.column("escalated_at", sa.DateTime(timezone=True)),
    )
    op.execute(leads.update().values(reminded_at=leads.c.created_at, escalated_at=leads.c.created_at))


def downgrade() -> None:
    with op.batch_alter_table("leads") as batch_op:
        for column in reversed(COLUMNS):
            batch_op.drop_column(column)
