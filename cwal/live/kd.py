"""KD-PC / KD-Fixed for the live service, computed from a row snapshot of the live model.

The live model changes under a lock; scoring must not hold that lock for a second. So the session
copies, under the lock, only the rows of the features a batch uses (averaged mean and covariance,
a few milliseconds) into a :class:`Rows` snapshot (:mod:`cwal.confidence.rows`, the same snapshot
the strategy objects rank on), and scoring runs on it off the lock through :class:`RowsModel`.
"""

from __future__ import annotations

import numpy as np

from cwal.confidence import Confidence, estimate
from cwal.confidence.rows import Rows, RowsModel, codec_of, decoder_of, rows_for, take_rows

S_GRID = tuple(float(s) for s in np.logspace(-4, 0, 9))
"""Scales tuned over on the prequential record (two a decade in [1e-4, 1], as
``cwal.confidence.tuning``'s starting grid)."""


def confidence(rows: Rows, method: str, s: float, *, k: int, seed: int, rank: str) -> Confidence:
    """KD confidence of the snapshot's batch (``method`` kd-pc or kd-fixed; KD-PC falls back
    to KD-Fixed for a learner without a covariance)."""
    if method == "kd-pc" and not rows.has_covariance:
        method = "kd-fixed"
    return estimate(RowsModel(rows), rows.enc, method, k=k, s=s, seed=seed, rank=rank)


__all__ = [
    "S_GRID",
    "Rows",
    "RowsModel",
    "codec_of",
    "confidence",
    "decoder_of",
    "rows_for",
    "take_rows",
]
