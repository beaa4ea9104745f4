"""CRM deliveries: each lead event to each CRM (webhook, Bitrix24, amoCRM), with its own state.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "crm_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("lead_id", sa.Integer(), nullable=False),
        sa.Column("destination", sa.String(length=16), nullable=False),
        sa.Column("event", sa.String(length=32), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("remote_id", sa.String(length=64), nullable=True),
        sa.Column("alerted_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["lead_id"], ["leads.id"], name=op.f("fk_crm_deliveries_lead_id_leads"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crm_deliveries")),
        sa.UniqueConstraint("lead_id", "destination", "event", name=op.f("uq_crm_deliveries_lead_id")),
    )
    op.create_index("ix_crm_deliveries_due", "crm_deliveries", ["status", "next_attempt_at"])
    op.create_index(op.f("ix_crm_deliveries_lead_id"), "crm_deliveries", ["lead_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_crm_deliveries_lead_id"), table_name="crm_deliveries")
    op.drop_index("ix_crm_deliveries_due", table_name="crm_deliveries")
    op.drop_table("crm_deliveries")
