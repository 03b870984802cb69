"""Queries behind the lead pages (dashboard, error analysis, review), and the model views built
from them with ``cwal.reports``.

The model a lead sees is the live one, rebuilt from the store exactly as the live service does
(newest valid checkpoint plus the later rows replayed). What it says is read in two parts, each
cached per process under the key ``views.model_key`` names: the pool view (a sample of the
unlabeled pool and the evaluation split: all the dashboard shows) and the model view (the pool view
plus the labeled sentences it disputes, which needs every labeled sentence's features: error
analysis and review). Template features of each sentence are extracted once per process. The
learning curve is in ``db.repository.learning_curve``; ``db.repository.warm`` computes a
project's views ahead of its first lead page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sqlalchemy import Engine, func, select

from cwal import reports
from cwal.confidence.calibration import MarginMap
from cwal.live import CheckpointMeta, LogRow, PoolSentence
from cwal.live.replay import valid_base
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
from db.repository.predictions import calibration_frame, calibration_keys
from db.repository.projects import get_project
from db.repository.state import current_annotation_ids, in_project, labeled_ids
from db.repository.stats import annotation_log
from db.repository.views import VIEWS, feature_cache, model_key, project_key, yield_to_pages
from db.repository.views import clear_cache as clear_cache  # re-exported for pages and tests
from db.repository.views import refreshing as refreshing
from db.repository.views import wait_fresh as wait_fresh

POOL_SAMPLE = 400  # unlabeled pool sentences the current model is read on
LABELED_SAMPLE = 300  # labeled sentences for entropy, plus up to this many disputed ones
# Annotations a dashboard or error-analysis view may lag behind while the current one is
# computed in the background (the review page, where a lead fixes labels, is always fresh).
PAGE_LAG = 25


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
            in_project(project_id),
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
        in_project(project_id), Sentence.split == split
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
    query = select(Sentence.id).where(in_project(project_id), Sentence.split == "pool")
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


def _log_key(engine: Engine, project_id: int) -> tuple[tuple, int, int | None]:
    """The project key, newest annotation id and newest prediction id: what the logs are."""
    with read_transaction(engine) as conn:
        newest = conn.execute(
            select(func.max(Prediction.id)).where(Prediction.project_id == project_id)
        ).scalar_one()
    return project_key(engine, project_id), last_annotation_id(engine, project_id), newest


def log_frames(engine: Engine, project_id: int, max_lag: int = 0) -> LogFrames:
    """The project's logs as frames (cached per newest annotation and prediction ids); with
    ``max_lag``, frames up to that many annotations old may be served while fresh ones are
    computed in the background (``refreshing`` tells)."""
    project, last, newest = _log_key(engine, project_id)
    make = lambda: _log_frames(engine, project_id)  # noqa: E731
    return VIEWS.get_recent(("logs", project), last, ("logs", project, last, newest), make, max_lag)


def prediction_log(engine: Engine, project_id: int, max_lag: int = 0) -> pd.DataFrame:
    """``reports.prediction_tokens`` of the labeled sentences' served predictions (the part of
    ``log_frames`` error analysis reads), cached and served late like ``log_frames``."""
    project, last, newest = _log_key(engine, project_id)
    key = ("predictions", project, last, newest)
    make = lambda: reports.prediction_tokens(calibration_frame(engine, project_id))  # noqa: E731
    return VIEWS.get_recent(("predictions", project), last, key, make, max_lag)


def _log_frames(engine: Engine, project_id: int) -> LogFrames:
    return LogFrames(
        label_log(engine, project_id),
        annotation_log(engine, project_id),
        prediction_log(engine, project_id),
        reports.label_distribution(
            current_tags(engine, project_id),
            get_project(engine, project_id).settings.get("scheme") or "IOB2",
        ),
    )


def current_tags(engine: Engine, project_id: int) -> list[list[str]]:
    """The tags of every current annotation (newest non-retracted submission), sentence id
    order: what the label distribution counts, without the sentences' tokens."""
    current = current_annotation_ids(project_id).subquery()
    query = (
        select(Annotation.tags)
        .join(current, current.c.annotation_id == Annotation.id)
        .order_by(current.c.sentence_id)
    )
    with read_transaction(engine) as conn:
        return [tags or [] for tags in conn.execute(query).scalars()]


# ----- the current model and what it says -----------------------------------------------------
def current_model(engine: Engine, project_id: int) -> reports.ModelState:
    """The live model of the project (cached per ``views.model_key``)."""
    key = ("model", model_key(engine, project_id))
    return VIEWS.get(key, lambda: _rebuild(engine, project_id))


