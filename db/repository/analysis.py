"""Queries behind the lead pages (dashboard, error analysis, review), and the model views built
from them with ``cwal.reports``.

The model a lead sees is the live one, rebuilt from the store exactly as the live service does
(newest valid checkpoint plus the later rows replayed). Its views are cached per process, keyed by
the project's newest annotation and checkpoint ids (a checkpoint's view by its id): both only ever grow, so a cached
view is never stale, and template features of each sentence are extracted once per process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine, func, select

from cwal import reports
from cwal.live import CheckpointMeta, LogRow, PoolSentence
from cwal.live.replay import valid_base
from cwal.reports.memo import Memo
from db.engine import read_transaction
from db.models import Annotation, Prediction, Sentence
from db.repository.checkpoints import get_checkpoint, list_checkpoints
from db.repository.history import (
    annotation_history,
    annotations_after,
    current_annotations,
    last_annotation_id,
)
from db.repository.history import retractions as retraction_pairs
from db.repository.predictions import calibration_frame
from db.repository.projects import get_project
from db.repository.state import labeled_ids
from db.repository.stats import annotation_log

POOL_SAMPLE = 400  # unlabeled pool sentences the current model is read on
LABELED_SAMPLE = 300  # labeled sentences for entropy, plus up to this many disputed ones
CURVE_CHECKPOINTS = 8  # checkpoints evaluated for the learning curve (plus the newest)
# Annotations a dashboard or error-analysis view may lag behind while the current one is
# computed in the background (the review page, where a lead fixes labels, is always fresh).
PAGE_LAG = 25


_VIEWS = Memo(12)
_POINTS = Memo(512)
_FEATURES = Memo(16)


def clear_cache() -> None:
    """Forget every cached view and feature (tests; a process that changed sentences)."""
    for memo in (_VIEWS, _POINTS, _FEATURES):
        memo.clear()


# ----- queries ---------------------------------------------------------------------------------
def label_log(engine: Engine, project_id: int) -> pd.DataFrame:
    """Every annotation row of a project in id order with its sentence's length: ``id``,
    ``sentence_id``, ``user_id``, ``status``, ``supersedes_id``, ``n_tokens``."""
    query = (
        select(
            Annotation.id,
            Annotation.sentence_id,
            Annotation.user_id,
            Annotation.status,
            Annotation.supersedes_id,
            Sentence.tokens,
        )
        .join(Sentence, Sentence.id == Annotation.sentence_id)
        .where(Annotation.project_id == project_id)
        .order_by(Annotation.id)
    )
    with read_transaction(engine) as conn:
        rows = [(*r[:5], len(r[5])) for r in conn.execute(query)]
    cols = ["id", "sentence_id", "user_id", "status", "supersedes_id", "n_tokens"]
    return pd.DataFrame(rows, columns=cols)


def unlabeled_pool_ids(engine: Engine, project_id: int) -> list[int]:
    """Ids of pool sentences without a current annotation (leased ones included), ascending."""
    query = (
        select(Sentence.id)
        .where(
            Sentence.project_id == project_id,
            Sentence.split == "pool",
            Sentence.id.not_in(labeled_ids(project_id)),
        )
        .order_by(Sentence.id)
    )
    with read_transaction(engine) as conn:
        return list(conn.execute(query).scalars())


def split_sentences(
    engine: Engine, project_id: int, split: str, ids: list[int] | None = None
) -> list[tuple[PoolSentence, list[str] | None]]:
    """Sentences of one split (or only ``ids``) as ``(PoolSentence, gold tags)``, id order."""
    query = select(Sentence.id, Sentence.tokens, Sentence.columns, Sentence.gold_tags).where(
        Sentence.project_id == project_id, Sentence.split == split
    )
    out: list[tuple[PoolSentence, list[str] | None]] = []
    chunks = [None] if ids is None else [ids[i : i + 500] for i in range(0, len(ids), 500)]
    with read_transaction(engine) as conn:
        for chunk in chunks:
            q = query if chunk is None else query.where(Sentence.id.in_(chunk))
            for sid, tokens, columns, gold in conn.execute(q.order_by(Sentence.id)):
                out.append((PoolSentence(sid, tokens, columns), gold))
    return out


def pool_sample_ids(engine: Engine, project_id: int) -> list[int]:
    """A fixed pseudo-random sample of the whole pool (seeded by the project id), ascending:
    the sentences each checkpoint's pool estimate is read on (those unlabeled at the time)."""
    query = select(Sentence.id).where(Sentence.project_id == project_id, Sentence.split == "pool")
    with read_transaction(engine) as conn:
        ids = np.array(sorted(conn.execute(query).scalars()), dtype=np.int64)
    return _sample(ids, POOL_SAMPLE, project_id)


