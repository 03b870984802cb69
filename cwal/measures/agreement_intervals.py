"""Bootstrap intervals of the agreement measures: sentences drawn with replacement.

Every measure is a function of column sums of the per-sentence counts
(``cwal.measures.agreement_counts``), so a replicate's sums are the multiplicity of each sentence
in the draw times the counts: one matrix product for a block of replicates, fast enough for
tens of thousands of sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

Estimate = Callable[[np.ndarray], dict[Hashable, np.ndarray]]
"""Column sums (shape ``(..., columns)``) -> every measure's value (shape ``(...)``)."""


def resampled_sums(stats: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``replicates`` resamples of the rows (drawn with replacement): the
    multiplicity of each row times the rows, in blocks to bound memory."""
    n = stats.shape[0]
    out = np.empty((replicates, stats.shape[1]))
    block = max(1, min(replicates, 2**24 // max(n, 1)))
    for start in range(0, replicates, block):
        stop = min(replicates, start + block)
        draws = rng.integers(0, n, size=(stop - start, n))
        draws += np.arange(stop - start)[:, None] * n  # one bin range per replicate
        counts = np.bincount(draws.ravel(), minlength=(stop - start) * n)
        out[start:stop] = counts.reshape(stop - start, n).astype(np.float32) @ stats
    return out


def percentile_intervals(
    stats: np.ndarray, estimate: Estimate, *, replicates: int, level: float, seed: int
) -> dict[Hashable, tuple[float, float]]:
    """Every measure's ``level`` percentile interval over ``replicates`` resamples of the rows
    of ``stats`` (seeded; replicates where a measure is undefined are left out; NaN when every
    one is)."""
    total = stats.sum(axis=0)
    rng = np.random.default_rng(seed)
    used = np.flatnonzero(total)  # columns that are zero everywhere stay zero in every resample
    sums = np.zeros((replicates, stats.shape[1]))
    sums[:, used] = resampled_sums(stats[:, used].astype(np.float32), replicates, rng)
    tail = (1 - level) / 2 * 100
    out: dict[Hashable, tuple[float, float]] = {}
    for key, reps in estimate(sums).items():
        reps = reps[np.isfinite(reps)]
        low, high = np.percentile(reps, [tail, 100 - tail]) if reps.size else (np.nan, np.nan)
        out[key] = (float(low), float(high))
    return out
