"""Reading the annotation log: replay in id order, current state, per-sentence history.

See ``state`` for how the current state derives from the append-only rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Select, func, select

from cwal.io import Sentence as IoSentence
from db.engine import read_transaction
from db.models import Annotation, Sentence, User
from db.repository.base import InvalidValueError, check_time
from db.repository.state import current_annotation_ids


@dataclass(frozen=True)
class AnnotationEvent:
    """One annotation row with what a learner needs to replay it (the sentence's tokens and
    per-token columns). ``tags`` is None for skipped and undone rows; an undone row's
    ``supersedes_id`` is the annotation it retracts."""

    id: int
    project_id: int
    sentence_id: int
    user_id: int
    annotator: str
    status: str
    tags: list[str] | None
    seconds: float | None
    supersedes_id: int | None
    created_at: datetime
    tokens: list[str]
    columns: dict[str, list[str]]

    def to_sentence(self) -> IoSentence:
        """A ``cwal.io.Sentence`` with the annotated tags (and provenance in ``meta``)."""
        meta = {
            "sentence_id": self.sentence_id,
            "annotation_id": self.id,
            "annotator": self.annotator,
            "status": self.status,
            "annotated_at": self.created_at.isoformat(),
        }
        return IoSentence(list(self.tokens), self.tags, dict(self.columns), meta)


_EVENT_COLUMNS = (
    Annotation.id,
    Annotation.project_id,
    Annotation.sentence_id,
    Annotation.user_id,
    User.name,
    Annotation.status,
    Annotation.tags,
    Annotation.seconds,
    Annotation.supersedes_id,
    Annotation.created_at,
    Sentence.tokens,
    Sentence.columns,
)


ORDERS = {"document": (Sentence.batch_id, Sentence.position), "learned": (Annotation.id,)}


def _event_query() -> Select:
    return (
        select(*_EVENT_COLUMNS)
        .join(Sentence, Sentence.id == Annotation.sentence_id)
        .join(User, User.id == Annotation.user_id)
    )


def _stream(engine: Engine, query: Select, batch_size: int = 1000) -> Iterator[AnnotationEvent]:
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch_size).execute(query)
        for row in result:
            yield AnnotationEvent(*row)


def annotations_after(
    engine: Engine, project_id: int, after_id: int = 0, *, limit: int | None = None
) -> Iterator[AnnotationEvent]:
    """Stream the project's annotation rows with id > ``after_id`` in id order (submissions,
    skips and undos), for replay and catch-up. Ids become visible in increasing order, so a
    reader that remembers the last id it saw never misses a row."""
    query = _event_query().where(Annotation.project_id == project_id, Annotation.id > after_id)
    query = query.order_by(Annotation.id)
    if limit is not None:
        query = query.limit(limit)
    return _stream(engine, query)


def iter_latest_annotations(
    engine: Engine,
    project_id: int,
    *,
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    upto_id: int | None = None,
    order: str = "document",
) -> Iterator[AnnotationEvent]:
    """Stream each sentence's latest annotation in document order (``order="learned"``: in
    annotation id order, the order a model learned them).

    ``status="submitted"`` gives current annotations (newest non-retracted submission);
    ``"skipped"`` the sentences whose latest action is a skip; None the latest action either way.
    ``annotator_ids`` and ``[since, until)`` filter on that latest row; ``upto_id`` gives the
    state as it was right after that annotation id (later rows, undos included, are ignored).
    """
    if status is not None and status not in ("submitted", "skipped"):
        raise InvalidValueError(f"status must be submitted, skipped or None, not {status!r}")
    wanted = "submitted" if status == "submitted" else None
    base = current_annotation_ids(project_id, wanted, upto_id=upto_id)
    latest = base.subquery()
    query = _event_query().join(latest, latest.c.annotation_id == Annotation.id)
    if status is not None:
        query = query.where(Annotation.status == status)
    if annotator_ids is not None:
        query = query.where(Annotation.user_id.in_(list(annotator_ids)))
    if since is not None:
        query = query.where(Annotation.created_at >= check_time(since))
    if until is not None:
        query = query.where(Annotation.created_at < check_time(until))
    if order not in ORDERS:
        raise InvalidValueError(f"order must be one of {sorted(ORDERS)}, not {order!r}")
    return _stream(engine, query.order_by(*ORDERS[order]))


def current_annotations(
    engine: Engine, project_id: int, upto_id: int | None = None, order: str = "document"
) -> list[AnnotationEvent]:
    """The current annotation of every labeled sentence (newest non-retracted submission), in
    document order (or ``order="learned"``: annotation id order); with ``upto_id``, as of that
    annotation id (a checkpoint's training set)."""
    return list(iter_latest_annotations(engine, project_id, upto_id=upto_id, order=order))


def current_label_ids(engine: Engine, project_id: int, upto_id: int) -> list[tuple[int, int]]:
    """``(annotation id, sentence id)`` of the rows ``current_annotations(upto_id=...)`` gives, in
    annotation id order (the order a model learned them)."""
    latest = current_annotation_ids(project_id, "submitted", upto_id=upto_id).subquery()
    query = select(latest.c.annotation_id, latest.c.sentence_id).order_by(latest.c.annotation_id)
    with read_transaction(engine) as conn:
        return [(int(a), int(s)) for a, s in conn.execute(query)]


def retractions(engine: Engine, project_id: int, after_id: int = 0) -> list[tuple[int, int]]:
    """``(retracted submission id, undo id)`` for each undone submission (undo id > ``after_id``),
    in undo order: what a model that learned those submissions has to forget."""
    target = Annotation.__table__.alias("target")
    query = (
        select(Annotation.supersedes_id, Annotation.id)
        .join(target, target.c.id == Annotation.supersedes_id)
        .where(
            Annotation.project_id == project_id,
            Annotation.status == "undone",
            Annotation.id > after_id,
            target.c.status == "submitted",
        )
        .order_by(Annotation.id)
    )
    with read_transaction(engine) as conn:
        return [(int(t), int(u)) for t, u in conn.execute(query)]


def annotation_history(engine: Engine, sentence_id: int) -> list[AnnotationEvent]:
    """Every annotation row of one sentence, oldest first."""
    query = _event_query().where(Annotation.sentence_id == sentence_id).order_by(Annotation.id)
    with read_transaction(engine) as conn:
        return [AnnotationEvent(*row) for row in conn.execute(query)]


def last_annotation_id(engine: Engine, project_id: int) -> int:
    """The newest annotation id of the project (0 when none): a checkpoint's high-water mark."""
    with read_transaction(engine) as conn:
        found = conn.execute(
            select(func.max(Annotation.id)).where(Annotation.project_id == project_id)
        ).scalar_one()
    return found or 0
