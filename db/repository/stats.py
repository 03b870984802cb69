"""Counters for the dashboard: work per annotator (today, total, pace) and project progress."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Engine, and_, func, or_, select

from db.engine import read_transaction
from db.models import Adjudication, Annotation, Lease, Sentence, User
from db.repository.base import check_time
from db.repository.state import in_project, labeled_ids, not_retracted

if TYPE_CHECKING:  # pandas is imported by the functions that build frames
    import pandas as pd


@dataclass(frozen=True)
class AnnotatorStats:
    """One annotator's work in a project; retracted (undone) rows do not count."""

    user_id: int
    name: str
    today: int
    total: int
    skipped: int
    seconds_total: float
    seconds_per_sentence: float | None
    sentences_per_hour: float | None


@dataclass(frozen=True)
class ProjectCounts:
    pool: int
    eval: int
    labeled: int
    unlabeled: int
    leased: int
    annotations: int


def _midnight(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def annotator_stats(
    engine: Engine,
    project_id: int,
    *,
    day_start: datetime | None = None,
    now: datetime | None = None,
) -> list[AnnotatorStats]:
    """Per annotator: submissions today (since ``day_start``, default midnight of ``now`` in its
    own timezone) and in total, skips, seconds spent and the resulting pace, by user id."""
    now = check_time(now)
    day_start = check_time(day_start) if day_start is not None else _midnight(now)
    # an annotator's labels: submissions and overlap versions (a gold the versions agreed on
    # is not a second label of the last annotator)
    agreed = select(Adjudication.annotation_id).where(
        Adjudication.project_id == project_id, Adjudication.method == "agreed"
    )
    submitted = or_(
        Annotation.status == "version",
        and_(Annotation.status == "submitted", Annotation.id.not_in(agreed)),
    )
    timed = and_(submitted, Annotation.seconds.is_not(None))
    query = (
        select(
            User.id,
            User.name,
            func.count(Annotation.id).filter(submitted, Annotation.created_at >= day_start),
            func.count(Annotation.id).filter(submitted),
            func.count(Annotation.id).filter(Annotation.status == "skipped"),
            func.coalesce(func.sum(Annotation.seconds).filter(timed), 0.0),
            func.count(Annotation.id).filter(timed),
        )
        .join(User, User.id == Annotation.user_id)
        .where(
            Annotation.project_id == project_id,
            Annotation.status != "undone",
            not_retracted(project_id),
        )
        .group_by(User.id, User.name)
        .order_by(User.id)
    )
    with read_transaction(engine) as conn:
        rows = conn.execute(query).all()
    stats = []
    for user_id, name, today, total, skipped, seconds, n_timed in rows:
        per = float(seconds) / n_timed if n_timed else None
        pace = 3600.0 / per if per else None
        stats.append(
            AnnotatorStats(user_id, name, today, total, skipped, float(seconds), per, pace)
        )
    return stats


def project_counts(engine: Engine, project_id: int, now: datetime | None = None) -> ProjectCounts:
    """Sizes of the pool and eval splits, labeled / unlabeled pool sentences, live leases and
    annotation rows."""
    now = check_time(now)
    visible = in_project(project_id)
    pool = and_(visible, Sentence.split == "pool")
    with read_transaction(engine) as conn:
        n_pool, n_eval, n_labeled = conn.execute(
            select(
                func.count(Sentence.id).filter(Sentence.split == "pool"),
                func.count(Sentence.id).filter(Sentence.split == "eval"),
                func.count(Sentence.id).filter(pool, Sentence.id.in_(labeled_ids(project_id))),
            ).where(visible)
        ).one()
        n_leased = conn.execute(
            select(func.count())
            .select_from(Lease)
            .where(Lease.project_id == project_id, Lease.expires_at > now)
        ).scalar_one()
        n_rows = conn.execute(
            select(func.count()).select_from(Annotation).where(Annotation.project_id == project_id)
        ).scalar_one()
    return ProjectCounts(n_pool, n_eval, n_labeled, n_pool - n_labeled, n_leased, n_rows)


def annotation_log(engine: Engine, project_id: int) -> pd.DataFrame:
    """Every annotation row of a project as a DataFrame (``id``, ``sentence_id``, ``user_id``,
    ``annotator``, ``status``, ``created_at``, ``seconds``, ``retracted``): the raw material of
    per-day and per-annotator charts."""
    import pandas as pd

    query = (
        select(
            Annotation.id,
            Annotation.sentence_id,
            Annotation.user_id,
            User.name.label("annotator"),
            Annotation.status,
            Annotation.created_at,
            Annotation.seconds,
            (~not_retracted(project_id)).label("retracted"),
        )
        .join(User, User.id == Annotation.user_id)
        .where(Annotation.project_id == project_id)
        .order_by(Annotation.id)
    )
    with read_transaction(engine) as conn:
        rows = conn.execute(query).all()
    names = ["id", "sentence_id", "user_id", "annotator", "status", "created_at", "seconds"]
    frame = pd.DataFrame([tuple(r) for r in rows], columns=[*names, "retracted"])
    frame["retracted"] = frame["retracted"].astype(bool)
    return frame
