"""When to stop annotating, from unlabeled data alone: stabilizing predictions.

Bloodgood & Vijay-Shanker (2009) keep a fixed *stop set* of unlabeled sentences, tag it with each
successive model and measure Cohen's kappa between consecutive models' tags; once the agreement
has stayed at or above a threshold (0.99) for several checks in a row (3), new labels barely change
what the model predicts, which bounds how much its F1 can still change: annotating more has
stopped paying. Here the kappa is over tokens (sequence labels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Signal:
    """The stopping signal of a live project: ``kappas`` between consecutive consolidated
    models (oldest first, up to ``WINDOW``), the model ``versions`` they compare, and whether
    the last ``WINDOW`` all reach ``threshold``."""

    kappas: list[float]
    versions: list[int]
    fired: bool
    threshold: float = THRESHOLD

    def message(self) -> str:
        """What it tells a lead, in one sentence."""
        if not self.kappas:
            return ("Stopping signal: needs two consolidated models to compare (one every "
                    "consolidation interval of labels).")  # fmt: skip
        shown = ", ".join(f"{k:.3f}" for k in self.kappas)
        if self.fired:
            return (f"Annotating more has stopped paying: the last {len(self.kappas)} models "
                    f"tag the stop set alike (kappa {shown} ≥ {self.threshold}), so further "
                    "labels will change the model's predictions, and its F1, very little.")  # fmt: skip
        return (f"Keep annotating: successive models still change their tags on the stop set "
                f"(kappa {shown}; the signal needs {WINDOW} in a row ≥ {self.threshold}).")  # fmt: skip


def stabilizing(kappas: Sequence[float], versions: Sequence[int]) -> Signal:
    """The signal from the kappas of the last consecutive model pairs (oldest first)."""
    recent = [float(k) for k in kappas][-WINDOW:]
    fired = len(recent) == WINDOW and stop_point(recent) == WINDOW - 1
    return Signal(recent, [int(v) for v in versions], fired)