def _rebuild(engine: Engine, project_id: int) -> reports.ModelState:
    settings = get_project(engine, project_id).settings
    metas = [
        CheckpointMeta(c.id, c.last_annotation_id or 0, dict(c.info))
        for c in list_checkpoints(engine, project_id, settings.get("labels_revision", 0))
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
    calibration = MarginMap.fit(calibration_keys(engine, project_id))
    return reports.rebuild(settings, base, state, tail, calibration)


@dataclass
class PoolView:
    """The current model read on a sample of the unlabeled pool and on the evaluation split."""

    state: reports.ModelState
    pool: pd.DataFrame  # token_frame of the unlabeled pool sample
    tokens: dict[int, list[str]] = field(default_factory=dict)  # of the sentences read
    pool_sentences: int = 0
    eval_scores: dict[str, float] | None = None

    @property
    def pool_estimate(self) -> float:
        """Mean calibrated confidence on the pool sample: the accuracy the model expects there
        (``ModelState.expected_accuracy``)."""
        return self.state.expected_accuracy(self.pool["delta"].to_numpy())

    @property
    def pool_interval(self) -> tuple[float, float]:
        """A 95% interval of ``pool_estimate`` (the calibration map's uncertainty)."""
        return self.state.expected_interval(self.pool["delta"].to_numpy())

    @property
    def calibration_labels(self) -> int:
        """How many labeled sentences the calibration map rests on."""
        return self.state.calibration.labels


def _given_frame() -> pd.DataFrame:
    return pd.DataFrame(columns=reports.TOKEN_COLUMNS + reports.GIVEN_COLUMNS)


@dataclass
class ModelView(PoolView):
    """The pool view plus the model read on labeled sentences (the disputed ones and a sample)."""

    labeled: pd.DataFrame = field(default_factory=_given_frame)  # token_frame with given labels
    annotators: dict[int, str] = field(default_factory=dict)  # sentence id -> current annotator
    labeled_sentences: int = 0


def pool_view(engine: Engine, project_id: int, max_lag: int = 0) -> PoolView:
    """What the current model says about the pool and the evaluation split (cached per model
    key); with ``max_lag``, a view up to that many annotations old may be served while the
    current one is computed in the background (``refreshing`` tells; ``view.state.version``
    names the model it shows)."""
    mkey = model_key(engine, project_id)
    make = lambda: _pool_view(engine, project_id)  # noqa: E731
    return VIEWS.get_recent(("pool", mkey[:-2]), mkey[-2], ("pool", mkey), make, max_lag)


def model_view(engine: Engine, project_id: int, max_lag: int = 0) -> ModelView:
    """The pool view plus what the current model says about the labels (cached per model key);
    ``max_lag`` as in ``pool_view``."""
    mkey = model_key(engine, project_id)
    make = lambda: _view(engine, project_id, ("view", mkey))  # noqa: E731
    return VIEWS.get_recent(("view", mkey[:-2]), mkey[-2], ("view", mkey), make, max_lag)


def prefetch_model_view(engine: Engine, project_id: int) -> bool:
    """Start computing the current model view in the background (a page showing only the pool
    view calls this once drawn, so error analysis and review open warm); a later
    ``model_view`` waits for it instead of computing again. True when a thread started."""
    mkey = model_key(engine, project_id)
    make = lambda: _view(engine, project_id, ("view", mkey))  # noqa: E731
    return VIEWS.prefetch(("view", mkey), make, ("view", mkey[:-2]), mkey[-2])


def _pool_view(engine: Engine, project_id: int) -> PoolView:
    state = current_model(engine, project_id)
    view = PoolView(state, pd.DataFrame(columns=reports.TOKEN_COLUMNS))
    if not state.trained:
        return view
    template = get_project(engine, project_id).settings.get("feature_template", "chunk")
    cache = feature_cache(engine, project_id, template)
    seed = project_id * 1_000_003 + state.version
    pool_ids = _sample(unlabeled_pool_ids(engine, project_id), POOL_SAMPLE, seed)
    pool = [s for s, _ in split_sentences(engine, project_id, "pool", pool_ids)]
    if pool:
        view.pool = reports.token_frame(state, cache.encode(state.model, pool), pool, seed=seed)
    evals = [(s, g) for s, g in split_sentences(engine, project_id, "eval") if g is not None]
    if evals:
        enc = cache.encode(state.model, [s for s, _ in evals])
        view.eval_scores = reports.evaluate(state, enc, [g for _, g in evals])
    view.tokens = {s.id: s.tokens for s in pool}
    view.pool_sentences = len(pool)
    return view


def _view(engine: Engine, project_id: int, key: tuple) -> ModelView:
    """The model view cached under ``key``; computed in the background (the warm-up, a
    prefetch), its feature extraction lets page runs that do not wait for it go first."""
    base = pool_view(engine, project_id)
    state = base.state
    current = current_annotations(engine, project_id)
    view = ModelView(
        state,
        base.pool,
        tokens=dict(base.tokens),
        pool_sentences=base.pool_sentences,
        eval_scores=base.eval_scores,
    )
    view.annotators = {e.sentence_id: e.annotator for e in current}
    if not state.trained:
        return view
    template = get_project(engine, project_id).settings.get("feature_template", "chunk")
    cache = feature_cache(engine, project_id, template)
    seed = project_id * 1_000_003 + state.version
    labeled = [PoolSentence(e.sentence_id, e.tokens, e.columns) for e in current if e.tokens]
    given = {e.sentence_id: e.tags for e in current if e.tokens}
    cache.add(labeled, pause=yield_to_pages(key))
    chosen = _disputed_and_sample(state, cache, labeled, given, seed)
    if chosen:
        enc = cache.encode(state.model, chosen)
        view.labeled = reports.token_frame(state, enc, chosen, given=given, seed=seed)
    view.tokens.update((s.id, s.tokens) for s in chosen)
    view.labeled_sentences = len(labeled)
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
