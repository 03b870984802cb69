"""What the current model says about sentences: per-token KD-PC confidence, label distribution
and entropy, how strongly it disagrees with given labels, scores on gold data, and the accuracy it
expects on the unlabeled pool.

In the web app the model is the project's live session's (one per process): ``reading_states``
wraps the row snapshots ``ProjectSession.read`` takes of it. A past checkpoint is loaded by
``checkpoint_state``; a process without a session (the CLI) builds the live model once with
``rebuild``, exactly as a session does (newest valid checkpoint plus the later rows replayed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cwal.confidence import estimate
from cwal.confidence.calibration import MarginMap
from cwal.confidence.rows import RowsModel
from cwal.decode import emissions, max_marginals_batch, viterbi_batch
from cwal.features import Encoded
from cwal.features.clusters import WordClusters
from cwal.io import Sentence, schemes
from cwal.learners import SequenceLearner
from cwal.live import CheckpointMeta, LiveConfig, LogRow, PoolSentence
from cwal.live.pool import PoolCache
from cwal.live.ranking import Reading
from cwal.live.replay import LearnerSpec, build, same_clusters
from cwal.measures import chunk_f1

TOKEN_COLUMNS = [
    "sentence_id", "position", "token", "predicted", "confidence", "entropy", "margin", "key",
    "delta",
]  # fmt: skip
GIVEN_COLUMNS = ["given", "p_given", "gap", "agrees"]


@dataclass
class ModelState:
    """A model with what its confidence needs: the version it has, KD method, scale and draws."""

    model: Any  # a SequenceLearner, a batch's RowsModel (a live reading) or None (untrained)
    version: int
    s: float
    k: int
    method: str
    checkpoint_id: int | None = None
    calibration: MarginMap = field(default_factory=MarginMap)  # fitted on the prequential record

    @property
    def trained(self) -> bool:
        return self.version > 0 and self.model is not None and bool(self.model.labels_)

    def expected_accuracy(self, delta: np.ndarray, predicted: Sequence[str]) -> float:
        """The accuracy the model expects on tokens with these Delta margins and predicted
        tags: their mean calibrated confidence (the value annotators see shaded)."""
        delta = np.asarray(delta, dtype=np.float64)
        if delta.size == 0:
            return float("nan")
        return float(np.mean(self.calibration(delta, predicted)))

    def expected_interval(self, delta: np.ndarray, predicted: Sequence[str]) -> tuple[float, float]:
        """A 95% interval of :meth:`expected_accuracy` over the calibration map's posterior."""
        return self.calibration.interval(np.asarray(delta, dtype=np.float64), predicted)


def rebuild(
    settings: Mapping[str, Any],
    base: CheckpointMeta | None,
    state: bytes | None,
    tail: Sequence[LogRow],
    calibration: MarginMap | None = None,
    clusters: WordClusters | None = None,
) -> ModelState:
    """The live model built outside any live session (a one-shot process such as the CLI's
    ``predict``: the web app reads its sessions' model instead, ``reading_states``): ``base``
    (the newest valid checkpoint, with its ``state`` bytes) or an empty learner, then the
    label-log rows after it (``tail``, id order) replayed online; ``calibration`` the map fitted
    on the project's prequential record (default: the prior); ``clusters`` the project's pool
    word clusters when it uses them (an empty learner's features)."""
    spec = LearnerSpec.from_settings(dict(settings), clusters)
    config = LiveConfig.from_settings(dict(settings))
    live = build(
        None,  # type: ignore[arg-type]  # never read: base state, labeled and tail are given
        0,
        spec,
        (config.s_pc, config.s_fixed),
        base=base,
        state=state if base is not None else None,
        tail=list(tail),
        labeled={},
    )
    cid = base.id if base is not None else None
    return _state(live.model, live.version, (live.s_pc, live.s_fixed), config.k, cid, calibration)


def _state(
    model: Any,
    version: int,
    scales: tuple[float, float],
    k: int,
    checkpoint_id: int | None,
    calibration: MarginMap | None,
) -> ModelState:
    """``model`` with KD-PC when it has a covariance (else KD-Fixed) at its scale."""
    method = "kd-pc" if model.has_covariance else "kd-fixed"
    s = scales[0] if method == "kd-pc" else scales[1]
    return ModelState(
        model, version, float(s), k, method, checkpoint_id, calibration or MarginMap()
    )


