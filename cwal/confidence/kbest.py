"""KBV and WKBV: confidence from the K best distinct Viterbi labelings under the mean weights.

KBV gives each of the K labelings the same weight, WKBV weights labeling i by
``max(0, score_i)`` (mejer-crammer-2010 §5); a token's confidence is the weighted share of
labelings that agree with the best one. Deterministic: no draws, no s.
"""

from __future__ import annotations

import numpy as np

from cwal.confidence._kernels import POSITIVE, UNIFORM, kbest_vote_kernel


def kbest_distribution(
    E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray, k: int, weighted: bool
) -> np.ndarray:
    """Per-token label shares ``(n_tok, L)`` of the ``k`` best labelings of each sentence."""
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return kbest_vote_kernel(
        np.ascontiguousarray(E, dtype=np.float64),
        np.ascontiguousarray(sent_offsets, dtype=np.int64),
        np.ascontiguousarray(A, dtype=np.float64),
        int(k),
        POSITIVE if weighted else UNIFORM,
        0.0,
    )
