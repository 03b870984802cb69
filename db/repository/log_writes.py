"""The annotation log's appends outside the submit / skip path (``annotations``): an annotator's
undo, which retracts their newest submission or skip with an ``undone`` row, and an import's file
tags stored as submissions. Rows are never updated or deleted; both take the project's
annotation lock."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, delete, insert, select

from db.engine import write_transaction
from db.models import Annotation, Lease
from db.repository.base import check_time, lock_project_annotations
from db.repository.leases import take_lease
from db.repository.state import not_retracted


@dataclass(frozen=True)
class UndoResult:
    undo_id: int
    undone_id: int
    sentence_id: int
    undone_status: str
    leased: bool


def undo_last(
    engine: Engine,
    project_id: int,
    annotator_id: int,
    *,
    lease_ttl: float | None = None,
    now: datetime | None = None,
) -> UndoResult | None:
    """Retract the annotator's newest submission or skip in the project by appending an
    ``undone`` row (nothing is deleted); None when there is nothing left to undo.

    With ``lease_ttl`` the sentence is leased back to the annotator (their other leases in the
    project are released) unless someone else holds a live lease on it.
    """
    now = check_time(now)
    with write_transaction(engine) as conn:
        lock_project_annotations(conn, project_id)
        target = conn.execute(
            select(Annotation.id, Annotation.sentence_id, Annotation.status)
            .where(
                Annotation.project_id == project_id,
                Annotation.user_id == annotator_id,
                Annotation.status.in_(("submitted", "skipped", "version")),
                not_retracted(project_id),
            )
            .order_by(Annotation.id.desc())
            .limit(1)
        ).one_or_none()
        if target is None:
            return None
        undo_id = conn.execute(
            insert(Annotation)
            .values(
                project_id=project_id,
                sentence_id=target.sentence_id,
                user_id=annotator_id,
                status="undone",
                tags=None,
                seconds=None,
                supersedes_id=target.id,
                created_at=now,
            )
            .returning(Annotation.id)
        ).scalar_one()
        leased = False
        if lease_ttl is not None:
            conn.execute(
                delete(Lease).where(
                    Lease.project_id == project_id,
                    Lease.user_id == annotator_id,
                    Lease.sentence_id != target.sentence_id,
                )
            )
            leased = take_lease(conn, project_id, target.sentence_id, annotator_id, now, lease_ttl)
    return UndoResult(undo_id, target.id, target.sentence_id, target.status, leased)


def add_imported_annotations(
    conn: Connection,
    project_id: int,
    annotator_id: int,
    items: Sequence[tuple[int, list[str]]],
    now: datetime,
) -> None:
    """Inside an import's transaction: store file tags as ``annotator_id``'s submissions for
    freshly inserted sentences (``(sentence_id, tags)`` pairs, already checked)."""
    if not items:
        return
    lock_project_annotations(conn, project_id)
    conn.execute(
        insert(Annotation),
        [
            {
                "project_id": project_id,
                "sentence_id": sentence_id,
                "user_id": annotator_id,
                "status": "submitted",
                "tags": tags,
                "seconds": None,
                "supersedes_id": None,
                "created_at": now,
            }
            for sentence_id, tags in items
        ],
    )