def checkpoint_state(
    settings: Mapping[str, Any],
    meta: CheckpointMeta,
    state: bytes,
    calibration: MarginMap | None = None,
) -> ModelState:
    """A stored checkpoint's model as it was consolidated (a past model: no rows replayed)."""
    config = LiveConfig.from_settings(dict(settings))
    model = SequenceLearner.from_bytes(state, f"checkpoint {meta.id}")
    info = meta.info
    scales = (float(info.get("s_pc", config.s_pc)), float(info.get("s_fixed", config.s_fixed)))
    return _state(model, int(info.get("version", 0)), scales, config.k, meta.id, calibration)


def reading_states(
    reading: Reading, k: int, calibration: MarginMap | None = None
) -> list[ModelState]:
    """The live session's model as read on batches (``ProjectSession.read``): one state per
    batch, its ``model`` that batch's row snapshot (``batch_encoding`` gives the batch as it
    reads it); none while the model knows no label (``untrained``)."""
    checkpoint = reading.generation[0] or None
    scales = (reading.s_pc, reading.s_fixed)
    return [
        _state(RowsModel(rows), reading.generation[1], scales, k, checkpoint, calibration)
        for rows in reading.rows
    ]


def untrained(reading: Reading, k: int, calibration: MarginMap | None = None) -> ModelState:
    """The session's model before its first label (no rows to read: ``trained`` is False)."""
    cid = reading.generation[0] or None
    return ModelState(None, reading.generation[1], reading.s_pc, k, "kd-pc", cid,
                      calibration or MarginMap())  # fmt: skip


def batch_encoding(state: ModelState) -> Encoded:
    """The batch a ``reading_states`` state was read on, numbered as its rows."""
    return state.model.rows.enc


class FeatureCache:
    """Template features of stored sentences, extracted once per process and re-mapped onto
    any model's feature index (``cwal.live.pool.PoolCache``); one model at a time. With
    ``clusters`` (the project's pool word clusters) the features include theirs; a model with
    other clusters makes the cache extract again with the model's."""

    def __init__(self, template: str, clusters: WordClusters | None = None) -> None:
        self.template = template
        self.pool = PoolCache(template, clusters)
        self._lock = threading.Lock()

    def add(
        self, sentences: Sequence[PoolSentence], pause: Callable[[], None], step: int = 256
    ) -> None:
        """Extract the features of ``sentences`` (``encode`` then finds them), ``step`` at a
        time, calling ``pause()`` before each step (to let more urgent work go first)."""
        todo = [s for s in sentences if s.id not in self.pool]
        for start in range(0, len(todo), step):
            pause()
            self.pool.add(todo[start : start + step])

    def encode(self, model: SequenceLearner, sentences: Sequence[PoolSentence]) -> Encoded:
        """The sentences in ``model``'s feature ids (unknown features dropped)."""
        found = getattr(model.features_, "clusters", None)
        if not same_clusters(found, self.pool.clusters):
            with self._lock:
                if not same_clusters(found, self.pool.clusters):
                    self.pool = PoolCache(self.template, found)
        self.pool.add(s for s in sentences if s.id not in self.pool)
        with self._lock:
            self.pool.sync(model.features_)
            return self.pool.encode([s.id for s in sentences])


def _decode(model: SequenceLearner, ids: np.ndarray, offsets: np.ndarray) -> list[str]:
    """User tags of every token (the learner's codec, sentence by sentence)."""
    labels = model.labels_
    out: list[str] = []
    for b in range(len(offsets) - 1):
        out += model.codec_.decode([labels[i] for i in ids[offsets[b] : offsets[b + 1]]])
    return out


def _internal(model: SequenceLearner, tags: Sequence[str]) -> list[str]:
    """Given user tags as the learner's internal labels (BIOES when it re-encodes)."""
    tags = list(tags)
    if model.codec_.encoding == "raw" or not all(schemes.split_tag(t) for t in tags):
        return tags
    return schemes.repair(tags, "BIOES")


def _margin(conf: Any) -> np.ndarray:
    for values in (conf.draw_margin, conf.margin):
        if values is not None:
            return np.asarray(values, dtype=np.float64)
    return np.full(conf.n_tokens, np.nan)


