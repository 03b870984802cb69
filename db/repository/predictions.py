"""The prediction log: what a model version predicted for a sentence, with per-token confidences,
and when it was served. It is the record behind calibration charts and learning curves."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, insert, select

from db.engine import read_transaction, write_transaction
from db.models import Annotation, Prediction, Sentence
from db.repository.base import InvalidValueError, NotFoundError, check_time
from db.repository.state import current_annotation_ids

if TYPE_CHECKING:  # pandas is imported by the functions that build frames
    import pandas as pd


@dataclass(frozen=True)
class PredictionRecord:
    """One prediction to log (``served_at`` None: now)."""

    sentence_id: int
    model_version: int
    tags: Sequence[str]
    confidences: Sequence[float]
    strategy: str
    score: float | None = None
    user_id: int | None = None
    served_at: datetime | None = None
    keys: Sequence[float] | None = None  # each token's Delta margin (the calibration record)


def _row(record: PredictionRecord, project_id: int, n_tokens: int) -> dict:
    tags = list(record.tags)
    if len(tags) != n_tokens:
        raise InvalidValueError(
            f"sentence {record.sentence_id}: {len(tags)} predicted tags for {n_tokens} tokens"
        )
    conf = [float(c) for c in record.confidences]
    if not all(isinstance(t, str) for t in tags):
        raise InvalidValueError("predicted tags must be strings")
    if len(conf) != len(tags):
        raise InvalidValueError(f"{len(conf)} confidences for {len(tags)} predicted tags")
    if not all(math.isfinite(c) for c in conf):
        raise InvalidValueError("confidences must be finite numbers")
    score = None if record.score is None else float(record.score)
    if score is not None and not math.isfinite(score):
        raise InvalidValueError("score must be a finite number")
    keys = None if record.keys is None else [float(k) for k in record.keys]
    if keys is not None and (len(keys) != len(tags) or not all(math.isfinite(k) for k in keys)):
        raise InvalidValueError("keys must be one finite number per predicted tag")
    if not isinstance(record.strategy, str) or not 0 < len(record.strategy) <= 64:
        raise InvalidValueError("strategy must be a name of 1..64 characters")
    return {
        "project_id": project_id,
        "sentence_id": record.sentence_id,
        "user_id": record.user_id,
        "model_version": int(record.model_version),
        "tags": tags,
        "confidences": conf,
        "keys": keys,
        "score": score,
        "strategy": record.strategy,
        "served_at": check_time(record.served_at),
    }


def _projects_of(conn: Connection, sentence_ids: set[int]) -> dict[int, tuple[int, int]]:
    """``sentence_id -> (project_id, number of tokens)``."""
    found: dict[int, tuple[int, int]] = {}
    ids = sorted(sentence_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        query = select(Sentence.id, Sentence.project_id, Sentence.tokens).where(
            Sentence.id.in_(chunk)
        )
        found.update({row.id: (row.project_id, len(row.tokens)) for row in conn.execute(query)})
    missing = sentence_ids - found.keys()
    if missing:
        raise NotFoundError(f"no sentences with ids {sorted(missing)[:10]}")
    return found


def log_predictions(engine: Engine, records: Iterable[PredictionRecord]) -> int:
    """Append many predictions in one transaction; returns how many were stored."""
    records = list(records)
    if not records:
        return 0
    with write_transaction(engine) as conn:
        projects = _projects_of(conn, {r.sentence_id for r in records})
        rows = [_row(r, *projects[r.sentence_id]) for r in records]
        conn.execute(insert(Prediction), rows)
    return len(rows)


def log_prediction(
    engine: Engine,
    sentence_id: int,
    model_version: int,
    tags: Sequence[str],
    confidences: Sequence[float],
    strategy: str,
    *,
    score: float | None = None,
    user_id: int | None = None,
    served_at: datetime | None = None,
) -> int:
    """Append one prediction (e.g. the pre-annotation an annotator was shown); returns its id."""
    record = PredictionRecord(
        sentence_id, model_version, tags, confidences, strategy, score, user_id, served_at
    )
    with write_transaction(engine) as conn:
        row = _row(record, *_projects_of(conn, {sentence_id})[sentence_id])
        return conn.execute(insert(Prediction).values(**row).returning(Prediction.id)).scalar_one()


_LOG_COLUMNS = (
    Prediction.id,
    Prediction.sentence_id,
    Prediction.user_id,
    Prediction.model_version,
    Prediction.strategy,
    Prediction.served_at,
    Prediction.tags,
    Prediction.confidences,
    Prediction.score,
)
_LOG_NAMES = [c.key for c in _LOG_COLUMNS]


def prediction_log(
    engine: Engine,
    project_id: int,
    *,
    after_id: int = 0,
    model_version: int | None = None,
    strategy: str | None = None,
) -> pd.DataFrame:
    """The project's prediction log as a DataFrame, in id order (one row per prediction;
    ``tags`` and ``confidences`` are lists)."""
    import pandas as pd

    query = select(*_LOG_COLUMNS).where(
        Prediction.project_id == project_id, Prediction.id > after_id
    )
    if model_version is not None:
        query = query.where(Prediction.model_version == model_version)
    if strategy is not None:
        query = query.where(Prediction.strategy == strategy)
    with read_transaction(engine) as conn:
        rows = conn.execute(query.order_by(Prediction.id)).all()
    return pd.DataFrame([tuple(r) for r in rows], columns=_LOG_NAMES)


def calibration_frame(engine: Engine, project_id: int, *, per_token: bool = False) -> pd.DataFrame:
    """Predictions of labeled sentences next to the sentence's current annotation (the truth).

    One row per prediction with ``tags``, ``confidences`` and ``truth`` lists; or, with
    ``per_token``, one row per token with ``confidence``, ``predicted``, ``truth`` and
    ``correct`` — what a reliability diagram bins.
    """
    import pandas as pd

    current = current_annotation_ids(project_id).subquery()
    query = (
        select(*_LOG_COLUMNS, Annotation.tags.label("truth"), Annotation.id.label("annotation_id"))
        .join(current, current.c.sentence_id == Prediction.sentence_id)
        .join(Annotation, Annotation.id == current.c.annotation_id)
        .where(Prediction.project_id == project_id)
        .order_by(Prediction.id)
    )
    with read_transaction(engine) as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=[*_LOG_NAMES, "truth", "annotation_id"])
    if not per_token:
        return frame
    tokens = [
        (r.id, r.sentence_id, r.model_version, r.strategy, p, conf, pred, gold, pred == gold)
        for r in frame.itertuples(index=False)
        for p, (conf, pred, gold) in enumerate(zip(r.confidences, r.tags, r.truth, strict=False))
    ]
    names = ["prediction_id", "sentence_id", "model_version", "strategy", "position"]
    return pd.DataFrame(tokens, columns=[*names, "confidence", "predicted", "truth", "correct"])


def calibration_keys(
    engine: Engine, project_id: int
) -> list[tuple[list[float], list[bool], list[str]]]:
    """The prequential record, oldest first: each logged prediction with keys whose sentence has
    a current label, as (its tokens' keys, whether each predicted tag equals that label, the
    predicted tags)."""
    current = current_annotation_ids(project_id).subquery()
    query = (
        select(Prediction.keys, Prediction.tags, Annotation.tags)
        .join(current, current.c.sentence_id == Prediction.sentence_id)
        .join(Annotation, Annotation.id == current.c.annotation_id)
        .where(Prediction.project_id == project_id, Prediction.keys.is_not(None))
        .order_by(Prediction.id)
    )
    with read_transaction(engine) as conn:
        rows = conn.execute(query).all()
    return [
        (list(keys), [p == t for p, t in zip(pred, truth, strict=False)], list(pred))
        for keys, pred, truth in rows
        if len(keys) == len(pred) == len(truth)
    ]
