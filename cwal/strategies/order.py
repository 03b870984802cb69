"""The one ordering rule every ranking uses (the live queue, ``select``, simulations).

Lowest score first; ties to the shorter sentence; remaining ties to the earlier candidate in the
draw order of the candidate sample. A strategy only scores; this module orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cwal.features import Encoded


@dataclass
class Ranking:
    """Candidates of one batch ranked: ``order`` (positions, best first), each one's ``score``
    (lower = ask first) and, for the strategies that estimate per-token confidence, that
    ``confidence`` (a :class:`cwal.confidence.Confidence`: predicted labels and margins)."""

    order: np.ndarray
    score: np.ndarray
    confidence: Any = None


def order(score: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Positions of the candidates, best first: lowest ``score``, then the shorter sentence, then
    the earlier position (the candidates' draw order)."""
    score = np.asarray(score, dtype=np.float64)
    lengths = np.asarray(lengths)
    if score.shape != lengths.shape:
        raise ValueError(f"{score.shape[0]} scores for {lengths.shape[0]} sentences")
    return np.lexsort((np.arange(score.size), lengths, score))


def lengths_of(batch: Sequence[Any] | Encoded) -> np.ndarray:
    """Tokens per sentence of a batch (sentences, or an Encoded batch)."""
    if isinstance(batch, Encoded):
        return np.diff(np.asarray(batch.sent_offsets)).astype(np.int64)
    return np.array([len(s) for s in batch], dtype=np.int64)


def encoded(model: Any, batch: Sequence[Any] | Encoded) -> Encoded:
    """The batch in the model's feature ids (an Encoded batch as it is)."""
    return batch if isinstance(batch, Encoded) else model.encode(list(batch))


def sentence_reduce(values: np.ndarray, sent_offsets: np.ndarray, how: str) -> np.ndarray:
    """Per-sentence min / max / sum / mean of per-token ``values`` (+inf for an empty
    sentence)."""
    off = np.asarray(sent_offsets)
    out = np.full(len(off) - 1, np.inf)
    nonempty = np.flatnonzero(np.diff(off) > 0)
    if nonempty.size:
        starts = off[:-1][nonempty]
        if how == "min":
            out[nonempty] = np.minimum.reduceat(values, starts)
        elif how == "max":
            out[nonempty] = np.maximum.reduceat(values, starts)
        elif how == "sum":
            out[nonempty] = np.add.reduceat(values, starts)
        else:
            out[nonempty] = np.add.reduceat(values, starts) / np.diff(off)[nonempty]
    return out
