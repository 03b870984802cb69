"""The schema of a cwal project store as SQLAlchemy 2.0 typed models.

The database is the source of truth: every label an annotator submits, and everything the model
and the charts are rebuilt from. Annotations are append-only; a newer row supersedes an older one
without deleting it. Token lists and per-token columns are stored as JSON *text* (not a native JSON
type) so that any Python string, NUL included, round-trips on both SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAME_MAX = 200
"""Longest user, project, document or run name the store accepts (characters)."""

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class JSONText(TypeDecorator[Any]):
    """A JSON value kept as TEXT: escapes NUL and lone surrogates, so every string round-trips."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always returned timezone-aware (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass a timezone-aware one")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (the store's clock for every default)."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint("role IN ('annotator', 'lead')", name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class SignInFailure(Base):
    """A failed sign-in: the name tried and the client address (throttling reads the recent ones)."""

    __tablename__ = "sign_in_failures"
    __table_args__ = (Index(None, "name", "at"), Index(None, "address", "at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class SignInSession(Base):
    """A signed-in browser: the SHA-256 of its random token (the token itself lives only in the
    browser's cookie), expiring; deleted on sign-out and on a password change."""

    __tablename__ = "sign_in_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Project(Base):
    """A project; ``overlap_share`` of its pool sentences (chosen by a hash of the id) are
    labeled independently by ``overlap_k`` annotators (real columns: the queue's SQL reads k)."""

    __tablename__ = "projects"
    __table_args__ = (
        CheckConstraint("overlap_share >= 0 AND overlap_share <= 1", name="overlap_share"),
        CheckConstraint("overlap_k >= 2", name="overlap_k"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True)
    settings: Mapped[dict] = mapped_column(JSONText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    overlap_share: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    overlap_k: Mapped[int] = mapped_column(Integer, default=2, server_default="2")


class ImportBatch(Base):
    """One imported file; the content hash makes a second import of the same bytes detectable.

    ``state`` is ``importing`` while the file's sentences are written in short transactions (they
    are invisible then) and ``done`` once one small transaction made them all visible at once.
    """

    __tablename__ = "import_batches"
    __table_args__ = (
        UniqueConstraint("project_id", "content_hash"),
        CheckConstraint("split IN ('pool', 'eval')", name="split"),
        Index(None, "project_id", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    source_name: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    format: Mapped[str] = mapped_column(String(16))
    split: Mapped[str] = mapped_column(String(8))
    n_sentences: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    state: Mapped[str] = mapped_column(String(16), server_default="done")
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Sentence(Base):
    __tablename__ = "sentences"
    __table_args__ = (
        UniqueConstraint("batch_id", "position"),
        CheckConstraint("split IN ('pool', 'eval')", name="split"),
        Index(None, "project_id", "split"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    batch_id: Mapped[int] = mapped_column(ForeignKey("import_batches.id", ondelete="CASCADE"))
    document: Mapped[str] = mapped_column(Text)
    position: Mapped[int] = mapped_column(Integer)
    line: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[list] = mapped_column(JSONText())
    columns: Mapped[dict] = mapped_column(JSONText())
    gold_tags: Mapped[list | None] = mapped_column(JSONText(), nullable=True)
    meta: Mapped[dict] = mapped_column(JSONText())
    split: Mapped[str] = mapped_column(String(8))


class Membership(Base):
    """Who works on a project and as what (``lead``, ``reviewer``, ``annotator``)."""

    __tablename__ = "memberships"
    __table_args__ = (
        CheckConstraint("role IN ('lead', 'reviewer', 'annotator')", name="role"),
        Index(None, "user_id"),
    )

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Annotation(Base):
    """Append-only: ``submitted`` carries tags, ``skipped`` none, ``undone`` retracts ``supersedes``;
    ``version`` is one annotator's independent label of an overlap sentence (kept for agreement
    and adjudication, never learned: the sentence's gold is a later ``submitted`` row)."""

    __tablename__ = "annotations"
    __table_args__ = (
        CheckConstraint("status IN ('submitted', 'skipped', 'undone', 'version')", name="status"),
        Index(None, "project_id", "id"),
        Index(None, "sentence_id", "id"),
        Index(None, "user_id", "id"),
        Index(None, "supersedes_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    status: Mapped[str] = mapped_column(String(16))
    tags: Mapped[list | None] = mapped_column(JSONText(), nullable=True)
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    supersedes_id: Mapped[int | None] = mapped_column(ForeignKey("annotations.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Adjudication(Base):
    """Where a gold ``submitted`` row came from: the versions it settled and how (``accept``,
    ``merge``, ``edit``, or ``agreed`` when every version was the same)."""

    __tablename__ = "adjudications"
    __table_args__ = (
        CheckConstraint("method IN ('accept', 'merge', 'edit', 'agreed')", name="method"),
        Index(None, "project_id", "sentence_id"),
    )

    annotation_id: Mapped[int] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), primary_key=True
    )
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    source_ids: Mapped[list] = mapped_column(JSONText())
    method: Mapped[str] = mapped_column(String(16))


class Guideline(Base):
    """One version of a project's annotation guidelines (Markdown); the newest is shown."""

    __tablename__ = "guidelines"
    __table_args__ = (UniqueConstraint("project_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Flag(Base):
    """An annotator's doubt about a sentence, with a comment; a lead resolves it."""

    __tablename__ = "flags"
    __table_args__ = (Index(None, "project_id", "resolved_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    comment: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    resolution: Mapped[str | None] = mapped_column(Text, nullable=True)


class LabelChange(Base):
    """One change of a project's entity types (append-only): who, when, what, the types before
    and after, and ``mapping`` (old type -> new type, or None for dropped to O) by which every
    stored label, gold tag and logged prediction was rewritten in the same transaction."""

    __tablename__ = "label_changes"
    __table_args__ = (Index(None, "project_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    action: Mapped[str] = mapped_column(String(16))
    mapping: Mapped[dict] = mapped_column(JSONText())
    before: Mapped[list] = mapped_column(JSONText())
    after: Mapped[list] = mapped_column(JSONText())
    rewritten: Mapped[int] = mapped_column(Integer)


class Lease(Base):
    """At most one lease per sentence (the primary key): a live one hides it from others."""

    __tablename__ = "leases"
    __table_args__ = (Index(None, "project_id", "user_id"),)

    sentence_id: Mapped[int] = mapped_column(
        ForeignKey("sentences.id", ondelete="CASCADE"), primary_key=True
    )
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    leased_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Checkpoint(Base):
    """A serialized model (the engine's .npz + JSON bytes) and the last annotation it has seen."""

    __tablename__ = "checkpoints"
    __table_args__ = (Index(None, "project_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    last_annotation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state: Mapped[bytes] = mapped_column(LargeBinary)
    info: Mapped[dict] = mapped_column(JSONText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ProjectClusters(Base):
    """A project's word clusters, learned once from its pool text (``db.repository.clusters``):
    the words, their cluster at each level, the levels' sizes, as JSON (never a pickle)."""

    __tablename__ = "project_clusters"

    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    sizes: Mapped[list] = mapped_column(JSONText())
    words: Mapped[list] = mapped_column(JSONText())
    ids: Mapped[list] = mapped_column(JSONText())
    n_sentences: Mapped[int] = mapped_column(Integer)
    n_tokens: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Prediction(Base):
    """What a model predicted for a sentence when it was served: behind calibration charts."""

    __tablename__ = "predictions"
    __table_args__ = (Index(None, "project_id", "id"), Index(None, "sentence_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    model_version: Mapped[int] = mapped_column(Integer)
    tags: Mapped[list] = mapped_column(JSONText())
    confidences: Mapped[list] = mapped_column(JSONText())
    keys: Mapped[list | None] = mapped_column(JSONText(), nullable=True)  # Delta per token
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    strategy: Mapped[str] = mapped_column(String(64))
    served_at: Mapped[datetime] = mapped_column(UTCDateTime())


class SimulationRun(Base):
    __tablename__ = "simulation_runs"
    __table_args__ = (CheckConstraint("status IN ('running', 'done', 'failed')", name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    )
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    config: Mapped[dict] = mapped_column(JSONText())
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class CurvePoint(Base):
    """One point of a learning curve: labeled amount after a step and the metrics measured."""

    __tablename__ = "curve_points"
    __table_args__ = (UniqueConstraint("run_id", "step"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("simulation_runs.id", ondelete="CASCADE"))
    step: Mapped[int] = mapped_column(Integer)
    n_sentences: Mapped[int] = mapped_column(Integer)
    n_tokens: Mapped[int] = mapped_column(Integer)
    metrics: Mapped[dict] = mapped_column(JSONText())
