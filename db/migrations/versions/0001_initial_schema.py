"""Initial schema: users, projects, imports, sentences, annotations, leases, checkpoints,
predictions, simulation runs and curve points.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 10:49:42.382048
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("name", name=op.f("uq_projects_name")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("role IN ('annotator', 'lead')", name=op.f("ck_users_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
    )
    op.create_table(
        "checkpoints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("last_annotation_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.LargeBinary(), nullable=False),
        sa.Column("info", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_checkpoints_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_checkpoints")),
    )
    op.create_index(op.f("ix_checkpoints_project_id_id"), "checkpoints", ["project_id", "id"])
    op.create_table(
        "import_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("source_name", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("split", sa.String(length=8), nullable=False),
        sa.Column("n_sentences", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("split IN ('pool', 'eval')", name=op.f("ck_import_batches_split")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_import_batches_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_batches")),
        sa.UniqueConstraint(
            "project_id", "content_hash", name=op.f("uq_import_batches_project_id_content_hash")
        ),
    )
    op.create_table(
        "simulation_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('running', 'done', 'failed')", name=op.f("ck_simulation_runs_status")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_simulation_runs_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_simulation_runs")),
    )
    op.create_table(
        "curve_points",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("n_sentences", sa.Integer(), nullable=False),
        sa.Column("n_tokens", sa.Integer(), nullable=False),
        sa.Column("metrics", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["simulation_runs.id"],
            name=op.f("fk_curve_points_run_id_simulation_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_curve_points")),
        sa.UniqueConstraint("run_id", "step", name=op.f("uq_curve_points_run_id_step")),
    )
    op.create_table(
        "sentences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Text(), nullable=False),
        sa.Column("columns", sa.Text(), nullable=False),
        sa.Column("gold_tags", sa.Text(), nullable=True),
        sa.Column("meta", sa.Text(), nullable=False),
        sa.Column("split", sa.String(length=8), nullable=False),
        sa.CheckConstraint("split IN ('pool', 'eval')", name=op.f("ck_sentences_split")),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["import_batches.id"],
            name=op.f("fk_sentences_batch_id_import_batches"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_sentences_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sentences")),
        sa.UniqueConstraint("batch_id", "position", name=op.f("uq_sentences_batch_id_position")),
    )
    op.create_index(op.f("ix_sentences_project_id_split"), "sentences", ["project_id", "split"])
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("tags", sa.Text(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("supersedes_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('submitted', 'skipped', 'undone')", name=op.f("ck_annotations_status")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_annotations_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["sentence_id"],
            ["sentences.id"],
            name=op.f("fk_annotations_sentence_id_sentences"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["supersedes_id"],
            ["annotations.id"],
            name=op.f("fk_annotations_supersedes_id_annotations"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_annotations_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
    )
    op.create_index(op.f("ix_annotations_project_id_id"), "annotations", ["project_id", "id"])
    op.create_index(op.f("ix_annotations_sentence_id_id"), "annotations", ["sentence_id", "id"])
    op.create_index(op.f("ix_annotations_supersedes_id"), "annotations", ["supersedes_id"])
    op.create_index(op.f("ix_annotations_user_id_id"), "annotations", ["user_id", "id"])
    op.create_table(
        "leases",
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("leased_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_leases_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["sentence_id"],
            ["sentences.id"],
            name=op.f("fk_leases_sentence_id_sentences"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_leases_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("sentence_id", name=op.f("pk_leases")),
    )
    op.create_index(op.f("ix_leases_project_id_user_id"), "leases", ["project_id", "user_id"])
    op.create_table(
        "predictions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("model_version", sa.Integer(), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("confidences", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("strategy", sa.String(length=64), nullable=False),
        sa.Column("served_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_predictions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["sentence_id"],
            ["sentences.id"],
            name=op.f("fk_predictions_sentence_id_sentences"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_predictions_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_predictions")),
    )
    op.create_index(op.f("ix_predictions_project_id_id"), "predictions", ["project_id", "id"])
    op.create_index(op.f("ix_predictions_sentence_id"), "predictions", ["sentence_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_predictions_sentence_id"), table_name="predictions")
    op.drop_index(op.f("ix_predictions_project_id_id"), table_name="predictions")
    op.drop_table("predictions")
    op.drop_index(op.f("ix_leases_project_id_user_id"), table_name="leases")
    op.drop_table("leases")
    op.drop_index(op.f("ix_annotations_user_id_id"), table_name="annotations")
    op.drop_index(op.f("ix_annotations_supersedes_id"), table_name="annotations")
    op.drop_index(op.f("ix_annotations_sentence_id_id"), table_name="annotations")
    op.drop_index(op.f("ix_annotations_project_id_id"), table_name="annotations")
    op.drop_table("annotations")
    op.drop_index(op.f("ix_sentences_project_id_split"), table_name="sentences")
    op.drop_table("sentences")
    op.drop_table("curve_points")
    op.drop_table("simulation_runs")
    op.drop_table("import_batches")
    op.drop_index(op.f("ix_checkpoints_project_id_id"), table_name="checkpoints")
    op.drop_table("checkpoints")
    op.drop_table("users")
    op.drop_table("projects")
