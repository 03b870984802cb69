"""What a confidence estimate returns: per-token labels, confidence and the keys that rank them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Confidence:
    """Per-token labels and confidence of a batch (sentence b = tokens ``sent_offsets[b:b+2]``).

    ``confidence`` is the share of agreeing draws / labelings (a probability; ``absolute``) or,
    for Delta, the margin. ``distribution (n, L)`` and ``entropy`` exist for the sampling and
    k-best methods; ``margin`` is Delta; ``draw_margin`` the mean signed margin over the draws;
    ``rank`` names the ranking that ``rank_key`` implements, ``tiebreak`` its secondary key.
    """

    method: str
    labels: np.ndarray
    confidence: np.ndarray
    sent_offsets: np.ndarray
    distribution: np.ndarray | None = None
    entropy: np.ndarray | None = None
    margin: np.ndarray | None = None
    draw_margin: np.ndarray | None = None
    tiebreak: np.ndarray | None = None
    rank: str = "votes"
    absolute: bool = True
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return len(self.labels)

    @property
    def n_sentences(self) -> int:
        return len(self.sent_offsets) - 1

    def rank_key(self) -> np.ndarray:
        """A float per token, lower = less confident, per ``rank`` (dense ranks in [0, 1];
        tokens equal in both keys share a key)."""
        if self.rank == "z-delta":
            return rank_key(self.tiebreak)
        primary = self.draw_margin if self.rank == "draw-margin" else self.confidence
        return rank_key(primary, self.tiebreak)

    def per_sentence(self, values: np.ndarray | None = None) -> list[np.ndarray]:
        """``values`` (default: confidence) cut into one array per sentence."""
        v = self.confidence if values is None else values
        return np.split(v, self.sent_offsets[1:-1])


def rank_key(primary: np.ndarray, secondary: np.ndarray | None = None) -> np.ndarray:
    """Dense lexicographic rank of ``(primary, secondary)`` scaled to [0, 1] (lower = first)."""
    p = np.asarray(primary, dtype=np.float64)
    if p.size == 0:
        return np.zeros(0)
    keys = [p] if secondary is None else [np.asarray(secondary, dtype=np.float64), p]
    order = np.lexsort(keys)  # the last key is the primary one
    step = np.zeros(p.size - 1, dtype=bool)
    for key in keys:
        ks = key[order]
        step |= ks[1:] != ks[:-1]
    dense = np.concatenate([[0], np.cumsum(step)])
    out = np.empty(p.size)
    out[order] = dense / max(int(dense[-1]), 1)
    return out