def token_frame(
    state: ModelState,
    enc: Encoded,
    sentences: Sequence[PoolSentence],
    *,
    given: Mapping[int, Sequence[str]] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per token: the model's ``predicted`` tag, its calibrated ``confidence`` (``delta``,
    the Delta margin, through ``state.calibration``: what annotators see shaded), the ``entropy``
    of the K draws' label distribution, ``margin`` (the ranking's score margin: mean signed
    margin over the draws, else Delta; NaN when the method has none) and ``key`` (rank key:
    lower = less sure).

    With ``given`` (sentence id -> tags) also ``given``, ``p_given`` (share of draws that give
    the given label), ``gap`` (best score minus the best score with that token forced to the
    given label: 0 when the model agrees, inf for a label it does not know) and ``agrees``.
    """
    columns = TOKEN_COLUMNS + (GIVEN_COLUMNS if given is not None else [])
    if not sentences or not state.trained:
        return pd.DataFrame(columns=columns)
    model = state.model
    conf = estimate(model, enc, state.method, k=state.k, s=state.s, seed=seed)
    off = enc.sent_offsets
    frame = pd.DataFrame(
        {
            "sentence_id": np.repeat([s.id for s in sentences], np.diff(off)),
            "position": np.concatenate([np.arange(len(s.tokens)) for s in sentences]),
            "token": [t for s in sentences for t in s.tokens],
            "predicted": _decode(model, conf.labels, off),
            "confidence": conf.confidence.astype(np.float64),
            "entropy": conf.entropy.astype(np.float64),
            "margin": _margin(conf),
            "key": conf.rank_key(),
            "delta": np.asarray(conf.margin, dtype=np.float64),
        }
    )
    frame["confidence"] = state.calibration(
        frame["delta"].to_numpy(), frame["predicted"].to_numpy()
    )
    if given is None:
        return frame
    index = {label: i for i, label in enumerate(model.labels_)}
    tags = [t for s in sentences for t in given[s.id]]
    gid = np.array([index.get(t, -1) for s in sentences for t in _internal(model, given[s.id])])
    rows = np.arange(len(gid))
    known = gid >= 0
    p = np.zeros(len(gid))
    p[known] = conf.distribution[rows[known], gid[known]]
    frame["given"] = tags
    frame["p_given"] = p
    frame["gap"] = disagreement(model, enc, gid)
    frame["agrees"] = frame["given"] == frame["predicted"]
    return frame


def disagreement(model: SequenceLearner, enc: Encoded, label_ids: np.ndarray) -> np.ndarray:
    """Per token: the best labeling's score minus the best score of a labeling that gives the
    token label ``label_ids[p]`` (max-marginals; 0 = the model agrees; -1 ids give inf)."""
    W, A = model.averaged()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    mm = max_marginals_batch(E, enc.sent_offsets, A)
    gap = np.full(len(label_ids), np.inf)
    ok = label_ids >= 0
    rows = np.arange(len(label_ids))
    gap[ok] = mm.max(axis=1)[ok] - mm[rows[ok], label_ids[ok]]
    return np.maximum(gap, 0.0)


def given_ids(model: SequenceLearner, tags: Sequence[Sequence[str]]) -> np.ndarray:
    """Internal label ids of given tag sequences, concatenated (-1: unknown to the model)."""
    index = {label: i for i, label in enumerate(model.labels_)}
    return np.array([index.get(t, -1) for seq in tags for t in _internal(model, seq)], np.int64)


def evaluate(
    state: ModelState, enc: Encoded, gold: Sequence[Sequence[str]]
) -> dict[str, float] | None:
    """conlleval F1 and token accuracy of the model's predictions against gold tags."""
    if not gold or not state.trained:
        return None
    W, A = state.model.averaged()
    ids = viterbi_batch(emissions(enc.feat_ids, enc.tok_offsets, W), enc.sent_offsets, A)
    flat = _decode(state.model, ids, enc.sent_offsets)
    pred, t = [], 0
    for seq in gold:
        pred.append(flat[t : t + len(seq)])
        t += len(seq)
    report = chunk_f1([list(g) for g in gold], pred)
    return {"f1": float(report.f1), "accuracy": float(report.token_accuracy)}


def pool_estimate(
    model: SequenceLearner,
    sentences: Sequence[Sentence],
    calibration: MarginMap | None = None,
) -> dict[str, float | int]:
    """The accuracy the model expects on unlabeled sentences: the mean calibrated confidence
    (Delta through ``calibration``, default the prior map) of its own predictions there.
    Returns ``pool_estimate`` (NaN for no tokens), ``pool_tokens`` and ``pool_sentences``."""
    sents = [x for x in sentences if len(x.tokens)]
    if not sents or not model.labels_:
        return {"pool_estimate": float("nan"), "pool_tokens": 0, "pool_sentences": len(sents)}
    enc = model.encode(sents)
    conf = estimate(model, enc, "delta")
    mapped = (calibration or MarginMap())(
        conf.margin, _decode(model, conf.labels, enc.sent_offsets)
    )
    return {
        "pool_estimate": float(np.mean(mapped)),
        "pool_tokens": int(conf.n_tokens),
        "pool_sentences": len(sents),
    }
