"""A project's word clusters (issue 24): learned once from its pool text, stored as JSON, and
the live model's features from then on (``cwal.live.replay.LearnerSpec``, ``PoolCache``).

The defined moment: an import that leaves the project's pool with enough text
(``cwal.features.clusters.MIN_TOKENS``) while the project has no annotation yet and no clusters.
After the first annotation they never change (a later import keeps the old clusters, or none),
so every process and every rebuild from the label log builds the same features. The
``pool_clusters`` setting turns them off (None: on for the ``ner`` template, off for ``chunk``,
as measured by bench/live_clusters.py); a change of it that turns them on or off bumps the
``labels_revision``, so every process rebuilds its model from the log with the new features.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from cwal.features.clusters import MIN_TOKENS, WordClusters
from db.engine import read_transaction, write_transaction
from db.models import Annotation, ProjectClusters, utcnow
from db.repository.projects import clusters_enabled
from db.repository.sentences import iter_sentences

__all__ = ["clusters_enabled", "learn_pool_clusters", "load_clusters"]


def load_clusters(engine: Engine, project_id: int) -> WordClusters | None:
    """The project's stored clusters (None: none were learned)."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(ProjectClusters.words, ProjectClusters.ids, ProjectClusters.sizes).where(
                ProjectClusters.project_id == project_id
            )
        ).first()
    if row is None:
        return None
    return WordClusters([str(w) for w in row.words], row.ids, row.sizes)


def learn_pool_clusters(engine: Engine, project_id: int, settings: Mapping[str, Any]) -> bool:
    """Learn and store the project's clusters from its pool text when it may still get them (on,
    none stored, no annotation); True when it stored them."""
    if not clusters_enabled(settings):
        return False
    with read_transaction(engine) as conn:
        if (
            conn.execute(
                select(ProjectClusters.project_id).where(ProjectClusters.project_id == project_id)
            ).first()
            is not None
        ):
            return False
        if _labeled(conn, project_id):
            return False
    texts = [list(s.tokens) for s in iter_sentences(engine, project_id, "pool")]
    n_tokens = sum(map(len, texts))
    if n_tokens < MIN_TOKENS:
        return False
    from cwal.features import clusters

    found = clusters.learn(texts)
    if found is None:
        return False
    try:
        with write_transaction(engine) as conn:
            if _labeled(conn, project_id):  # labeled while learning: the model runs without
                return False
            conn.execute(
                insert(ProjectClusters).values(
                    project_id=project_id, sizes=list(found.sizes), words=found.words,
                    ids=found.ids.tolist(), n_sentences=len(texts), n_tokens=n_tokens,
                    created_at=utcnow(),
                )
            )  # fmt: skip
    except IntegrityError:  # another process stored them first: theirs are the project's
        return False
    return True


def _labeled(conn: Any, project_id: int) -> bool:
    return (
        conn.execute(select(Annotation.id).where(Annotation.project_id == project_id).limit(1))
        .first() is not None
    )  # fmt: skip
