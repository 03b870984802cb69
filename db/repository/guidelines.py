"""Guidelines (versioned Markdown per project) and flags (an annotator's doubt about a sentence,
resolved by a lead). Guidelines are never edited in place: each save is a new version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, func, insert, select, update

from db.engine import read_transaction, write_transaction
from db.models import Flag, Guideline, Sentence, User
from db.repository.base import InvalidValueError, NotFoundError, check_time

GUIDELINES_MAX = 200_000  # characters
COMMENT_MAX = 2_000


@dataclass(frozen=True)
class GuidelineVersion:
    version: int
    text: str
    author: str
    created_at: datetime


@dataclass(frozen=True)
class FlagInfo:
    id: int
    sentence_id: int
    tokens: list[str]
    author: str
    comment: str
    created_at: datetime
    resolver: str | None
    resolved_at: datetime | None
    resolution: str | None


def _text(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidValueError(f"{what} must be text")
    if len(value) > limit:
        raise InvalidValueError(f"{what} is {len(value):,} characters long; at most {limit:,}")
    if "\x00" in value:
        raise InvalidValueError(f"{what} holds a NUL character")
    return value


def save_guidelines(
    engine: Engine, project_id: int, user_id: int, text: str, *, now: datetime | None = None
) -> int:
    """Store ``text`` as the project's newest guidelines; returns its version (1, 2, ...)."""
    _text(text, "guidelines", GUIDELINES_MAX)
    now = check_time(now)
    with write_transaction(engine) as conn:
        last = conn.execute(
            select(func.max(Guideline.version)).where(Guideline.project_id == project_id)
        ).scalar_one()
        version = (last or 0) + 1
        conn.execute(
            insert(Guideline).values(
                project_id=project_id, version=version, text=text, user_id=user_id, created_at=now
            )  # fmt: skip
        )
    return version


def guideline_versions(engine: Engine, project_id: int) -> list[GuidelineVersion]:
    """Every version of the project's guidelines, newest first."""
    query = (
        select(Guideline.version, Guideline.text, User.name, Guideline.created_at)
        .join(User, User.id == Guideline.user_id)
        .where(Guideline.project_id == project_id)
        .order_by(Guideline.version.desc())
    )
    with read_transaction(engine) as conn:
        return [GuidelineVersion(*row) for row in conn.execute(query)]


def latest_guidelines(engine: Engine, project_id: int) -> GuidelineVersion | None:
    """The newest guidelines, or None when the project has none yet."""
    query = (
        select(Guideline.version, Guideline.text, User.name, Guideline.created_at)
        .join(User, User.id == Guideline.user_id)
        .where(Guideline.project_id == project_id)
        .order_by(Guideline.version.desc())
        .limit(1)
    )
    with read_transaction(engine) as conn:
        row = conn.execute(query).one_or_none()
    return None if row is None else GuidelineVersion(*row)


def add_flag(
    engine: Engine,
    sentence_id: int,
    user_id: int,
    comment: str,
    *,
    now: datetime | None = None,
) -> int:
    """Flag a sentence with a comment (the sentence's project is taken from it); the flag id."""
    _text(comment, "comment", COMMENT_MAX)
    if not comment.strip():
        raise InvalidValueError("say what is doubtful: the comment is empty")
    now = check_time(now)
    with write_transaction(engine) as conn:
        project_id = conn.execute(
            select(Sentence.project_id).where(Sentence.id == sentence_id)
        ).scalar_one_or_none()
        if project_id is None:
            raise NotFoundError(f"no sentence with id {sentence_id}")
        return conn.execute(
            insert(Flag)
            .values(
                project_id=project_id,
                sentence_id=sentence_id,
                user_id=user_id,
                comment=comment,
                created_at=now,
            )  # fmt: skip
            .returning(Flag.id)
        ).scalar_one()


def list_flags(engine: Engine, project_id: int, *, open_only: bool = True) -> list[FlagInfo]:
    """The project's flags, oldest first (only unresolved ones with ``open_only``)."""
    author, resolver = User.__table__.alias("author"), User.__table__.alias("resolver")
    query = (
        select(
            Flag.id,
            Flag.sentence_id,
            Sentence.tokens,
            author.c.name,
            Flag.comment,
            Flag.created_at,
            resolver.c.name,
            Flag.resolved_at,
            Flag.resolution,
        )  # fmt: skip
        .join(Sentence, Sentence.id == Flag.sentence_id)
        .join(author, author.c.id == Flag.user_id)
        .outerjoin(resolver, resolver.c.id == Flag.resolved_by)
        .where(Flag.project_id == project_id)
        .order_by(Flag.id)
    )
    if open_only:
        query = query.where(Flag.resolved_at.is_(None))
    with read_transaction(engine) as conn:
        return [FlagInfo(*row) for row in conn.execute(query)]


def resolve_flag(
    engine: Engine,
    project_id: int,
    flag_id: int,
    user_id: int,
    resolution: str,
    *,
    now: datetime | None = None,
) -> bool:
    """Mark an open flag of the project resolved, with a note; False when it was not open."""
    _text(resolution, "resolution", COMMENT_MAX)
    now = check_time(now)
    with write_transaction(engine) as conn:
        done = conn.execute(
            update(Flag)
            .where(Flag.id == flag_id, Flag.project_id == project_id, Flag.resolved_at.is_(None))
            .values(resolved_by=user_id, resolved_at=now, resolution=resolution)
        ).rowcount
    return bool(done)
