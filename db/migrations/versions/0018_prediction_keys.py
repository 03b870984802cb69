"""Prediction keys: each logged prediction keeps its tokens' Delta margins, the prequential record
the calibration map is fitted on (NULL for predictions logged before).

Revision ID: 0018
Revises: 0022
Create Date: 2026-11-27 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0022"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("predictions") as batch:
        batch.add_column(sa.Column("keys", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("predictions") as batch:
        batch.drop_column("keys")
