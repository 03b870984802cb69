"""Label configuration: the append-only history of a project's entity-type changes (renames,
merges, types dropped to O, new types, order, colours and keys), with the mapping by which the
stored labels were rewritten.

Revision ID: 0022c
Revises: 0020
Create Date: 2026-11-27 06:55:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0022c"
down_revision: str | None = "0020"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "label_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("mapping", sa.Text(), nullable=False),
        sa.Column("before", sa.Text(), nullable=False),
        sa.Column("after", sa.Text(), nullable=False),
        sa.Column("rewritten", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_label_changes_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_label_changes_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_label_changes")),
    )
    op.create_index(op.f("ix_label_changes_project_id_id"), "label_changes", ["project_id", "id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_label_changes_project_id_id"), table_name="label_changes")
    op.drop_table("label_changes")
