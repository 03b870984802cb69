"""The faster KD kernels give the values of their plain one-pass definitions: the vectorised
ziggurat (32-bit hash, eight-lane fast path, exact slow path) against a scalar reference of the
same stream, the in-kernel variance scaling, the margin kernel's votes against the Viterbi votes,
and the reading of active features in order of first occurrence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cwal.confidence import _random as rnd
from cwal.confidence._kernels import kd_vote_kernel
from cwal.confidence._random import scaled_normals, stream, variance_normals
from cwal.confidence.sampling import _active

MASK = (1 << 64) - 1
M32 = (1 << 32) - 1


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _lowbias32(x: int) -> int:
    x = ((x ^ (x >> 16)) * 0x7FEB352D) & M32
    x = ((x ^ (x >> 15)) * 0x846CA68B) & M32
    return x ^ (x >> 16)


def word(seed: int, key: int, q: int) -> tuple[int, int]:
    """The 32-bit word of position q of row ``key``, and the row's 64-bit key."""
    h = _mix((seed + key * 0x9E3779B97F4A7C15) & MASK)
    return _lowbias32(_lowbias32((q * 0x9E3779B9 + (h & M32)) & M32) ^ (h >> 32)), h


def _reference(seed: int, key: int, scale: np.ndarray, k: int, dtype) -> np.ndarray:
    """One row, value by value: word q = 10 bits layer, 1 sign, 21 bits uniform; through the
    ziggurat's fast test in the output's precision (``(rabs * width) * (+-scale)``, scale
    rounded to it), else the module's slow path in float64, seeded by row key, q and word."""
    width = rnd._WIDTH32F if dtype == np.float32 else rnd._WIDTH32
    row = np.empty(scale.shape[0] * k, dtype=dtype)
    for q in range(row.size):
        v, h = word(seed, key, q)
        idx, neg, rabs = v & 1023, (v >> 10) & 1, v >> 11
        sd = dtype(scale[q // k])
        if rabs < int(rnd._KI32[idx]):
            row[q] = (dtype(rabs) * width[idx]) * (-sd if neg else sd)
        else:
            sub = np.uint64(_mix(h ^ ((q << 32) | v)))
            x = rnd._slow32(np.uint64(v), sub, rnd._WIDTH32, rnd._WIDTH, rnd._KI, rnd._FX)
            row[q] = dtype(x * np.float64(sd))
    return row


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 4, 25])
def test_vectorised_generator_equals_the_scalar_definition(dtype, k):
    rng = np.random.default_rng(3)
    keys = np.array([0, 7, 123456, 2**40 + 5])
    scale = rng.random((keys.size, 3)) + 0.25
    scale[1, 2] = 0.0
    seed = stream(11, 1)
    got = scaled_normals(seed, keys, scale, k, dtype)
    for u, key in enumerate(keys):
        want = _reference(int(seed), int(key), scale[u], k, dtype)
        assert np.array_equal(got[u], want)


def test_rejections_are_taken_and_the_tail_reached():
    """Enough values that the slow path (wedges, tail beyond R) runs many times: the row-wise
    kernel still matches the reference on a row that has rejections."""
    seed = int(stream(5, 1))
    for dtype in (np.float64, np.float32):
        z = scaled_normals(stream(5, 1), np.arange(2000), np.ones((2000, 9)), 25, dtype)
        tail = int(np.abs(z).max(axis=1).argmax())
        assert np.abs(z[tail]).max() > rnd._R  # the tail was sampled
        missed = [key for key in range(10) if any(
            word(seed, key, q)[0] >> 11 >= rnd._KI32[word(seed, key, q)[0] & 1023]
            for q in range(225))]  # fmt: skip
        assert len(missed) >= 3
        for key in (*missed[:3], tail):
            assert np.array_equal(z[key], _reference(seed, key, np.ones(9), 25, dtype))


def test_variance_normals_scale_rows_in_place():
    rng = np.random.default_rng(1)
    var = rng.random((50, 4))
    rows = np.array([7, 3, 49, 0, 3])
    keys = rows * 3 + 1
    for s in (0.0, 0.1, 2.5):
        a = variance_normals(stream(2, 1), keys, var, rows, s, 6)
        b = scaled_normals(stream(2, 1), keys, np.sqrt(s * var[rows]), 6)
        assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        variance_normals(stream(2, 1), keys, var, rows[:2], 0.1, 6)


def test_active_features_in_order_of_first_occurrence():
    feat_ids = np.array([9, 4, 9, 2, 4, 7, 2], dtype=np.int32)
    active, local = _active(feat_ids, 12)
    assert active.tolist() == [9, 4, 2, 7]
    assert np.array_equal(active[local], feat_ids)
    active2, local2 = _active(feat_ids[::-1].copy(), 12)  # the workspace was left clean
    assert active2.tolist() == [2, 7, 4, 9]
    assert np.array_equal(active2[local2], feat_ids[::-1])


@pytest.mark.parametrize("L", [1, 2, 5])
def test_margin_mode_votes_equal_viterbi_votes(L):
    """Mode 2 reads each draw's label off its max-marginals, mode 1 backtracks Viterbi: with
    continuous scores (no ties) the votes agree; mode 3 (timing) leaves the outputs alone."""
    rng = np.random.default_rng(L)
    lengths = [1, 4, 9, 2]
    sent = np.concatenate([[0], np.cumsum(lengths)])
    n, F, k = int(sent[-1]), 20, 11
    feats = rng.integers(0, F, size=3 * n).astype(np.int32)
    tok = np.arange(0, 3 * n + 1, 3)
    Emean = rng.normal(size=(n, L)).astype(np.float32)
    Z = rng.normal(size=(F, L * k)).astype(np.float32)
    AK = rng.normal(size=(L + 2, L, k)).astype(np.float32)
    y = rng.integers(0, L, size=n).astype(np.int32)
    votes, _ = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, 1, 3)
    counts, msum = kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, 2, 3)
    assert np.array_equal(votes, counts)
    assert np.all(counts.sum(axis=1) == k)
    if L == 1:
        assert np.all(np.isinf(msum))
    else:
        assert np.all(np.isfinite(msum))
        assert np.all((msum > 0) | (counts[np.arange(n), y] < k))
    assert math.isfinite(float(kd_vote_kernel(feats, tok, sent, Emean, Z, AK, y, 3, 3)[1].sum()))
