"""The live service's store: ``cwal.live.Store`` implemented over the repository.

``open_session(database_url_or_engine, project_id)`` is the factory the web app holds in
``st.cache_resource``: one ``ProjectSession`` per project per process. Three queries the
repository does not offer are written here against the models: the training set as of an
annotation id, the retractions of submissions, and leasing several sentences at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Engine, exists, func, select
from sqlalchemy.orm import aliased

from cwal.live import (
    CheckpointMeta,
    LiveConfig,
    LogRow,
    PoolSentence,
    PredictionRow,
    ProjectSession,
    get_session,
)
from db import repository as repo
from db.engine import open_database, read_transaction, write_transaction
from db.models import Annotation, Lease, Sentence, utcnow
from db.repository.base import BUSY_TRY_MS, retry_busy
from db.repository.leases import take_lease
from db.repository.projects import project_settings
from db.repository.state import available, in_project

_CHUNK = 500


def _row(e: repo.AnnotationEvent) -> LogRow:
    return LogRow(e.id, e.sentence_id, e.user_id, e.status, e.tags, e.supersedes_id, e.tokens,
                  e.columns)  # fmt: skip


class SqlStore:
    """``cwal.live.Store`` over one engine (SQLite or PostgreSQL); every call commits."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def settings(self, project_id: int) -> dict[str, Any]:
        return repo.get_project(self.engine, project_id).settings

    def log_after(self, project_id: int, after_id: int) -> list[LogRow]:
        return [_row(e) for e in repo.annotations_after(self.engine, project_id, after_id)]

    def _current(self, project_id: int, upto_id: int):
        """Each sentence's newest submission with id <= upto_id not retracted by then."""
        undo = aliased(Annotation)
        retracted = exists().where(
            undo.supersedes_id == Annotation.id, undo.status == "undone", undo.id <= upto_id
        )
        return (
            select(func.max(Annotation.id).label("aid"))
            .where(
                Annotation.project_id == project_id,
                Annotation.status == "submitted",
                Annotation.id <= upto_id,
                ~retracted,
            )
            .group_by(Annotation.sentence_id)
            .subquery()
        )

    def current_annotations(self, project_id: int, upto_id: int) -> list[LogRow]:
        latest = self._current(project_id, upto_id)
        query = (
            select(
                Annotation.id,
                Annotation.sentence_id,
                Annotation.user_id,
                Annotation.status,
                Annotation.tags,
                Annotation.supersedes_id,
                Sentence.tokens,
                Sentence.columns,
            )  # fmt: skip
            .join(latest, latest.c.aid == Annotation.id)
            .join(Sentence, Sentence.id == Annotation.sentence_id)
            .order_by(Annotation.id)
        )
        with read_transaction(self.engine) as conn:
            return [LogRow(*row) for row in conn.execute(query)]

    def current_labels(self, project_id: int, upto_id: int) -> list[tuple[int, int]]:
        latest = self._current(project_id, upto_id)
        query = (
            select(Annotation.id, Annotation.sentence_id)
            .join(latest, latest.c.aid == Annotation.id)
            .order_by(Annotation.id)
        )
        with read_transaction(self.engine) as conn:
            return [(int(a), int(s)) for a, s in conn.execute(query)]

    def retractions(self, project_id: int) -> list[tuple[int, int]]:
        target = aliased(Annotation)
        query = (
            select(Annotation.supersedes_id, Annotation.id)
            .join(target, target.id == Annotation.supersedes_id)
            .where(
                Annotation.project_id == project_id,
                Annotation.status == "undone",
                target.status == "submitted",
            )
            .order_by(Annotation.id)
        )
        with read_transaction(self.engine) as conn:
            return [(int(t), int(u)) for t, u in conn.execute(query)]

    def pool_ids(self, project_id: int) -> list[int]:
        query = (
            select(Sentence.id)
            .where(in_project(project_id), Sentence.split == "pool")
            .order_by(Sentence.id)
        )
        with read_transaction(self.engine) as conn:
            return list(conn.execute(query).scalars())

    def pool_sentences(self, ids: Sequence[int]) -> list[PoolSentence]:
        found = repo.get_sentences(self.engine, ids)
        return [PoolSentence(s.id, list(s.tokens), dict(s.columns)) for s in found]

    def checkpoints(self, project_id: int) -> list[CheckpointMeta]:
        return [
            CheckpointMeta(c.id, c.last_annotation_id or 0, dict(c.info))
            for c in repo.list_checkpoints(self.engine, project_id)
        ]

    def checkpoint_state(self, checkpoint_id: int) -> bytes:
        state = repo.get_checkpoint(self.engine, checkpoint_id).state
        assert state is not None
        return state

    def save_checkpoint(
        self, project_id: int, state: bytes, last_annotation_id: int, info: dict[str, Any]
    ) -> int:
        return repo.save_checkpoint(self.engine, project_id, state, last_annotation_id, info)

    def submit(
        self, sentence_id: int, annotator_id: int, tags: Sequence[str], seconds: float | None
    ) -> int:
        return repo.submit_annotation(self.engine, sentence_id, annotator_id, tags, seconds=seconds)

    def skip(self, sentence_id: int, annotator_id: int) -> int:
        return repo.skip(self.engine, sentence_id, annotator_id)

    def undo(self, project_id: int, annotator_id: int, lease_ttl: float) -> tuple[int, int] | None:
        done = repo.undo_last(self.engine, project_id, annotator_id, lease_ttl=lease_ttl)
        return None if done is None else (done.undo_id, done.sentence_id)

    def lease(
        self,
        project_id: int,
        annotator_id: int,
        ranked_ids: Iterable[int] | None,
        ttl: float,
        n: int,
    ) -> list[int]:
        ranked = None if ranked_ids is None else list(ranked_ids)
        if n == 1:
            got = retry_busy(
                lambda: repo.lease_next(
                    self.engine, project_id, annotator_id, ranked, ttl=ttl, busy_ms=BUSY_TRY_MS
                ),
                "lease",
            )
            return [] if got is None else [got]
        return retry_busy(
            lambda: self._lease_many(project_id, annotator_id, ranked, ttl, n), "lease"
        )

    def _lease_many(
        self, project_id: int, annotator_id: int, ranked: list[int] | None, ttl: float, n: int
    ) -> list[int]:
        """Several leases in one write transaction: the annotator's live ones first, then the
        first free of ``ranked`` (or of the pool in id order). ``take_lease`` is an upsert that
        never overwrites another annotator's live lease, so concurrent callers cannot collide."""
        now = utcnow()
        with write_transaction(self.engine, busy_ms=BUSY_TRY_MS) as conn:
            project_settings(conn, project_id)  # NotFoundError for an unknown project
            own = conn.execute(
                select(Lease.sentence_id)
                .join(Sentence, Sentence.id == Lease.sentence_id)
                .where(
                    Lease.project_id == project_id,
                    Lease.user_id == annotator_id,
                    Lease.expires_at > now,
                    available(project_id, annotator_id, now),
                )
                .order_by(Lease.leased_at, Lease.sentence_id)
            ).scalars()
            out: list[int] = []
            for sid in own:
                if len(out) < n and take_lease(conn, project_id, sid, annotator_id, now, ttl):
                    out.append(sid)
            free = select(Sentence.id).where(available(project_id, annotator_id, now))
            if ranked is None:
                ranked = list(conn.execute(free.order_by(Sentence.id).limit(4 * n)).scalars())
            for start in range(0, len(ranked), _CHUNK):
                if len(out) >= n:
                    break
                chunk = ranked[start : start + _CHUNK]
                ok = set(conn.execute(free.where(Sentence.id.in_(chunk))).scalars())
                for sid in chunk:
                    if len(out) >= n:
                        break
                    fresh = sid in ok and sid not in out
                    if fresh and take_lease(conn, project_id, sid, annotator_id, now, ttl):
                        out.append(sid)
            return out

    def log_predictions(self, project_id: int, rows: Sequence[PredictionRow]) -> None:
        repo.log_predictions(
            self.engine,
            [
                repo.PredictionRecord(
                    r.sentence_id,
                    r.model_version,
                    r.tags,
                    r.confidences,
                    r.strategy,
                    r.score,
                    r.user_id,
                    keys=r.keys,
                )  # fmt: skip
                for r in rows
            ],
        )

    def calibration_keys(self, project_id: int) -> list[tuple[list[float], list[bool]]]:
        return repo.calibration_keys(self.engine, project_id)


def open_session(
    database: str | Engine, project_id: int, *, config: LiveConfig | None = None, **overrides: Any
) -> ProjectSession:
    """The process's live session of a project (built on first use, then shared).

    ``database`` is a URL (opened and migrated on first use) or an engine; sessions are keyed by
    that URL string or engine object and the project id.
    """

    def factory() -> ProjectSession:
        engine = open_database(database) if isinstance(database, str) else database
        return ProjectSession(SqlStore(engine), project_id, config=config, **overrides)

    return get_session(database, project_id, factory)