def _sample(ids: np.ndarray | list[int], n: int, seed: int) -> list[int]:
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) <= n:
        return ids.tolist()
    rng = np.random.default_rng([seed, 8])
    return np.sort(rng.choice(ids, size=n, replace=False)).tolist()


@dataclass
class LogFrames:
    """The label and prediction logs as the charts read them."""

    labels: pd.DataFrame  # label_log
    annotations: pd.DataFrame  # the store's annotation_log (annotator, time, retracted)
    predictions: pd.DataFrame  # reports.prediction_tokens of the labeled predictions
    labels_given: pd.DataFrame  # reports.label_distribution of the current labels


def log_frames(engine: Engine, project_id: int, max_lag: int = 0) -> LogFrames:
    """The project's logs as frames (cached per newest annotation and prediction ids); with
    ``max_lag``, frames up to that many annotations old may be served while fresh ones are
    computed in the background (``refreshing`` tells)."""
    with read_transaction(engine) as conn:
        newest = conn.execute(
            select(func.max(Prediction.id)).where(Prediction.project_id == project_id)
        ).scalar_one()
    store, last = _store_key(engine, project_id), last_annotation_id(engine, project_id)
    key = ("logs", store, last, newest)
    make = lambda: _log_frames(engine, project_id)  # noqa: E731
    return _VIEWS.get_recent(("logs", store), last, key, make, max_lag)


def _log_frames(engine: Engine, project_id: int) -> LogFrames:
    return LogFrames(
        label_log(engine, project_id),
        annotation_log(engine, project_id),
        reports.prediction_tokens(calibration_frame(engine, project_id)),
        reports.label_distribution(
            (e.tags or [] for e in current_annotations(engine, project_id)),
            get_project(engine, project_id).settings.get("scheme") or "IOB2",
        ),
    )


# ----- the current model and what it says -----------------------------------------------------
def _features(engine: Engine, project_id: int, template: str) -> reports.FeatureCache:
    key = (_store_key(engine, project_id), template)
    return _FEATURES.get(key, lambda: reports.FeatureCache(template))


def _store_key(engine: Engine, project_id: int) -> tuple:
    """Names one project of one database across engines (its URL and creation time), so a
    cached view never outlives the store it was read from."""
    return (str(engine.url), project_id, get_project(engine, project_id).created_at)


def _model_key(engine: Engine, project_id: int) -> tuple:
    """What the live model is a function of: the newest annotation and the newest checkpoint
    (a consolidation swaps in a retrained model without a new annotation)."""
    checkpoints = list_checkpoints(engine, project_id)
    newest = checkpoints[-1].id if checkpoints else 0
    return (*_store_key(engine, project_id), last_annotation_id(engine, project_id), newest)


def current_model(engine: Engine, project_id: int) -> reports.ModelState:
    """The live model of the project (cached per newest annotation id)."""
    key = ("model", _model_key(engine, project_id))
    return _VIEWS.get(key, lambda: _rebuild(engine, project_id))


def _rebuild(engine: Engine, project_id: int) -> reports.ModelState:
    settings = get_project(engine, project_id).settings
    metas = [
        CheckpointMeta(c.id, c.last_annotation_id or 0, dict(c.info))
        for c in list_checkpoints(engine, project_id)
    ]
    base = valid_base(metas, retraction_pairs(engine, project_id))
    state = get_checkpoint(engine, base.id).state if base is not None else None
    x = base.last_annotation_id if base is not None else 0
    tail = [
        LogRow(
            e.id, e.sentence_id, e.user_id, e.status, e.tags, e.supersedes_id, e.tokens, e.columns
        )  # fmt: skip
        for e in annotations_after(engine, project_id, x)
    ]
    return reports.rebuild(settings, base, state, tail)


@dataclass
class ModelView:
    """The current model read on the unlabeled pool (a sample) and on labeled sentences."""

    state: reports.ModelState
    pool: pd.DataFrame  # token_frame of the unlabeled pool sample
    labeled: pd.DataFrame  # token_frame with given labels: disputed sentences + a sample
    tokens: dict[int, list[str]] = field(default_factory=dict)
    annotators: dict[int, str] = field(default_factory=dict)
    pool_sentences: int = 0
    labeled_sentences: int = 0
    eval_scores: dict[str, float] | None = None

    @property
    def pool_estimate(self) -> float:
        """Mean KD confidence on the pool sample: the accuracy the model expects there."""
        return float(self.pool["confidence"].mean()) if len(self.pool) else float("nan")


