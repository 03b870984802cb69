"""The KD vote kernel decodes its K draws in padded SIMD lanes and backtracks votes from the
forward scores: against a per-draw reference (each draw's emissions summed in float64, then
``cwal.decode``'s Viterbi and max-marginals), for K that are and are not multiples of the lane
count, antithetic noise, and integer-valued scores where ties are everywhere."""

from __future__ import annotations

import numpy as np
import pytest

from cwal.confidence._kernels import kd_vote_kernel
from cwal.decode import max_marginals_batch, viterbi_batch


def _batch(L: int, k: int, kz: int, integer: bool, seed: int):
    rng = np.random.default_rng(seed)
    lengths = [1, 5, 3, 12, 2]
    sent = np.concatenate([[0], np.cumsum(lengths)])
    n, F = int(sent[-1]), 15
    per = rng.integers(0, 4, size=n)  # tokens with no features too
    tok = np.concatenate([[0], np.cumsum(per)])
    feats = rng.integers(0, F, size=int(tok[-1])).astype(np.int32)
    if integer:  # small integers: sums are exact in float32, and ties are common
        draw = lambda *shape: rng.integers(-2, 3, size=shape).astype(np.float32)  # noqa: E731
    else:
        draw = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    Emean, Z, AK = draw(n, L), draw(F, L * kz), draw(L + 2, L, k)
    y = rng.integers(0, L, size=n).astype(np.int32)
    return feats, tok, sent, Emean, Z, AK, y


def _draw_emissions(feats, tok, Emean, Z, k, d):
    """Draw d's emissions (draw ``kz + i`` mirrors draw i's noise)."""
    n, L = Emean.shape
    kz = Z.shape[1] // L
    col, sign = (d, 1.0) if d < kz else (d - kz, -1.0)
    E = Emean.astype(np.float64).copy()
    for t in range(n):
        for f in feats[tok[t] : tok[t + 1]]:
            E[t] += sign * Z[f].reshape(L, kz)[:, col]
    return E


@pytest.mark.parametrize("k,kz", [(1, 1), (3, 2), (8, 4), (11, 6), (21, 21)])
@pytest.mark.parametrize("L", [1, 2, 4])
def test_votes_equal_per_draw_viterbi_even_with_ties(k, kz, L):
    feats, tok, sent, Emean, Z, AK, y = _batch(L, k, kz, integer=True, seed=k * 10 + L)
    n = len(Emean)
    votes, _ = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, 1, 2)
    expected = np.zeros((n, L), np.int32)
    for d in range(k):
        E = _draw_emissions(feats, tok, Emean, Z, k, d)
        expected[np.arange(n), viterbi_batch(E, sent, AK[:, :, d].astype(np.float64))] += 1
    assert np.array_equal(votes, expected)


@pytest.mark.parametrize("k,kz", [(5, 3), (8, 8), (13, 7)])
def test_margins_equal_per_draw_max_marginals(k, kz):
    L = 3
    feats, tok, sent, Emean, Z, AK, y = _batch(L, k, kz, integer=False, seed=k)
    n = len(Emean)
    counts, msum = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, 2, 3)
    rows = np.arange(n)
    expected = np.zeros((n, L), np.int32)
    margin = np.zeros(n)
    for d in range(k):
        E = _draw_emissions(feats, tok, Emean, Z, k, d)
        MM = max_marginals_batch(E, sent, AK[:, :, d].astype(np.float64))
        expected[rows, MM.argmax(axis=1)] += 1
        own = MM[rows, y].copy()
        MM[rows, y] = -np.inf
        margin += own - MM.max(axis=1)
    assert np.array_equal(counts, expected)  # padding lanes are never counted
    assert np.allclose(msum, margin, rtol=1e-4, atol=1e-3)


def test_thread_runs_do_not_change_the_result():
    feats, tok, sent, Emean, Z, AK, y = _batch(4, 11, 6, integer=True, seed=1)
    for mode in (1, 2):
        a = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, mode, 1)
        b = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, mode, 4)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
