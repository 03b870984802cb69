"""Account safety: accounts can be disabled; failed sign-ins are kept (per account name and per
client address) so that throttling holds across browser sessions and app processes.

Revision ID: 0022d
Revises: 0022c
Create Date: 2026-11-27 07:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0022d"
down_revision: str | None = "0022c"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "sign_in_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_failures")),
    )
    op.create_index(op.f("ix_sign_in_failures_name_at"), "sign_in_failures", ["name", "at"])
    op.create_index(
        op.f("ix_sign_in_failures_address_at"), "sign_in_failures", ["address", "at"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_sign_in_failures_address_at"), table_name="sign_in_failures")
    op.drop_index(op.f("ix_sign_in_failures_name_at"), table_name="sign_in_failures")
    op.drop_table("sign_in_failures")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("disabled_at")
