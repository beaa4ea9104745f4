"""Leads (quote requests and their outbox state); the dialog row records the offer shown and the quote form.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-20
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("dialog_sessions") as batch_op:
        batch_op.add_column(sa.Column("offer_shown", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("quote_requested", sa.Boolean(), nullable=True))

    op.create_table(
        "leads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("telegram_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("contact_kind", sa.String(length=16), nullable=False),
        sa.Column("contact", sa.String(length=256), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=64), nullable=True),
        sa.Column("dialog_id", sa.Integer(), nullable=True),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("dedup_key", sa.String(length=64), nullable=False),
        sa.Column("delivery_status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["telegram_id"],
            ["users.telegram_id"],
            name=op.f("fk_leads_telegram_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["dialog_id"],
            ["dialog_sessions.id"],
            name=op.f("fk_leads_dialog_id_dialog_sessions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_leads")),
    )
    op.create_index("ix_leads_delivery", "leads", ["delivery_status", "next_attempt_at"])
    op.create_index(op.f("ix_leads_created_at"), "leads", ["created_at"])
    op.create_index(op.f("ix_leads_dedup_key"), "leads", ["dedup_key"])
    op.create_index(op.f("ix_leads_source"), "leads", ["source"])
    op.create_index(op.f("ix_leads_telegram_id"), "leads", ["telegram_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_leads_telegram_id"), table_name="leads")
    op.drop_index(op.f("ix_leads_source"), table_name="leads")
    op.drop_index(op.f("ix_leads_dedup_key"), table_name="leads")
    op.drop_index(op.f("ix_leads_created_at"), table_name="leads")
    op.drop_index("ix_leads_delivery", table_name="leads")
    op.drop_table("leads")
    with op.batch_alter_table("dialog_sessions") as batch_op:
        batch_op.drop_column("quote_requested")
        batch_op.drop_column("offer_shown")
