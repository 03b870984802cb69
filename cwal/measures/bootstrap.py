"""How sure a difference between two confidence methods is: a paired bootstrap over sentences.

Tokens of one sentence share features, context and often their error, so they are not independent
draws: resampling tokens would understate the spread. These functions resample whole sentences
(with replacement, the same sentences for both methods, since they scored the same tokens) and
recompute a measure on each resample, for measures that are not sums over tokens (calibration
RMSE, ECE, AP).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Measure = Callable[..., float]


def sentence_bootstrap(
    measure: Measure,
    lengths: Sequence[int] | np.ndarray,
    *arrays: np.ndarray,
    replicates: int = 1000,
    seed: int = 0,
) -> np.ndarray:
    """``measure(*arrays)`` on ``replicates`` resamples of whole sentences.

    ``lengths`` are the sentences' token counts in order; every array holds one value per token
    of those sentences, concatenated. Seeded: the same call gives the same values."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.ndim != 1 or lengths.size == 0 or np.any(lengths < 0):
        raise ValueError("lengths must be a non-empty list of token counts")
    total = int(lengths.sum())
    cols = [np.asarray(a) for a in arrays]
    for i, a in enumerate(cols):
        if a.shape[:1] != (total,):
            raise ValueError(f"array {i} has {a.shape[0]} values for {total} tokens")
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    rng = np.random.default_rng(seed)
    n = lengths.size
    tokens = np.arange(total)
    out = np.empty(replicates)
    for r in range(replicates):
        counts = rng.multinomial(n, np.full(n, 1.0 / n))
        idx = np.repeat(tokens, np.repeat(counts, lengths))
        out[r] = measure(*(a[idx] for a in cols))
    return out


@dataclass(frozen=True)
class Difference:
    """``measure(a) - measure(b)`` on the data, and its bootstrap interval at ``level``."""

    value: float
    low: float
    high: float
    level: float

    @property
    def significant(self) -> bool:
        """The interval excludes 0."""
        return self.low > 0 or self.high < 0


def paired_difference(
    measure: Callable[[np.ndarray, np.ndarray], float],
    lengths: Sequence[int] | np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    correct: np.ndarray,
    correct_b: np.ndarray | None = None,
    *,
    replicates: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Difference:
    """``measure(a, correct) - measure(b, correct_b)`` with a percentile interval from a paired
    sentence bootstrap (both methods see the same resampled sentences). ``correct_b`` (default
    ``correct``) is for a method whose own model labeled the tokens, e.g. a CRF's marginals."""
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    ok_b = correct if correct_b is None else correct_b

    def diff(x: np.ndarray, y: np.ndarray, ok: np.ndarray, ok2: np.ndarray) -> float:
        return measure(x, ok) - measure(y, ok2)

    values = sentence_bootstrap(diff, lengths, a, b, correct, ok_b, replicates=replicates,
                                seed=seed)  # fmt: skip
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    here = diff(np.asarray(a), np.asarray(b), np.asarray(correct), np.asarray(ok_b))
    return Difference(here, float(low), float(high), level)
