"""KD-PC / KD-Fixed for the live service, computed from a row snapshot of the live model.

The live model changes under a lock; scoring must not hold that lock for a second. So the session
copies, under the lock, only the rows of the features a batch uses (averaged mean and covariance,
a few milliseconds) into a :class:`Rows` snapshot, and ``cwal.confidence.estimate`` runs on it
off the lock through :class:`RowsModel`, a read-only stand-in with the learner's interface.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cwal.confidence import Confidence, estimate
from cwal.features import Encoded

S_GRID = tuple(float(s) for s in np.logspace(-4, 0, 9))
"""Scales tuned over on the prequential record (two a decade in [1e-4, 1], as
``cwal.confidence.tuning``'s starting grid)."""


@dataclass
class Rows:
    """A model restricted to a batch's features: ``enc`` indexes the rows of ``W`` / ``SW``."""

    enc: Encoded
    W: np.ndarray  # (U, L) averaged mean
    A: np.ndarray  # (L + 2, L) averaged transitions
    SW: np.ndarray  # (U, L) covariance diagonal
    SA: np.ndarray  # (L + 2, L)
    labels: list[str]
    has_covariance: bool = True
    decode: Callable[[list[str]], list[str]] | None = None  # internal labels -> user tags

    def tags(self, ids: np.ndarray) -> list[str]:
        """User tags of one sentence's predicted label ids (a BIOES-trained model's labels are
        converted back to the project's scheme)."""
        labels = [self.labels[i] for i in ids]
        return labels if self.decode is None else self.decode(labels)


class RowsModel:
    """The part of the learner interface that ``estimate`` and the strategies read, over a
    :class:`Rows` snapshot; ``encode`` returns the snapshot's own batch (already encoded)."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows
        self.labels_ = rows.labels
        self.has_covariance = rows.has_covariance

    def encode(self, sentences: object) -> Encoded:
        if len(sentences) != self.rows.enc.n_sentences:  # type: ignore[arg-type]
            raise ValueError("a row snapshot encodes only the batch it was taken for")
        return self.rows.enc

    def averaged(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows.W, self.rows.A

    def covariance(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows.SW, self.rows.SA


def take_rows(model, model_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(W, A, SW, SA)`` of a learner restricted to rows ``model_ids``.

    Equals ``averaged()`` / ``covariance()`` indexed by ``model_ids`` but touches only those rows
    (the learner's lazy average is ``W_ - UW_ / count_``), cheap enough to run under a lock.
    """
    ids = np.asarray(model_ids, dtype=np.int64)
    count = float(model.count_)
    if count > 0:
        W = model.W_[ids] - model.UW_[ids] / count
        A = model.A_ - model.UA_ / count
    else:
        W, A = model.W_[ids].copy(), model.A_.copy()
    return W, A, model.SW_[ids].copy(), model.SA_.copy()


def rows_for(model, enc: Encoded) -> Rows:
    """A :class:`Rows` snapshot of ``model`` for a batch encoded with the model's own ids."""
    uniq, local = np.unique(np.asarray(enc.feat_ids, dtype=np.int64), return_inverse=True)
    W, A, SW, SA = take_rows(model, uniq)
    local_enc = Encoded(local.astype(np.int32).reshape(-1), enc.tok_offsets, enc.sent_offsets)
    return Rows(
        local_enc, W, A, SW, SA, list(model.labels_), model.has_covariance, decoder_of(model)
    )


def decoder_of(model) -> Callable[[list[str]], list[str]]:
    """A snapshot of the learner's tag decoder (its output scheme as of now)."""
    return copy.copy(model.codec_).decode


def confidence(
    rows: Rows, method: str, s: float, *, k: int, seed: int, tiebreak: str = "delta"
) -> Confidence:
    """KD confidence of the snapshot's batch (``method`` kd-pc or kd-fixed; KD-PC falls back
    to KD-Fixed for a learner without a covariance)."""
    if method == "kd-pc" and not rows.has_covariance:
        method = "kd-fixed"
    return estimate(RowsModel(rows), rows.enc, method, k=k, s=s, seed=seed, tiebreak=tiebreak)


def least_confident(conf: Confidence) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence: its least confident token's rank key (lower = ask first; confidence, ties
    by Delta) and that token's position (-1 for an empty sentence)."""
    key = conf.rank_key()
    off = conf.sent_offsets
    B = len(off) - 1
    score = np.full(B, np.inf)
    where = np.full(B, -1, dtype=np.int64)
    for b in range(B):
        t0, t1 = int(off[b]), int(off[b + 1])
        if t1 > t0:
            p = int(np.argmin(key[t0:t1]))
            score[b], where[b] = key[t0 + p], p
    return score, where
