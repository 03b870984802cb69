"""Staged imports: an import batch is ``importing`` (its sentences invisible) until it is ``done``.

Revision ID: 0021
Revises: 0018
Create Date: 2026-11-27 03:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("import_batches") as batch:
        batch.add_column(
            sa.Column("state", sa.String(length=16), server_default="done", nullable=False)
        )
        batch.add_column(sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        op.f("ix_import_batches_project_id_state"), "import_batches", ["project_id", "state"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_import_batches_project_id_state"), table_name="import_batches")
    with op.batch_alter_table("import_batches") as batch:
        batch.drop_column("updated_at")
        batch.drop_column("state")
