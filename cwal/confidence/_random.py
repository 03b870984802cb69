"""Counter-based Gaussian noise: normal(seed, c) depends only on the seed and the counter c.

A SplitMix64 hash of ``seed + c * golden`` feeds a 256-layer ziggurat (Marsaglia & Tsang 2000; the
layer index and the uniform come from disjoint bits, as Doornik 2005 advises), two 32-bit values
per hash as numpy's float32 generator does. Because a value is a pure function of its counter, the
noise of a feature does not depend on which other sentences share the batch, on thread scheduling,
or on the order of generation. A row is made in passes (hashes, then the fast path of every word
without a branch, so that it vectorises, then the ~1.5% rejected words): ~4-5 ns per value on one
loaded core, ~1.5x the one-pass loop with its sign branch and 2x numpy's float32
``standard_normal`` here, which matters when KD-PC draws K x |active features| x L values per pool
refresh.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

_LAYERS = 256
_R = 3.6541528853610088  # right edge of the base layer for 256 layers
_MASK64 = (1 << 64) - 1
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_U52 = 2.0**-52
_U53 = 2.0**-53


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ziggurat tables: ``width[i] / 2**52`` (scale of a 52-bit integer), the fast-accept bound
    ``ki[i]`` (integer below which the point is under the curve for sure), ``fx[i] = f(x_i)``."""

    def f(x: float) -> float:
        return math.exp(-0.5 * x * x)

    v = _R * f(_R) + math.sqrt(math.pi / 2) * math.erfc(_R / math.sqrt(2))  # area of each layer
    x = np.zeros(_LAYERS + 1)
    x[0], x[1] = v / f(_R), _R
    for i in range(1, _LAYERS - 1):
        x[i + 1] = math.sqrt(-2.0 * math.log(v / x[i] + f(x[i])))
    width = x[:_LAYERS] * _U52
    ki = np.floor(x[1:] / x[:_LAYERS] * 2.0**52).astype(np.uint64)
    fx = np.array([f(t) for t in x])
    return width, ki, fx


_WIDTH, _KI, _FX = _tables()
# The same layers for a 32-bit word (8 bits layer, 1 sign, 23 bits uniform): two values a hash.
_WIDTH32 = _WIDTH * 2.0**29
_KI32 = np.floor(np.append(_WIDTH[1:], 0.0) / _WIDTH * 2.0**23).astype(np.uint64)
_KI32F = _KI32.astype(np.float64)  # exact (< 2**23): a float compare vectorises, unsigned not


