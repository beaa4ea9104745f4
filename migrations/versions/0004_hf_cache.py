"""The Hugging Face look-up cache: models read from the Hub, so a second user naming one is answered at once.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "hf_models",
        sa.Column("repo_key", sa.String(length=256), nullable=False),
        sa.Column("repo_id", sa.String(length=256), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("config", sa.JSON(), nullable=True),
        sa.Column("parameter_counts", sa.JSON(), nullable=True),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("repo_key", name=op.f("pk_hf_models")),
    )


def downgrade() -> None:
    op.drop_table("hf_models")
