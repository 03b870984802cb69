"""Overlap: the share of pool sentences labeled independently and by how many annotators.

Revision ID: 0022b
Revises: 0021
Create Date: 2026-11-27 04:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0022b"
down_revision: str | None = "0021"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("overlap_share", sa.Float(), server_default="0", nullable=False))
        batch.add_column(sa.Column("overlap_k", sa.Integer(), server_default="2", nullable=False))
        batch.create_check_constraint(
            op.f("ck_projects_overlap_share"), "overlap_share >= 0 AND overlap_share <= 1"
        )
        batch.create_check_constraint(op.f("ck_projects_overlap_k"), "overlap_k >= 2")


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_constraint(op.f("ck_projects_overlap_k"), type_="check")
        batch.drop_constraint(op.f("ck_projects_overlap_share"), type_="check")
        batch.drop_column("overlap_k")
        batch.drop_column("overlap_share")
