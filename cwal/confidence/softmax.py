"""N-best soft-max confidence: the per-token probability of the predicted label under a soft-max
over the K best labelings of the sentence.

Labeling i of the K best distinct Viterbi labelings gets ``P_i ∝ exp(s * score_i)`` (the
soft-max of the logistic updates, algorithms.md §2, restricted to the N best as they are); token
p's distribution is ``sum_i P_i [z_p^(i) = y]`` and its confidence the share of the predicted
label. A close relative of KBV (uniform weights, the limit s -> 0) and WKBV; when K covers every
labeling it is the exact token marginal of the CRF with scores ``s * score``.

``s`` defaults to the learner's ``softmax_scale`` (1 for the logistic learners, whose scores are
the log-odds their updates fit; 1 for the others too, whose score scale is arbitrary: tune it).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from cwal.confidence._kernels import _n_labelings
from cwal.decode._kbest import kbest_kernel

DEFAULT_SCALE = 1.0


@numba.njit(cache=True, nogil=True)
def softmax_vote_kernel(E, sent_offsets, A, k, scale):
    """Soft-max-weighted label shares of the k best labelings of every sentence:
    ``dist (n_tok, L)``."""
    L = E.shape[1]
    dist = np.zeros(E.shape)
    for b in range(sent_offsets.shape[0] - 1):
        t0 = sent_offsets[b]
        t1 = sent_offsets[b + 1]
        if t1 == t0:
            continue
        labels, scores = kbest_kernel(E[t0:t1], A, _n_labelings(L, t1 - t0, k))
        m = labels.shape[0]
        w = np.empty(m)
        total = 0.0
        for q in range(m):  # scores are sorted best first: every exponent is <= 0
            w[q] = math.exp(scale * (scores[q] - scores[0]))
            total += w[q]
        for q in range(m):
            share = w[q] / total
            for p in range(t1 - t0):
                dist[t0 + p, labels[q, p]] += share
        for p in range(t0, t1):
            for y in range(L):
                dist[p, y] = min(dist[p, y], 1.0)
    return dist


def model_scale(model: Any) -> float:
    """The score scale ``s`` a learner declares for soft-max confidence (default 1)."""
    return float(getattr(model, "softmax_scale", DEFAULT_SCALE))


def softmax_distribution(
    E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray, k: int, scale: float = DEFAULT_SCALE
) -> np.ndarray:
    """Per-token label probabilities ``(n_tok, L)`` under the soft-max over the ``k`` best
    labelings of each sentence, labeling scores multiplied by ``scale``."""
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(
            f"the soft-max scale s must be positive and finite, got {scale} (s -> 0 is KBV)"
        )
    return softmax_vote_kernel(
        np.ascontiguousarray(E, dtype=np.float64),
        np.ascontiguousarray(sent_offsets, dtype=np.int64),
        np.ascontiguousarray(A, dtype=np.float64),
        int(k),
        float(scale),
    )