def model_view(engine: Engine, project_id: int, max_lag: int = 0) -> ModelView:
    """What the current model says about the pool and the labels (cached per annotation id);
    ``max_lag`` as in ``log_frames`` (``view.state.version`` names the model it shows)."""
    mkey = _model_key(engine, project_id)
    make = lambda: _view(engine, project_id)  # noqa: E731
    return _VIEWS.get_recent(("view", mkey[:-2]), mkey[-2], ("view", mkey), make, max_lag)


def _view(engine: Engine, project_id: int) -> ModelView:
    state = current_model(engine, project_id)
    settings = get_project(engine, project_id).settings
    cache = _features(engine, project_id, settings.get("feature_template", "chunk"))
    current = current_annotations(engine, project_id)
    empty = pd.DataFrame(columns=reports.TOKEN_COLUMNS)
    view = ModelView(
        state, empty, empty.reindex(columns=reports.TOKEN_COLUMNS + reports.GIVEN_COLUMNS)
    )
    view.annotators = {e.sentence_id: e.annotator for e in current}
    if not state.trained:
        return view
    seed = project_id * 1_000_003 + state.version
    pool_ids = _sample(unlabeled_pool_ids(engine, project_id), POOL_SAMPLE, seed)
    pool = [s for s, _ in split_sentences(engine, project_id, "pool", pool_ids)]
    if pool:
        view.pool = reports.token_frame(state, cache.encode(state.model, pool), pool, seed=seed)
    labeled = [PoolSentence(e.sentence_id, e.tokens, e.columns) for e in current if e.tokens]
    given = {e.sentence_id: e.tags for e in current if e.tokens}
    chosen = _disputed_and_sample(state, cache, labeled, given, seed)
    if chosen:
        enc = cache.encode(state.model, chosen)
        view.labeled = reports.token_frame(state, enc, chosen, given=given, seed=seed)
    evals = [(s, g) for s, g in split_sentences(engine, project_id, "eval") if g is not None]
    if evals:
        enc = cache.encode(state.model, [s for s, _ in evals])
        view.eval_scores = reports.evaluate(state, enc, [g for _, g in evals])
    view.tokens = {s.id: s.tokens for s in pool + chosen}
    view.pool_sentences, view.labeled_sentences = len(pool), len(labeled)
    return view


def _disputed_and_sample(
    state: reports.ModelState,
    cache: reports.FeatureCache,
    labeled: list[PoolSentence],
    given: dict[int, list[str]],
    seed: int,
) -> list[PoolSentence]:
    """Labeled sentences to read closely: the most disputed ones (largest score gap between
    the model's labeling and the human one, any token) plus a random sample, id order."""
    if not labeled:
        return []
    enc = cache.encode(state.model, labeled)
    gap = reports.disagreement(
        state.model, enc, reports.given_ids(state.model, [given[s.id] for s in labeled])
    )
    worst = np.maximum.reduceat(gap, enc.sent_offsets[:-1]) if len(gap) else np.zeros(0)
    disputed = [i for i in np.argsort(-worst, kind="stable") if worst[i] > 0][:LABELED_SAMPLE]
    sampled = _sample(np.arange(len(labeled)), LABELED_SAMPLE, seed)
    keep = sorted(set(int(i) for i in disputed) | set(sampled))
    return [labeled[i] for i in keep]


# ----- learning curve points ------------------------------------------------------------------
def curve_points(engine: Engine, project_id: int, max_lag: int = 0) -> pd.DataFrame:
    """One row per evaluated model: ``checkpoint_id`` (None: the current model), ``version``,
    ``sentences`` and ``words`` labeled, ``eval_f1`` and ``eval_accuracy`` (NaN without gold),
    ``pool_estimate`` (mean KD confidence on the pool sample unlabeled at the time). Up to
    ``CURVE_CHECKPOINTS + 1`` checkpoints, evenly spread; cached (and ``max_lag``) like the
    model view."""
    mkey = _model_key(engine, project_id)
    make = lambda: _curve_points(engine, project_id)  # noqa: E731
    return _VIEWS.get_recent(("curve", mkey[:-2]), mkey[-2], ("curve", mkey), make, max_lag)


def refreshing(engine: Engine, project_id: int) -> bool:
    """True while a newer view of the project is computed in the background (a page served
    one up to ``max_lag`` annotations old)."""
    store = _store_key(engine, project_id)
    return any(_VIEWS.refreshing((kind, store)) for kind in ("logs", "view", "curve"))


def wait_fresh(engine: Engine, project_id: int, timeout: float | None = None) -> None:
    """Block until the project's background refreshes have finished (tests, benchmarks)."""
    store = _store_key(engine, project_id)
    for kind in ("logs", "view", "curve"):
        _VIEWS.wait((kind, store), timeout)


