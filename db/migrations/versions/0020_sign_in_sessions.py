"""Sign-in sessions: a signed-in browser keeps a random token in a cookie; the store keeps its
SHA-256, the user and the expiry, so that a refresh or a direct URL keeps the user signed in.

Revision ID: 0020
Revises: 0022b
Create Date: 2026-11-27 04:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0022b"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "sign_in_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_sign_in_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_sign_in_sessions")),
    )
    op.create_index(op.f("ix_sign_in_sessions_user_id"), "sign_in_sessions", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_sign_in_sessions_user_id"), table_name="sign_in_sessions")
    op.drop_table("sign_in_sessions")
