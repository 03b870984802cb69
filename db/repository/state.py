"""SQL expressions that define the state derived from the append-only annotation log.

* An annotation row is *retracted* when an ``undone`` row supersedes it.
* The *current annotation* of a sentence is its newest submitted, non-retracted row.
* The *latest action* of a sentence is its newest submitted or skipped, non-retracted row.
* A sentence is *labeled* when it has a current annotation; it is *available* to an annotator
  when it is in the pool, unlabeled, not under a live lease, and not skipped by that annotator.
* An overlap sentence collects ``version`` rows (one per annotator) before it has a current
  annotation: it is not available to an annotator who gave a version, nor to anyone once the
  project's ``overlap_k`` annotators have (then it waits for adjudication).
* A sentence is *in* its project once its import batch is ``done``: the sentences of a running
  (or killed) import are staged and invisible to every query (``in_project``).

The conditions are uncorrelated ``IN`` sets scoped to one project (or one sentence): both
databases evaluate each set once per query (a hash or a temporary index), so the cost stays
linear in the project's annotations whatever plan the statistics of a young table suggest.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, Select, and_, func, select
from sqlalchemy.sql.elements import BindParameter

from db.models import Annotation, ImportBatch, Lease, Project, Sentence

_undo = Annotation.__table__.alias("undo_row")
_ann = Annotation.__table__.alias("ann_row")
_lease = Lease.__table__.alias("lease_row")
IntParam = int | BindParameter[int]


def staged_batch_ids(project_id: IntParam) -> Select:
    """Ids of the project's import batches that are not finished (their sentences are staged)."""
    return select(ImportBatch.id).where(
        ImportBatch.project_id == project_id, ImportBatch.state != "done"
    )


def in_project(project_id: IntParam) -> ColumnElement[bool]:
    """Condition on ``Sentence`` rows: in the project and visible (not staged by an import)."""
    return and_(
        Sentence.project_id == project_id, Sentence.batch_id.not_in(staged_batch_ids(project_id))
    )


def retracted_ids(
    project_id: IntParam | None = None,
    sentence_id: IntParam | None = None,
    upto_id: int | None = None,
) -> Select:
    """Ids of the annotation rows that an ``undone`` row retracts (in a project or sentence;
    counting only undo rows up to ``upto_id``)."""
    query = select(_undo.c.supersedes_id).where(
        _undo.c.status == "undone", _undo.c.supersedes_id.is_not(None)
    )
    if project_id is not None:
        query = query.where(_undo.c.project_id == project_id)
    if sentence_id is not None:
        query = query.where(_undo.c.sentence_id == sentence_id)
    if upto_id is not None:
        query = query.where(_undo.c.id <= upto_id)
    return query


def not_retracted(
    project_id: IntParam | None = None,
    sentence_id: IntParam | None = None,
    upto_id: int | None = None,
) -> ColumnElement[bool]:
    """Condition on ``Annotation`` rows of that project (or sentence): not retracted (by an
    undo row up to ``upto_id``)."""
    return Annotation.id.not_in(retracted_ids(project_id, sentence_id, upto_id))


def labeled_ids(project_id: IntParam) -> Select:
    """Ids of the project's sentences that have a current annotation."""
    return select(_ann.c.sentence_id).where(
        _ann.c.project_id == project_id,
        _ann.c.status == "submitted",
        _ann.c.id.not_in(retracted_ids(project_id)),
    )


def skipped_ids(project_id: IntParam, user_id: IntParam) -> Select:
    """Ids of the sentences the annotator skipped (skips not undone)."""
    return select(_ann.c.sentence_id).where(
        _ann.c.project_id == project_id,
        _ann.c.user_id == user_id,
        _ann.c.status == "skipped",
        _ann.c.id.not_in(retracted_ids(project_id)),
    )


def leased_ids(
    project_id: IntParam,
    now: datetime | BindParameter[datetime],
    other_than: IntParam | None = None,
) -> Select:
    """Ids of sentences under a live lease at ``now`` (optionally: held by someone else)."""
    query = select(_lease.c.sentence_id).where(
        _lease.c.project_id == project_id, _lease.c.expires_at > now
    )
    if other_than is not None:
        query = query.where(_lease.c.user_id != other_than)
    return query


def version_ids(project_id: IntParam, user_id: IntParam | None = None) -> Select:
    """Ids of the sentences with a live (non-retracted) version row (by ``user_id``)."""
    query = select(_ann.c.sentence_id).where(
        _ann.c.project_id == project_id,
        _ann.c.status == "version",
        _ann.c.id.not_in(retracted_ids(project_id)),
    )
    return query if user_id is None else query.where(_ann.c.user_id == user_id)


def versions_complete_ids(project_id: IntParam) -> Select:
    """Ids of the overlap sentences that hold versions of ``overlap_k`` different annotators."""
    k = select(Project.overlap_k).where(Project.id == project_id).scalar_subquery()
    return (
        version_ids(project_id)
        .group_by(_ann.c.sentence_id)
        .having(func.count(func.distinct(_ann.c.user_id)) >= k)
    )


def available(
    project_id: IntParam, user_id: IntParam | None, now: datetime | BindParameter[datetime]
) -> ColumnElement[bool]:
    """Condition on ``Sentence`` rows: in the project's pool and free for ``user_id`` at ``now``.

    A lease held by ``user_id`` itself does not hide a sentence from that user.
    """
    conds = [
        in_project(project_id),
        Sentence.split == "pool",
        Sentence.id.not_in(labeled_ids(project_id)),
        Sentence.id.not_in(leased_ids(project_id, now, other_than=user_id)),
        Sentence.id.not_in(versions_complete_ids(project_id)),
    ]
    if user_id is not None:
        conds.append(Sentence.id.not_in(skipped_ids(project_id, user_id)))
        conds.append(Sentence.id.not_in(version_ids(project_id, user_id)))
    return and_(*conds)


def current_annotation_ids(
    project_id: int, status: str | None = "submitted", *, upto_id: int | None = None
) -> Select:
    """``(sentence_id, annotation_id)`` of each sentence's newest non-retracted row of ``status``
    (``submitted``: current annotations; ``None``: latest action, submitted or skipped);
    with ``upto_id``, as the log stood right after that row."""
    statuses = ("submitted", "skipped") if status is None else (status,)
    query = select(Annotation.sentence_id, func.max(Annotation.id).label("annotation_id")).where(
        Annotation.project_id == project_id,
        Annotation.status.in_(statuses),
        not_retracted(project_id, upto_id=upto_id),
    )
    if upto_id is not None:
        query = query.where(Annotation.id <= upto_id)
    return query.group_by(Annotation.sentence_id)
