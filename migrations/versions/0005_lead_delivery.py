"""Leads: the sales card's message (edited when a follow-up note joins it), the notes, the user's
confirmation (edited once delivered) and the admins' alert.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("leads") as batch_op:
        batch_op.add_column(sa.Column("card_message_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("notes", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("revision", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("confirm_message_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("user_told_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("alerted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("leads") as batch_op:
        for column in (
            "alerted_at",
            "user_told_at",
            "confirm_message_id",
            "revision",
            "notes",
            "card_message_id",
        ):
            batch_op.drop_column(column)
