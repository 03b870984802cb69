"""A monotone map from a confidence to the accuracy seen at it, fitted on labeled tokens.

KD's vote share is a probability only as well as s is tuned, and the paper's calibration RMSE
(bins scored at their centres) rewards a tiny s whenever accuracy is near the top bin's centre,
which leaves most tokens at 1.0 and the mean confidence above the accuracy. An isotonic fit
(pool-adjacent-violators over the distinct confidence values, weighted by their counts) maps each
confidence to the accuracy of the tokens that had it, keeping the order (so rankings and AP do not
change). The mean mapped confidence over unlabeled tokens is then an estimate of their accuracy
(the lead dashboard's pool estimate). A map is two short lists: JSON, never a pickle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-decreasing fit of ``values`` (pool-adjacent-violators)."""
    fit: list[float] = []
    mass: list[float] = []
    size: list[int] = []
    for v, w in zip(np.asarray(values, float), np.asarray(weights, float), strict=True):
        fit.append(v)
        mass.append(w)
        size.append(1)
        while len(fit) > 1 and fit[-2] > fit[-1]:
            w2 = mass[-2] + mass[-1]
            merged = (fit[-2] * mass[-2] + fit[-1] * mass[-1]) / w2 if w2 > 0 else fit[-1]
            fit[-2:], mass[-2:], size[-2:] = [merged], [w2], [size[-2] + size[-1]]
    return np.repeat(fit, size)


@dataclass(frozen=True)
class CalibrationMap:
    """Piecewise-linear non-decreasing map ``x -> y`` (clipped at both ends)."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    tokens: int = 0

    @classmethod
    def fit(cls, confidence: np.ndarray, correct: np.ndarray) -> CalibrationMap:
        """The isotonic map of ``correct`` (0/1 per token) on ``confidence``."""
        conf = np.asarray(confidence, dtype=np.float64)
        ok = np.asarray(correct, dtype=np.float64)
        if conf.shape != ok.shape or conf.ndim != 1 or conf.size == 0:
            raise ValueError("need one confidence and one correctness per token (and a token)")
        if not np.all(np.isfinite(conf)):
            raise ValueError("confidence values must be finite")
        x, inverse, counts = np.unique(conf, return_inverse=True, return_counts=True)
        hits = np.bincount(inverse, weights=ok, minlength=x.size)
        y = isotonic(hits / counts, counts)
        return cls(tuple(map(float, x)), tuple(map(float, y)), int(conf.size))

    def __call__(self, confidence: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(confidence, dtype=np.float64), self.x, self.y)

    def to_dict(self) -> dict[str, Any]:
        return {"x": list(self.x), "y": list(self.y), "tokens": self.tokens}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> CalibrationMap | None:
        """The map stored by ``to_dict`` (``None`` for none or a malformed entry)."""
        if not data:
            return None
        x, y = data.get("x"), data.get("y")
        if not isinstance(x, Sequence) or not isinstance(y, Sequence) or len(x) != len(y) or not x:
            return None
        try:
            xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if np.any(np.diff(xs) <= 0) or np.any(np.diff(ys) < 0) or not np.all(np.isfinite(ys)):
            return None
        return cls(tuple(map(float, xs)), tuple(map(float, ys)), int(data.get("tokens", 0)))
