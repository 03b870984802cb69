"""Team annotation: project memberships, overlap versions (annotation status ``version``),
adjudication provenance, versioned guidelines and flags.

Existing users who are not leads become annotators of every existing project, so that an upgrade
takes nobody's work away (new projects list their members explicitly).

Revision ID: 0022
Revises: 0001
Create Date: 2026-11-27 03:40:00
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

_OLD_STATUS = "status IN ('submitted', 'skipped', 'undone')"
_NEW_STATUS = "status IN ('submitted', 'skipped', 'undone', 'version')"


def _fk(table: str, column: str, target: str, ondelete: str | None = "CASCADE"):
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    op.create_table(
        "memberships",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('lead', 'reviewer', 'annotator')", name=op.f("ck_memberships_role")
        ),
        _fk("memberships", "project_id", "projects"),
        _fk("memberships", "user_id", "users"),
        sa.PrimaryKeyConstraint("project_id", "user_id", name=op.f("pk_memberships")),
    )
    op.create_index(op.f("ix_memberships_user_id"), "memberships", ["user_id"])
    op.create_table(
        "adjudications",
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("source_ids", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "method IN ('accept', 'merge', 'edit', 'agreed')", name=op.f("ck_adjudications_method")
        ),
        _fk("adjudications", "annotation_id", "annotations"),
        _fk("adjudications", "project_id", "projects"),
        _fk("adjudications", "sentence_id", "sentences"),
        sa.PrimaryKeyConstraint("annotation_id", name=op.f("pk_adjudications")),
    )
    op.create_index(
        op.f("ix_adjudications_project_id_sentence_id"),
        "adjudications",
        ["project_id", "sentence_id"],
    )
    op.create_table(
        "guidelines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _fk("guidelines", "project_id", "projects"),
        _fk("guidelines", "user_id", "users", None),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_guidelines")),
        sa.UniqueConstraint("project_id", "version", name=op.f("uq_guidelines_project_id_version")),
    )
    op.create_table(
        "flags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_by", sa.Integer(), nullable=True),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        _fk("flags", "project_id", "projects"),
        _fk("flags", "sentence_id", "sentences"),
        _fk("flags", "user_id", "users", None),
        sa.ForeignKeyConstraint(
            ["resolved_by"], ["users.id"], name=op.f("fk_flags_resolved_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flags")),
    )
    op.create_index(op.f("ix_flags_project_id_resolved_at"), "flags", ["project_id", "resolved_at"])
    with op.batch_alter_table("annotations") as batch:
        batch.drop_constraint(op.f("ck_annotations_status"), type_="check")
        batch.create_check_constraint(op.f("ck_annotations_status"), _NEW_STATUS)
    now = datetime.now(UTC)
    if op.get_bind().dialect.name == "sqlite":
        now = now.replace(tzinfo=None)
    op.execute(
        sa.text(
            "INSERT INTO memberships (project_id, user_id, role, created_at) "
            "SELECT projects.id, users.id, 'annotator', :now FROM projects, users "
            "WHERE users.role <> 'lead'"
        ).bindparams(now=now)
    )


def downgrade() -> None:
    op.execute("DELETE FROM annotations WHERE status = 'version'")
    with op.batch_alter_table("annotations") as batch:
        batch.drop_constraint(op.f("ck_annotations_status"), type_="check")
        batch.create_check_constraint(op.f("ck_annotations_status"), _OLD_STATUS)
    op.drop_index(op.f("ix_flags_project_id_resolved_at"), table_name="flags")
    op.drop_table("flags")
    op.drop_table("guidelines")
    op.drop_index(op.f("ix_adjudications_project_id_sentence_id"), table_name="adjudications")
    op.drop_table("adjudications")
    op.drop_index(op.f("ix_memberships_user_id"), table_name="memberships")
    op.drop_table("memberships")
