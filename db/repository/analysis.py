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
from cwal.features import Encoded
from cwal.live import PoolSentence
from db.engine import read_transaction
from db.models import Annotation, Prediction, Sentence
from db.repository.history import (
    annotation_history,
    current_annotations,
    last_annotation_id,
)
from db.repository.predictions import calibration_frame
from db.repository.projects import get_project
from db.repository.state import current_annotation_ids, in_project, labeled_ids
from db.repository.stats import annotation_log
from db.repository.views import VIEWS, model_key, project_key, yield_to_pages
from db.repository.views import clear_cache as clear_cache  # re-exported for pages and tests
from db.repository.views import refreshing as refreshing
from db.repository.views import wait_fresh as wait_fresh
from db.store import live_session

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


# ----- the live model and what it says -------------------------------------------------------
def current_reading(
    engine: Engine, project_id: int, batches: list[list[PoolSentence]]
) -> list[reports.ModelState]:
    """The project's live model (the process's one session, ``db.store.live_session``) read on
    batches of sentences, all at one version: a state per batch (its ``model`` a row snapshot of
    that batch, ``reports.batch_encoding``), or a single untrained state before the first
    label. The lead pages read the model the annotators train; none is ever built for them."""
    session = live_session(engine, project_id)
    reading = session.read(batches)
    k, calibration = session.config.k, session.calibration
    if not reading.rows:
        return [reports.untrained(reading, k, calibration)]
    return reports.reading_states(reading, k, calibration)


def current_version(engine: Engine, project_id: int) -> int:
    """The live model's version once it has caught up with the log."""
    session = live_session(engine, project_id)
    session.sync()
    return session.generation[1]


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
        return self.state.expected_accuracy(self.pool["delta"].to_numpy(), self.pool["predicted"])

    @property
    def pool_interval(self) -> tuple[float, float]:
        """A 95% interval of ``pool_estimate`` (the calibration map's uncertainty)."""
        return self.state.expected_interval(self.pool["delta"].to_numpy(), self.pool["predicted"])

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
    seed = project_id * 1_000_003 + current_version(engine, project_id)
    pool_ids = _sample(unlabeled_pool_ids(engine, project_id), POOL_SAMPLE, seed)
    pool = [s for s, _ in split_sentences(engine, project_id, "pool", pool_ids)]
    evals = [(s, g) for s, g in split_sentences(engine, project_id, "eval") if g is not None]
    states = current_reading(engine, project_id, [pool, [s for s, _ in evals]])
    view = PoolView(states[0], pd.DataFrame(columns=reports.TOKEN_COLUMNS))
    if not view.state.trained:
        return view
    seed = project_id * 1_000_003 + view.state.version
    if pool:
        enc = reports.batch_encoding(states[0])
        view.pool = reports.token_frame(states[0], enc, pool, seed=seed)
    if evals:
        enc = reports.batch_encoding(states[1])
        view.eval_scores = reports.evaluate(states[1], enc, [g for _, g in evals])
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
    labeled = [PoolSentence(e.sentence_id, e.tokens, e.columns) for e in current if e.tokens]
    given = {e.sentence_id: e.tags for e in current if e.tokens}
    pause, session = yield_to_pages(key), live_session(engine, project_id)
    for start in range(0, len(labeled), 256):  # the features, in steps pages may go between
        pause()
        session.pool.add(labeled[start : start + 256])
    read = current_reading(engine, project_id, [labeled])[0]
    if not read.trained:
        return view
    seed = project_id * 1_000_003 + read.version
    enc = reports.batch_encoding(read)
    keep = _disputed_and_sample(read, enc, [given[s.id] for s in labeled], seed)
    chosen = [labeled[i] for i in keep]
    if chosen:
        sub = _sentences_of(enc, keep)
        view.labeled = reports.token_frame(read, sub, chosen, given=given, seed=seed)
    view.tokens.update((s.id, s.tokens) for s in chosen)
    view.labeled_sentences = len(labeled)
    return view


def _disputed_and_sample(
    state: reports.ModelState, enc: Encoded, given: list[list[str]], seed: int
) -> list[int]:
    """Positions of labeled sentences to read closely: the most disputed ones (largest score
    gap between the model's labeling and the human one, any token) plus a random sample."""
    if not given:
        return []
    gap = reports.disagreement(state.model, enc, reports.given_ids(state.model, given))
    worst = np.maximum.reduceat(gap, enc.sent_offsets[:-1]) if len(gap) else np.zeros(0)
    disputed = [i for i in np.argsort(-worst, kind="stable") if worst[i] > 0][:LABELED_SAMPLE]
    sampled = _sample(np.arange(len(given)), LABELED_SAMPLE, seed)
    return sorted(set(int(i) for i in disputed) | set(sampled))


def _sentences_of(enc: Encoded, keep: list[int]) -> Encoded:
    """The sentences ``keep`` (positions, ascending) of a batch, as one batch."""
    parts = [enc.sentence(b) for b in keep]
    feats = np.concatenate([p.feat_ids for p in parts])
    tok_counts = np.concatenate([np.diff(p.tok_offsets) for p in parts])
    lengths = np.array([p.n_tokens for p in parts], dtype=np.int64)
    return Encoded(
        feats.astype(enc.feat_ids.dtype),
        np.r_[0, np.cumsum(tok_counts)].astype(np.int64),
        np.r_[0, np.cumsum(lengths)].astype(np.int64),
    )


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
