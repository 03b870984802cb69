"""When to stop annotating, from unlabeled data alone: stabilizing predictions.

Bloodgood & Vijay-Shanker (2009) keep a fixed *stop set* of unlabeled sentences, tag it with each
successive model and measure Cohen's kappa between consecutive models' tags; once the agreement
has stayed at or above a threshold (0.99) for several checks in a row (3), new labels barely change
what the model predicts, which bounds how much its F1 can still change: annotating more has
stopped paying. Here the kappa is over tokens (sequence labels).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

THRESHOLD = 0.99
WINDOW = 3


def cohen_kappa(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> float:
    """Cohen's kappa between two taggings of the same tokens: ``(p_o - p_e) / (1 - p_e)`` with
    ``p_e`` the agreement expected from each tagging's label shares; 1.0 for identical taggings
    (also when both use one label only)."""
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two taggings of the same tokens needed, got shapes {x.shape} {y.shape}")
    if x.size == 0:
        raise ValueError("no tokens to compare")
    observed = float(np.mean(x == y))
    labels, inverse = np.unique(np.concatenate([x, y]), return_inverse=True)
    share_x = np.bincount(inverse[: x.size], minlength=labels.size) / x.size
    share_y = np.bincount(inverse[x.size :], minlength=labels.size) / x.size
    expected = float(share_x @ share_y)
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def stop_point(kappas: Sequence[float], threshold: float = THRESHOLD, window: int = WINDOW) -> int:
    """The first check (index into ``kappas``) that closes ``window`` consecutive kappas at or
    above ``threshold``; -1 while that has not happened (NaN entries never count)."""
    run = 0
    for i, k in enumerate(kappas):
        run = run + 1 if (k is not None and np.isfinite(k) and k >= threshold) else 0
        if run >= window:
            return i
    return -1