def _curve_points(engine: Engine, project_id: int) -> pd.DataFrame:
    cols = ["checkpoint_id", "version", "sentences", "words", "eval_f1", "eval_accuracy"]
    cols.append("pool_estimate")
    log = log_frames(engine, project_id).labels
    metas = list_checkpoints(engine, project_id)
    if len(metas) > CURVE_CHECKPOINTS + 1:
        pick = np.linspace(0, len(metas) - 1, CURVE_CHECKPOINTS + 1).round().astype(int)
        metas = [metas[i] for i in sorted(set(pick.tolist()))]
    rows = [
        _POINTS.get(
            ("cp", _store_key(engine, project_id), c.id),
            lambda c=c: _checkpoint_point(engine, c, log),
        )
        for c in metas
    ]
    view = model_view(engine, project_id)
    if view.state.trained:
        at = int(log["id"].max()) if len(log) else 0
        amount = reports.labeled_amount(log, [at]).iloc[0]
        scores = view.eval_scores or {}
        rows.append(
            {
                "checkpoint_id": None,
                "version": view.state.version,
                "sentences": int(amount["sentences"]),
                "words": int(amount["words"]),
                "eval_f1": scores.get("f1", np.nan),
                "eval_accuracy": scores.get("accuracy", np.nan),
                "pool_estimate": view.pool_estimate,
            }
        )
    return pd.DataFrame(rows, columns=cols)


def _checkpoint_point(engine: Engine, meta: Any, log: pd.DataFrame) -> dict[str, Any]:
    project_id = meta.project_id
    settings = get_project(engine, project_id).settings
    x = meta.last_annotation_id or 0
    cp = get_checkpoint(engine, meta.id)
    state = reports.checkpoint_state(settings, CheckpointMeta(meta.id, x, dict(meta.info)),
                                     cp.state or b"")  # fmt: skip
    cache = _features(engine, project_id, settings.get("feature_template", "chunk"))
    amount = reports.labeled_amount(log, [x]).iloc[0]
    row: dict[str, Any] = {
        "checkpoint_id": meta.id,
        "version": state.version,
        "sentences": int(amount["sentences"]),
        "words": int(amount["words"]),
        "eval_f1": np.nan,
        "eval_accuracy": np.nan,
        "pool_estimate": meta.info.get("pool_estimate", np.nan),
    }
    evals = [(s, g) for s, g in split_sentences(engine, project_id, "eval") if g is not None]
    if evals:
        enc = cache.encode(state.model, [s for s, _ in evals])
        scores = reports.evaluate(state, enc, [g for _, g in evals]) or {}
        row["eval_f1"] = scores.get("f1", np.nan)
        row["eval_accuracy"] = scores.get("accuracy", np.nan)
    if "pool_estimate" not in meta.info:
        then = log[log["id"] <= x]
        labeled = reports.labeled_sentences(then)
        ids = [i for i in pool_sample_ids(engine, project_id) if i not in labeled]
        pool = [s for s, _ in split_sentences(engine, project_id, "pool", ids)]
        if pool and state.trained:
            enc = cache.encode(state.model, pool)
            frame = reports.token_frame(state, enc, pool, seed=meta.id)
            row["pool_estimate"] = float(frame["confidence"].mean())
    return row


def current_label(engine: Engine, sentence_id: int) -> list[str] | None:
    """The sentence's current tags (its newest submission no undo retracts), or None."""
    history = annotation_history(engine, sentence_id)
    undone = {e.supersedes_id for e in history if e.status == "undone"}
    live = [e for e in history if e.status == "submitted" and e.id not in undone]
    return live[-1].tags if live else None


@dataclass
class OpenSentence:
    """A sentence as the review editor opens it: its current labels (else the model's
    prediction) and per-token model confidence (in the given label when labeled)."""

    id: int
    tokens: list[str]
    tags: list[str] | None
    confidence: list[float] | None
    labeled: bool


def open_sentence(
    engine: Engine, project_id: int, view: ModelView, sentence_id: object
) -> OpenSentence | None:
    """The project's sentence ``sentence_id`` for the editor (None: not one of its sentences)."""
    if not isinstance(sentence_id, int):
        return None
    found = split_sentences(engine, project_id, "pool", [sentence_id])
    if not found:
        return None
    tokens = found[0][0].tokens
    given = current_label(engine, sentence_id)
    frame = view.labeled if given is not None else view.pool
    rows = frame[frame["sentence_id"] == sentence_id] if len(frame) else frame
    tags = given or (rows["predicted"].tolist() if len(rows) else None)
    column = "p_given" if given is not None else "confidence"
    conf = rows[column].tolist() if len(rows) == len(tokens) and len(rows) else None
    return OpenSentence(sentence_id, tokens, tags, conf, given is not None)
