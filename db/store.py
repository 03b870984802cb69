"""The live service's store: ``cwal.live.Store`` implemented over the repository.

``live_session(engine, project_id)`` is the process's one ``ProjectSession`` per project (kept by
``cwal.live.registry``): the annotators' and the lead pages' model. Every query is the
repository's; this class only translates between its records and the live service's.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from cwal import reports
from cwal.confidence.calibration import MarginMap
from cwal.features.clusters import WordClusters
from cwal.live import (
    CheckpointMeta,
    LogRow,
    PoolSentence,
    PredictionRow,
    ProjectSession,
    drop_session,
    get_session,
)
from cwal.live.recorder import generations as consolidations
from cwal.live.replay import valid_base
from db import repository as repo
from db.repository.base import BUSY_TRY_MS, retry_busy
from db.repository.views import idle_gate

LOG = logging.getLogger(__name__)
C = TypeVar("C", bound=type)


def _row(e: repo.AnnotationEvent) -> LogRow:
    return LogRow(e.id, e.sentence_id, e.user_id, e.status, e.tags, e.supersedes_id, e.tokens,
                  e.columns)  # fmt: skip


def _store_errors(cls: C) -> C:
    """Every public method of ``cls`` raises ``repo.StoreFailedError`` (its message free of
    SQL; the driver's error in the server log and as the cause) where the database failed, so
    that callers above db/ handle store errors without knowing SQLAlchemy."""

    def translated(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except SQLAlchemyError as exc:
                LOG.exception("the store's %s failed", method.__name__)
                raise repo.StoreFailedError(FAILED) from exc

        return call

    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, translated(member))
    return cls


FAILED = "the database could not do it (the details are in the server log)"


@_store_errors
class SqlStore:
    """``cwal.live.Store`` over one engine (SQLite or PostgreSQL); every call commits."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._revision: dict[int, int] = {}  # labels_revision of the settings a session read
        self._pool: dict[int, tuple[tuple[int, int, int], list[int]]] = {}  # signature, ids

    def settings(self, project_id: int) -> dict[str, Any]:
        """The project's settings; the store remembers their label revision, so the session
        built from them uses and writes only checkpoints of that label configuration."""
        settings = repo.get_project(self.engine, project_id).settings
        self._revision[project_id] = int(settings.get("labels_revision", 0))
        return settings

    def clusters(self, project_id: int, settings: dict[str, Any]) -> WordClusters | None:
        """The project's pool word clusters when its settings use them (db.repository.clusters)."""
        if not repo.clusters_enabled(settings):
            return None
        return repo.load_clusters(self.engine, project_id)

    def labels_revision(self, project_id: int) -> int:
        if project_id not in self._revision:
            self.settings(project_id)
        return self._revision[project_id]

    def log_after(self, project_id: int, after_id: int) -> list[LogRow]:
        return [_row(e) for e in repo.annotations_after(self.engine, project_id, after_id)]

    def current_annotations(self, project_id: int, upto_id: int) -> list[LogRow]:
        rows = repo.current_annotations(self.engine, project_id, upto_id=upto_id, order="learned")
        return [_row(e) for e in rows]

    def current_labels(self, project_id: int, upto_id: int) -> list[tuple[int, int]]:
        return repo.current_label_ids(self.engine, project_id, upto_id)

    def retractions(self, project_id: int) -> list[tuple[int, int]]:
        return repo.retractions(self.engine, project_id)

    def pool_ids(self, project_id: int) -> list[int]:
        """Read again only when the project's sentences changed (the scorer asks before every
        ranking; fetching every id of a big pool each time cost more than the ranking)."""
        signature = repo.sentences_signature(self.engine, project_id)
        cached = self._pool.get(project_id)
        if cached is None or cached[0] != signature:
            cached = self._pool[project_id] = (
                signature,
                repo.sentence_ids(self.engine, project_id, "pool"),
            )
        return list(cached[1])

    def pool_sentences(self, ids: Sequence[int]) -> list[PoolSentence]:
        found = repo.get_sentences(self.engine, ids)
        return [PoolSentence(s.id, list(s.tokens), dict(s.columns)) for s in found]

    def checkpoints(self, project_id: int) -> list[CheckpointMeta]:
        return [
            CheckpointMeta(c.id, c.last_annotation_id or 0, dict(c.info))
            for c in repo.list_checkpoints(
                self.engine, project_id, self.labels_revision(project_id)
            )
        ]

    def checkpoint_state(self, checkpoint_id: int) -> bytes:
        state = repo.get_checkpoint(self.engine, checkpoint_id).state
        assert state is not None
        return state

    def save_checkpoint(
        self, project_id: int, state: bytes, last_annotation_id: int, info: dict[str, Any]
    ) -> int:
        info = {**info, "labels_revision": self.labels_revision(project_id)}
        return repo.save_checkpoint(self.engine, project_id, state, last_annotation_id, info)

    def submit(
        self, sentence_id: int, annotator_id: int, tags: Sequence[str], seconds: float | None
    ) -> int:
        # an annotator's late answer (lease expired, someone else labeled it) becomes a version
        return repo.submit_annotation(
            self.engine, sentence_id, annotator_id, tags, seconds=seconds, late_as_version=True
        )

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
        return retry_busy(
            lambda: repo.lease_many(
                self.engine, project_id, annotator_id, n, ranked, ttl=ttl, busy_ms=BUSY_TRY_MS
            ),
            "lease",
        )

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

    def calibration_keys(self, project_id: int) -> list[tuple[list[float], list[bool], list[str]]]:
        return repo.calibration_keys(self.engine, project_id)


def live_session(
    engine: Engine, project_id: int, factory: Callable[[], ProjectSession] | None = None
) -> ProjectSession:
    """The one live session of a project in this process: annotators are served by it and the
    lead pages read its model (``db.repository.analysis``), so a project never has two models in
    one process. Built on first use by ``factory()`` (default: over ``engine``, its idle work
    waiting for the pages, ``views.idle_gate``). After a lead renamed, merged or deleted types
    (in any process) a new session is built from the rewritten log and the old one closed.
    Sessions are kept per engine object: a process holds one engine per database (the app's
    ``ui.state.engine``), and every caller passes that one."""
    revision = int(repo.get_project(engine, project_id).settings.get("labels_revision", 0))
    if factory is None:
        factory = lambda: ProjectSession(SqlStore(engine), project_id, idle_gate=idle_gate)  # noqa: E731
    return get_session(engine, project_id, factory, revision)


def close_session(engine: Engine, project_id: int) -> None:
    """Close the project's live session; the next ``live_session`` opens a fresh one (after new
    files or new settings, which a running session does not pick up)."""
    drop_session(engine, project_id)


def standalone_model(engine: Engine, project_id: int) -> reports.ModelState:
    """The project's live model for a process that serves no one (the CLI's ``predict``): built
    once, exactly as a session builds it (newest valid checkpoint plus the later rows
    replayed), with the calibration map of the stored prequential record. The web app never
    calls this: its lead pages read the session's model (``live_session``)."""
    store = SqlStore(engine)
    base = valid_base(store.checkpoints(project_id), store.retractions(project_id))
    state = store.checkpoint_state(base.id) if base is not None else None
    tail = store.log_after(project_id, base.last_annotation_id if base is not None else 0)
    generations = consolidations(store.checkpoints(project_id), base) if base else ()
    calibration = MarginMap.fit(store.calibration_keys(project_id), consolidated=generations)
    settings = store.settings(project_id)
    clusters = store.clusters(project_id, settings)
    return reports.rebuild(settings, base, state, tail, calibration, clusters=clusters)
