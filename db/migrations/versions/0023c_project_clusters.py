"""Word clusters learned from a project's pool text once (issue 24), for its live model's
features: one row per project, JSON columns.

Revision ID: 0023c
Revises: 0022d
Create Date: 2026-12-04 21:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0023c"
down_revision: str | None = "0022d"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "project_clusters",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sizes", sa.Text(), nullable=False),
        sa.Column("words", sa.Text(), nullable=False),
        sa.Column("ids", sa.Text(), nullable=False),
        sa.Column("n_sentences", sa.Integer(), nullable=False),
        sa.Column("n_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_project_clusters_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_clusters")),
    )


def downgrade() -> None:
    op.drop_table("project_clusters")
