"""Users: the currency prices are shown in (/currency) and who brought them (a `ref_<id>` link).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.add_column(sa.Column("currency", sa.String(length=3), nullable=True))
        batch_op.add_column(sa.Column("referred_by", sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_users_referred_by", ["referred_by"])


def downgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_index("ix_users_referred_by")
        batch_op.drop_column("referred_by")
        batch_op.drop_column("currency")
