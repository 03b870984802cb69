"""The counter-based normal generator is a standard normal: moments, a Kolmogorov-Smirnov test on
a million values, the tail frequencies, and no correlation between neighbouring positions, rows
(feature keys) or streams; the portable gather path gives the values of the AVX2 one."""

from __future__ import annotations

import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy import stats

from cwal.confidence import _random as rnd
from cwal.confidence._random import scaled_normals, stream


@pytest.fixture(scope="module")
def z() -> np.ndarray:
    """4,500 rows (keys 0..4499) x 9 labels x 25 draws of stream (0, 1), in float64."""
    return scaled_normals(stream(0, 1), np.arange(4500), np.ones((4500, 9)), 25, np.float64)


def test_moments_and_kolmogorov_smirnov(z):
    x = z.ravel()[:1_000_000]
    n = x.size
    assert abs(x.mean()) < 5 / np.sqrt(n)
    assert abs(x.var() - 1) < 5 * np.sqrt(2 / n)
    assert abs(stats.skew(x)) < 5 * np.sqrt(6 / n)
    assert abs(stats.kurtosis(x)) < 5 * np.sqrt(24 / n)
    assert stats.kstest(x, "norm").pvalue > 1e-3


@pytest.mark.parametrize("t", [1.0, 2.0, 3.0, 4.0])
def test_tail_frequencies(z, t):
    x = np.abs(z.ravel())
    p = 2 * stats.norm.sf(t)
    hits = int((x > t).sum())
    assert abs(hits - p * x.size) < 5 * np.sqrt(p * (1 - p) * x.size) + 1


def test_neighbours_are_uncorrelated(z):
    """Adjacent positions of a row (adjacent counters), adjacent keys, adjacent streams and
    seeds, and the magnitudes of adjacent values all look independent."""
    bound = 5 / np.sqrt(z.size)
    flat = z.ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < bound
    assert abs(np.corrcoef(z[:-1].ravel(), z[1:].ravel())[0, 1]) < bound
    other = scaled_normals(stream(0, 2), np.arange(4500), np.ones((4500, 9)), 25, np.float64)
    assert abs(np.corrcoef(flat, other.ravel())[0, 1]) < bound
    seed1 = scaled_normals(stream(1, 1), np.arange(4500), np.ones((4500, 9)), 25, np.float64)
    assert abs(np.corrcoef(flat, seed1.ravel())[0, 1]) < bound
    sq = flat**2  # dependence in magnitude (layer) between neighbours
    assert abs(np.corrcoef(sq[:-1], sq[1:])[0, 1]) < bound


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_portable_gather_path_gives_the_same_values(monkeypatch, dtype):
    """Hosts without AVX2 get LLVM's generic masked gather: the same values."""
    keys = np.array([3, 99, 2**33 + 1])
    scale = np.random.default_rng(0).random((3, 4)) + 0.5
    want = scaled_normals(stream(4, 1), keys, scale, 25, dtype)
    monkeypatch.setattr(rnd, "_AVX2", False)
    fill = numba.njit(rnd._fill_rows.py_func)  # a fresh compilation sees the flag
    got = np.empty_like(want)
    width = rnd._WIDTH32F if dtype == np.float32 else rnd._WIDTH32
    fill(stream(4, 1), keys, scale, np.zeros(0, np.int64), -1.0, 25, got, width, 0, 3)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ir_kernel_gives_the_values_of_the_plain_numba_generator(dtype):
    """bench/noise.py's one-value-at-a-time numba version of the generator (the reference the IR
    kernel's speed is measured against) gives the same bits, slow-path words included."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import noise

    keys = np.array([0, 1, 7, 2**40 + 3] + list(range(100, 400)))
    scale = np.random.default_rng(1).random((keys.size, 5)) + 0.1
    want = scaled_normals(stream(9, 3), keys, scale, 31, dtype)
    assert np.array_equal(noise.plain_normals(stream(9, 3), keys, scale, 31, dtype), want)
    misses = np.abs(want / np.repeat(scale, 31, axis=1)) > rnd._R  # tails: slow path only
    assert misses.any()