def mix64(z: int) -> int:
    """SplitMix64 finaliser on Python ints (used to derive stream offsets from a user seed)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def stream(seed: int, purpose: int) -> np.uint64:
    """The 64-bit offset of one independent noise stream (``purpose`` 1 = weights, 2 = transitions,
    3 = per-token noise, ...) for a user seed."""
    return np.uint64(mix64(mix64(int(seed) & _MASK64) + purpose * 0x9E3779B97F4A7C15))


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True, inline="always")
def _uniform(h):
    """A uniform in (0, 1) from the top 53 bits of ``h`` (never 0, so its log is finite)."""
    return (np.float64(h >> np.uint64(11)) + 0.5) * _U53


@numba.njit(cache=True, nogil=True)
def _slow(h, width, ki, fx):
    """The rare rejection path of the ziggurat for a first draw ``h`` that missed the fast test:
    wedge test, base-layer tail, or a fresh draw from a sub-stream seeded by ``h``."""
    sub = _mix(h ^ GOLDEN)
    while True:
        idx = h & np.uint64(255)
        neg = (h >> np.uint64(8)) & np.uint64(1)
        rabs = h >> np.uint64(12)
        x = np.float64(rabs) * width[idx]
        if rabs < ki[idx]:
            return -x if neg else x
        if idx == 0:  # tail beyond R (Marsaglia 1964)
            while True:
                sub += GOLDEN
                xx = -math.log(_uniform(_mix(sub))) / _R
                sub += GOLDEN
                yy = -math.log(_uniform(_mix(sub)))
                if yy + yy > xx * xx:
                    break
            return -(_R + xx) if neg else _R + xx
        sub += GOLDEN
        y = fx[idx] + _uniform(_mix(sub)) * (fx[idx + 1] - fx[idx])
        if y < math.exp(-0.5 * x * x):
            return -x if neg else x
        sub += GOLDEN
        h = _mix(sub)


@numba.njit(cache=True, nogil=True)
def _slow32(v, h, width32, width, ki, fx):
    """The rejection path for a 32-bit word ``v`` (of hash ``h``) that missed the fast test:
    tail or wedge test on this very point, then, if rejected, a fresh 64-bit ziggurat draw."""
    idx = v & np.uint64(255)
    neg = (v >> np.uint64(8)) & np.uint64(1)
    x = np.float64(v >> np.uint64(9)) * width32[idx]
    sub = _mix(h ^ (v * GOLDEN))
    if idx == 0:
        while True:
            sub += GOLDEN
            xx = -math.log(_uniform(_mix(sub))) / _R
            sub += GOLDEN
            yy = -math.log(_uniform(_mix(sub)))
            if yy + yy > xx * xx:
                break
        return -(_R + xx) if neg else _R + xx
    sub += GOLDEN
    y = fx[idx] + _uniform(_mix(sub)) * (fx[idx + 1] - fx[idx])
    if y < math.exp(-0.5 * x * x):
        return -x if neg else x
    sub += GOLDEN
    return _slow(_mix(sub), width, ki, fx)


@numba.njit(cache=True, nogil=True)
def _fill_rows(seed, keys, table, rows, s, K, out, u0, u1):
    """Rows ``u0:u1`` of :func:`_fill_scaled`, in three passes a row: hash into 32-bit words,
    then the ziggurat's fast path for all of them without branches (it vectorises; a branch per
    value and its random sign cost more than the arithmetic), then the rare rejected words
    (about 1 in 80) through the exact slow path. Same values as one pass doing both."""
    L = table.shape[1]
    W = L * K
    H = (W + 1) // 2
    words = np.empty(2 * H, dtype=np.uint32)
    rejected = np.zeros((W + 7) // 8 * 8, dtype=np.uint8)
    flags = rejected.view(np.uint64)  # scanned 8 flags at a time: rejections are rare
    sd = np.empty(W)
    ki32 = _KI32F
    width32 = _WIDTH32
    for u in range(u0, u1):
        row = out[u]
        r = rows[u] if rows.shape[0] else u
        for j in range(L):
            sdj = math.sqrt(s * table[r, j]) if s >= 0.0 else table[r, j]
            for k in range(j * K, (j + 1) * K):
                sd[k] = sdj
        base = np.uint64(keys[u]) * np.uint64(H)
        for p in range(H):
            h = _mix(seed + (base + np.uint64(p)) * GOLDEN)
            words[p] = np.uint32(h & np.uint64(0xFFFFFFFF))
            words[H + p] = np.uint32(h >> np.uint64(32))
        n_rejected = 0
        for q in range(W):
            v = words[q]
            idx = v & np.uint32(255)
            rabs = np.float64(np.int32(v >> np.uint32(9)))
            sign = 1.0 - 2.0 * np.float64(np.int32((v >> np.uint32(8)) & np.uint32(1)))
            row[q] = rabs * width32[idx] * sign
            miss = rabs >= ki32[idx]
            rejected[q] = miss
            n_rejected += miss
        for b in range(flags.shape[0] if n_rejected else 0):
            if flags[b] == 0:
                continue
            for q in range(8 * b, min(8 * b + 8, W)):
                if rejected[q]:
                    p = q if q < H else q - H
                    h = _mix(seed + (base + np.uint64(p)) * GOLDEN)
                    row[q] = _slow32(np.uint64(words[q]), h, width32, _WIDTH, _KI, _FX)
        for q in range(W):
            row[q] *= sd[q]


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_scaled(seed, keys, table, rows, s, K, out, runs):
    """Row u: ``sd[u, j] * N(0, 1)`` at ``out[u, j*K + k]``, where ``sd[u] = table[u]`` (``s`` < 0)
    or ``sqrt(s * table[rows[u]])`` (a variance table, read in place). Hash number
    ``keys[u] * H + p`` (H = half the row, rounded up) gives the values at p (low 32 bits) and
    H + p (high)."""
    U = keys.shape[0]
    runs = max(min(U, runs), 1)
    for r in prange(runs):
        _fill_rows(seed, keys, table, rows, s, K, out, U * r // runs, U * (r + 1) // runs)


def scaled_normals(
    seed: np.uint64,
    keys: np.ndarray,
    scale: np.ndarray,
    k: int,
    dtype: type = np.float32,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """``(U, L * k)`` Gaussian noise, row u = ``scale[u, j] * N(0, 1)`` for k draws of each label j.

    Row u's values are a function of ``(seed, keys[u], k)`` only: a feature keeps its noise
    whatever else is in the batch. A zero scale gives exact zeros. ``out`` (C-contiguous, of that
    shape and ``dtype``) is filled instead of a new array.
    """
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if scale.ndim != 2 or keys.shape != (scale.shape[0],):
        raise ValueError(
            f"scale must be (U, L) with U = len(keys), got {scale.shape}, {keys.shape}"
        )
    return _fill(seed, keys, scale, np.zeros(0, np.int64), -1.0, k, dtype, out)


def _fill(seed, keys, table, rows, s, k, dtype, out):
    """Rows of ``len(keys)`` x ``table.shape[1] * k`` values into ``out`` (checked: C-contiguous,
    that shape and ``dtype``) or a new array."""
    shape = (keys.shape[0], table.shape[1] * int(k))
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape or out.dtype != np.dtype(dtype) or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {np.dtype(dtype)} array of shape {shape}")
    _fill_scaled(np.uint64(seed), keys, table, rows, float(s), int(k), out,
                 8 * numba.get_num_threads())  # fmt: skip
    return out


def variance_normals(
    seed: np.uint64,
    keys: np.ndarray,
    var: np.ndarray,
    rows: np.ndarray,
    s: float,
    k: int,
    dtype: type = np.float32,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`scaled_normals` with ``scale = sqrt(s * var[rows])``, computed row by row in the
    kernel (no gathered copy of the variance rows; the same values)."""
    var = np.ascontiguousarray(var, dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if not np.isfinite(s) or s < 0:
        raise ValueError(f"s must be a finite non-negative scale, got {s}")
    if var.ndim != 2 or keys.shape != rows.shape:
        raise ValueError(f"var must be 2-D and rows match keys, got {var.shape}, {rows.shape}")
    return _fill(seed, keys, var, rows, s, k, dtype, out)
