"""Bootstrap intervals of the agreement measures: sentences drawn with replacement.

Every measure is a function of column sums of the per-sentence counts
(``cwal.measures.agreement_counts``), so a replicate's sums are the multiplicity of each sentence
in the draw times the counts: one matrix product for a block of replicates, fast enough for
tens of thousands of sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

_BLOCK = 64  # replicates per matrix product (64 x rows float32 stays in cache for 16K rows)

Estimate = Callable[[np.ndarray], dict[Hashable, np.ndarray]]
"""Column sums (shape ``(..., columns)``) -> every measure's value (shape ``(...)``)."""


def resampled_sums(stats: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``replicates`` resamples of the rows (drawn with replacement): each
    replicate's multiplicity of every row, then a block of them times the rows in one product
    (single-threaded BLAS: the machine is shared, and small products gain nothing from threads
    that wait for cores)."""
    from threadpoolctl import threadpool_limits

    n = stats.shape[0]
    out = np.empty((replicates, stats.shape[1]))
    weights = np.empty((min(_BLOCK, replicates), n), dtype=stats.dtype)
    with threadpool_limits(1):
        for start in range(0, replicates, _BLOCK):
            stop = min(replicates, start + _BLOCK)
            for j in range(stop - start):
                weights[j] = np.bincount(rng.integers(0, n, size=n), minlength=n)
            out[start:stop] = weights[: stop - start] @ stats
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
