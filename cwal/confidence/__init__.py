"""Per-token confidence for a batch of sentences: KD-PC, KD-Fixed, KBV, WKBV, Delta, the
N-best soft-max (``nbest-softmax``) and, for ``maxent-l1``, its own probability (``maxent``).

``estimate(model, sentences, method, k=, s=, seed=)`` returns a :class:`Confidence` (predicted
labels, confidence, label distribution and entropy of the draws, Delta margin, the draws' mean
margin, and a ``rank_key`` that orders tokens least confident first without ties); ``tune`` picks s and K on held-out labeled sentences (docs/algorithms.md §3, §5) and
``fit_map`` maps KD's draw margin to accuracy on them.
"""

from cwal.confidence.core import (
    DEFAULT_K,
    DEFAULT_RANK,
    DEFAULT_S,
    METHODS,
    NEEDS_COVARIANCE,
    RANKS,
    SAMPLING,
    estimate,
)
from cwal.confidence.result import Confidence, rank_key
from cwal.confidence.tuning import CRITERIA, Tuned, draw_signal, fit_map, search_scale, tune

__all__ = [
    "CRITERIA",
    "DEFAULT_K",
    "DEFAULT_S",
    "DEFAULT_RANK",
    "METHODS",
    "NEEDS_COVARIANCE",
    "SAMPLING",
    "RANKS",
    "Confidence",
    "Tuned",
    "draw_signal",
    "estimate",
    "fit_map",
    "rank_key",
    "search_scale",
    "tune",
]
