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

import numpy as np

from cwal.confidence._kernels import SOFTMAX, kbest_vote_kernel

DEFAULT_SCALE = 1.0


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
    return kbest_vote_kernel(
        np.ascontiguousarray(E, dtype=np.float64),
        np.ascontiguousarray(sent_offsets, dtype=np.int64),
        np.ascontiguousarray(A, dtype=np.float64),
        int(k),
        SOFTMAX,
        float(scale),
    )
