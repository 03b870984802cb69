"""A model restricted to one batch's features: the row snapshot every KD ranking draws noise for.

KD draws noise row by row, keyed by the row's position; a ranking that restricted the model to the
batch's features and one that did not would draw different noise from the same seed. So every KD
ranking (the live queue, which must copy only those rows under its lock, and the strategy objects
that simulations run) first takes a :class:`Rows` snapshot of the batch, numbered as ``np.unique``
numbers the batch's feature ids, and scores through :class:`RowsModel`: same seed, same draws.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cwal.features import Encoded


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
    codec: Any = None  # a copy of the learner's tag codec (``encoding``, ``decode``), if any

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
        if rows.codec is not None:  # the reports' decoding reads the learner's codec
            self.codec_ = rows.codec

    def encode(self, sentences: object) -> Encoded:
        if len(sentences) != self.rows.enc.n_sentences:  # type: ignore[arg-type]
            raise ValueError("a row snapshot encodes only the batch it was taken for")
        return self.rows.enc

    def averaged(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows.W, self.rows.A

    def covariance(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows.SW, self.rows.SA

    def tags_of(self, ids: np.ndarray, lengths: Sequence[int]) -> list[list[str]]:
        """User tags of label ids (sentences concatenated), as ``SequenceLearner.tags_of``."""
        out, t = [], 0
        for n in lengths:
            out.append(self.rows.tags(ids[t : t + n]))
            t += n
        return out


def take_rows(model, model_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(W, A, SW, SA)`` of a learner restricted to rows ``model_ids``.

    Equals ``averaged()`` / ``covariance()`` indexed by ``model_ids`` but touches only those rows
    (the learner's lazy average is ``W_ - UW_ / count_``), cheap enough to run under a lock.
    """
    ids = np.asarray(model_ids, dtype=np.int64)
    count = float(model.count_)
    if count > 0:
        W = np.multiply(model.UW_[ids], -1.0 / count, dtype=np.float64)  # as averaged()
        W += model.W_[ids]
        A = model.A_ - model.UA_ / count
    else:
        W, A = model.W_[ids].copy(), model.A_.copy()
    return W, A, model.SW_[ids].copy(), model.SA_.copy()


def rows_for(model, enc: Encoded) -> Rows:
    """A :class:`Rows` snapshot of ``model`` for a batch encoded with the model's own ids."""
    uniq, local = np.unique(np.asarray(enc.feat_ids, dtype=np.int64), return_inverse=True)
    W, A, SW, SA = take_rows(model, uniq)
    local_enc = Encoded(local.astype(np.int32).reshape(-1), enc.tok_offsets, enc.sent_offsets)
    codec = codec_of(model)
    return Rows(
        local_enc, W, A, SW, SA, list(model.labels_), model.has_covariance, codec.decode, codec
    )


def decoder_of(model) -> Callable[[list[str]], list[str]]:
    """A snapshot of the learner's tag decoder (its output scheme as of now)."""
    return codec_of(model).decode


def codec_of(model) -> Any:
    """A snapshot of the learner's tag codec (its output scheme as of now)."""
    return copy.copy(model.codec_)


def restrict(model, enc: Encoded) -> tuple[RowsModel, Encoded]:
    """``model`` restricted to the features of ``enc`` and the batch renumbered onto it (a
    :class:`RowsModel` is returned as it is: it is already a snapshot of its batch)."""
    if isinstance(model, RowsModel):
        return model, enc
    if hasattr(model, "UW_") and hasattr(model, "codec_"):
        rows = rows_for(model, enc)
        return RowsModel(rows), rows.enc
    uniq, local = np.unique(np.asarray(enc.feat_ids, dtype=np.int64), return_inverse=True)
    W, A = model.averaged()
    SW, SA = model.covariance() if getattr(model, "has_covariance", False) else (W, A)
    local_enc = Encoded(local.astype(np.int32).reshape(-1), enc.tok_offsets, enc.sent_offsets)
    labels = list(model.labels_)
    rows = Rows(local_enc, W[uniq], A, SW[uniq], SA, labels, bool(model.has_covariance))
    return RowsModel(rows), local_enc
