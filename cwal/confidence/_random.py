"""Counter-based Gaussian noise: value q of row ``key`` depends only on (seed, key, q).

A row's 64-bit key ``mix64(seed + key * golden)`` (SplitMix64) gives two 32-bit words lo, hi;
the word of position q is ``lowbias32(lowbias32(q * golden32 + lo) ^ hi)`` (Wellons' 32-bit
finaliser, twice, keyed in between), all in 32-bit arithmetic, which AVX2 runs 8 lanes at a time
(64-bit products have no AVX2 instruction; the SplitMix64-per-value generator before this one
spent most of its time emulating them). Each word feeds a 1024-layer ziggurat (Marsaglia & Tsang
2000): 10 bits layer, 1 sign, 21 bits uniform, disjoint as Doornik 2005 advises. 0.4% of words
miss the fast test and take the exact slow path (wedge test, Marsaglia's tail beyond R, or a
fresh 64-bit ziggurat draw), from a sub-stream seeded by the row key, the position and the word.
The fast path runs eight values at once in LLVM IR (:func:`_zig8`: numba widens uint32 products
to 64 bits and keeps table lookups scalar), with AVX2 gathers where the host has them. Because a
value is a pure function of (seed, key, position), a feature's noise does not depend on which
other sentences share the batch, on thread scheduling, or on the order of generation. float32
noise is computed in float32 (the scale rounded to float32), float64 noise in float64.

Why LLVM IR and not plain numba: the same generator written one value at a time in numba
(bench/noise.py, bit-identical values) took 3.09x (float32) and 2.75x (float64) the time of this
kernel, one thread, 80,000 rows x 9 labels x 25 draws, medians of 9 interleaved runs
(`python bench/noise.py`); the noise is about a fifth of a KD-PC estimate (48.7 of 230.5 ms CPU
on 1,000 esp.testa sentences, K = 50, one thread: ``Sampler.profile``), so plain numba would make
every estimate about 1.4x slower.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

_LAYERS = 1024  # 0.4% of 32-bit words miss the fast test (1.5% with 256 layers)
_R = 4.038849846109504  # right edge of the base layer for 1024 layers
_BITS = 21  # uniform bits of a 32-bit word: 10 layer, 1 sign, 21 uniform
_MASK64 = (1 << 64) - 1
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_U52 = 2.0**-52
_U53 = 2.0**-53
_C1, _C2, _G32 = 0x7FEB352D, 0x846CA68B, 0x9E3779B9  # lowbias32 multipliers, 2**32 / phi
_I32, _I64 = ir.IntType(32), ir.IntType(64)
# AVX2 gathers when numba compiles for this host and it has them (LLVM scalarises its own)
_AVX2 = numba.config.CPU_NAME in (None, "host") and bool(llvm.get_host_cpu_features().get("avx2"))


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
# The same layers for a 32-bit word: x = (word >> 11) * _WIDTH32[layer], fast if below _KI32.
_WIDTH32 = _WIDTH * 2.0 ** (52 - _BITS)
_WIDTH32F = _WIDTH32.astype(np.float32)  # float32 noise is computed in float32 (8 lanes)
_KI32 = np.floor(np.append(_WIDTH[1:], 0.0) / _WIDTH * 2.0**_BITS).astype(np.int32)


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


@numba.njit(cache=True, nogil=True, inline="always")
def _tail(sub):
    """|x| of a draw beyond the base layer's edge R (Marsaglia 1964), from the values of the
    sub-stream after ``sub``."""
    while True:
        sub += GOLDEN
        xx = -math.log(_uniform(_mix(sub))) / _R
        sub += GOLDEN
        yy = -math.log(_uniform(_mix(sub)))
        if yy + yy > xx * xx:
            return _R + xx


@numba.njit(cache=True, nogil=True, inline="always")
def _under_curve(x, idx, sub, fx):
    """The wedge test: whether the point at ``x`` in layer ``idx`` (outside the fast-accept
    rectangle) lies under the density, by the uniform of hash ``_mix(sub)``."""
    y = fx[idx] + _uniform(_mix(sub)) * (fx[idx + 1] - fx[idx])
    return y < math.exp(-0.5 * x * x)


@numba.njit(cache=True, nogil=True)
def _slow(h, width, ki, fx):
    """The rare rejection path of the ziggurat for a first draw ``h`` that missed the fast test:
    wedge test, base-layer tail, or a fresh draw from a sub-stream seeded by ``h``."""
    sub = _mix(h ^ GOLDEN)
    while True:
        idx = h & np.uint64(_LAYERS - 1)
        neg = (h >> np.uint64(10)) & np.uint64(1)
        rabs = h >> np.uint64(12)
        x = np.float64(rabs) * width[idx]
        if rabs < ki[idx]:
            return -x if neg else x
        if idx == 0:
            t = _tail(sub)
            return -t if neg else t
        sub += GOLDEN
        if _under_curve(x, idx, sub, fx):
            return -x if neg else x
        sub += GOLDEN
        h = _mix(sub)


@numba.njit(cache=True, nogil=True)
def _slow32(v, sub, width32, width, ki, fx):
    """The rejection path for a 32-bit word ``v`` that missed the fast test, with ``sub`` a
    64-bit seed of its own: tail or wedge test on this very point, then, if rejected, a fresh
    64-bit ziggurat draw."""
    idx = v & np.uint64(_LAYERS - 1)
    neg = (v >> np.uint64(10)) & np.uint64(1)
    x = np.float64(v >> np.uint64(11)) * width32[idx]
    if idx == 0:
        t = _tail(sub)
        return -t if neg else t
    sub += GOLDEN
    if _under_curve(x, idx, sub, fx):
        return -x if neg else x
    sub += GOLDEN
    return _slow(_mix(sub), width, ki, fx)


def _const(t: ir.Type, value: int) -> ir.Constant:
    """``value`` as an i32 or a vector of i32 lanes."""
    return ir.Constant(t, [value] * t.count if isinstance(t, ir.VectorType) else value)


def _lowbias32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Wellons' lowbias32 finaliser on i32 (lanes): a bijection with near-ideal avalanche."""
    for shift, mul in ((16, _C1), (15, _C2)):
        x = b.mul(b.xor(x, b.lshr(x, _const(x.type, shift))), _const(x.type, mul))
    return b.xor(x, b.lshr(x, _const(x.type, 16)))


def _hash_ir(b: ir.IRBuilder, q: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """``lowbias32(lowbias32(q * golden32 + lo) ^ hi)`` in 32-bit arithmetic."""
    return _lowbias32(b, b.xor(_lowbias32(b, b.add(b.mul(q, _const(q.type, _G32)), lo)), hi))


@intrinsic
def _hash32(typingctx, q, lo, hi):
    """The 32-bit word of position ``q`` of a row with key words ``lo``, ``hi`` (scalar; the
    slow path and tests). Numba would widen uint32 products to 64 bits, hence LLVM IR."""

    def codegen(context, builder, sig, args):
        qq, lo_, hi_ = args
        return _hash_ir(builder, builder.trunc(qq, _I32) if qq.type != _I32 else qq, lo_, hi_)

    return types.uint32(q, types.uint32, types.uint32), codegen


def _splat(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """An i32 as eight equal lanes."""
    v8 = ir.VectorType(x.type, 8)
    one = b.insert_element(ir.Constant(v8, None), x, _I32(0))
    return b.shuffle_vector(one, one, ir.Constant(ir.VectorType(_I32, 8), [0] * 8))


def _gather8(b: ir.IRBuilder, data: ir.Value, idx: ir.Value, etype: ir.Type) -> ir.Value:
    """``data[idx]`` for eight i32 lanes of ``idx``: AVX2 gathers where the host has them
    (LLVM lowers its generic masked gather to eight scalar loads there), else the generic one."""
    size = 8 if isinstance(etype, ir.DoubleType) else 4
    if not _AVX2:
        ptrs = b.gep(data, [b.zext(idx, ir.VectorType(_I64, 8))], source_etype=etype)
        ptrs.type = ir.VectorType(ptrs.type, 8)
        vtype, mask = ir.VectorType(etype, 8), ir.Constant(ir.VectorType(ir.IntType(1), 8), [1] * 8)
        name = (
            f"llvm.masked.gather.v8{'f64' if size == 8 else 'f32' if etype != _I32 else 'i32'}.v8p0"
        )
        fn = cgutils.get_or_insert_function(
            b.module, ir.FunctionType(vtype, [ptrs.type, _I32, mask.type, vtype]), name
        )
        return b.call(fn, [ptrs, _I32(size), mask, ir.Constant(vtype, None)])
    n = 32 // size  # lanes of one AVX2 gather
    part = ir.VectorType(etype, n)
    ones = b.bitcast(ir.Constant(ir.VectorType(ir.IntType(8 * size), n), [-1] * n), part)
    kind = "pd" if size == 8 else "d" if etype == _I32 else "ps"
    fnty = ir.FunctionType(part, [part, data.type, ir.VectorType(_I32, n), part, ir.IntType(8)])
    fn = cgutils.get_or_insert_function(b.module, fnty, f"llvm.x86.avx2.gather.d.{kind}.256")
    got = []
    for first in range(0, 8, n):
        lanes = ir.Constant(ir.VectorType(_I32, n), list(range(first, first + n)))
        sub = b.shuffle_vector(idx, idx, lanes)
        got.append(b.call(fn, [ir.Constant(part, None), data, sub, ones, ir.IntType(8)(size)]))
    if n == 8:
        return got[0]
    return b.shuffle_vector(got[0], got[1], ir.Constant(ir.VectorType(_I32, 8), list(range(8))))


@intrinsic
def _zig8(typingctx, q, lo, hi, sd, out, at, width32, ki32):
    """Eight values at once, in the precision of ``out`` (float32 or float64, as ``sd`` and
    ``width32``): the words of positions ``q..q+7`` through the ziggurat's fast path,
    ``out[at + i] = (rabs * width32[layer]) * (+-sd[q + i])``, by gathers (numba's own loops
    keep table lookups scalar). Returns the bit mask of the words that missed the fast test
    (their ``out`` is junk, to be replaced by the slow path)."""

    def codegen(context, builder, sig, args):
        b = builder
        qq, lo_, hi_, sd_, out_, at_, w_, k_ = args
        data = {i: context.make_array(sig.args[i])(context, b, args[i]).data for i in (3, 4, 6, 7)}
        ftype = context.get_data_type(sig.args[4].dtype)
        v8i32, v8f = ir.VectorType(_I32, 8), ir.VectorType(ftype, 8)
        q8 = b.add(_splat(b, b.trunc(qq, _I32)), ir.Constant(v8i32, list(range(8))))
        v = _hash_ir(b, q8, _splat(b, lo_), _splat(b, hi_))
        layer = b.and_(v, _const(v8i32, _LAYERS - 1))
        rabs = b.lshr(v, _const(v8i32, 11))
        miss = b.icmp_signed(">=", rabs, _gather8(b, data[7], layer, _I32))
        width = _gather8(b, data[6], layer, ftype)
        sdp = b.gep(data[3], [qq], source_etype=ftype)
        sdv = b.load(b.bitcast(sdp, v8f.as_pointer()), align=4)
        neg = b.icmp_unsigned("!=", b.and_(v, _const(v8i32, _LAYERS)), _const(v8i32, 0))
        x = b.fmul(b.fmul(b.sitofp(rabs, v8f), width), b.select(neg, b.fneg(sdv), sdv))
        dst = b.gep(data[4], [at_], source_etype=ftype)
        b.store(x, b.bitcast(dst, v8f.as_pointer()), align=4)
        return b.zext(b.bitcast(miss, ir.IntType(8)), _I32)

    return types.int32(q, types.uint32, types.uint32, sd, out, at, width32, ki32), codegen


@intrinsic
def _prefetch(typingctx, a, i):
    """Hint the cache to fetch ``a[i]`` of a 1-D array."""

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        ptr = builder.gep(data, [args[1]], source_etype=context.get_data_type(a.dtype))
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, _I32, _I32, _I32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [ptr, _I32(0), _I32(3), _I32(1)])
        return context.get_dummy_value()

    return types.none(a, i), codegen


@numba.njit(cache=True, nogil=True)
def _fill_rows(seed, keys, table, rows, s, K, out, width32, u0, u1):
    """Rows ``u0:u1`` of :func:`_fill_scaled`: blocks of eight values through :func:`_zig8`
    (the last block via a scratch row), then the rare words that missed the fast test (about
    1 in 230) through the exact slow path, seeded by the row key, position and word. The scale
    row of row u + 4 is prefetched: rows are read at random, and a row's noise takes longer than
    a memory round trip (measured 13.7 -> 9.1 ms of the scaling on esp)."""
    L = table.shape[1]
    W = L * K
    if W == 0:
        return
    blocks = (W + 7) // 8
    sd = np.zeros(8 * blocks, dtype=out.dtype)
    tail = np.empty(8, dtype=out.dtype)
    masks = np.empty(blocks, dtype=np.int32)
    for u in range(u0, u1):
        row = out[u]
        r = rows[u] if rows.shape[0] else u
        if u + 4 < u1:
            ahead = table[rows[u + 4] if rows.shape[0] else u + 4]
            _prefetch(ahead, 0)
            _prefetch(ahead, L - 1)
        for j in range(L):
            sdj = math.sqrt(s * table[r, j]) if s >= 0.0 else table[r, j]
            for k in range(j * K, (j + 1) * K):
                sd[k] = sdj
        h = _mix(seed + np.uint64(keys[u]) * GOLDEN)
        lo = np.uint32(h & np.uint64(0xFFFFFFFF))
        hi = np.uint32(h >> np.uint64(32))
        n_rejected = 0
        for b in range(blocks - 1):
            masks[b] = _zig8(8 * b, lo, hi, sd, row, 8 * b, width32, _KI32)
            n_rejected |= masks[b]
        last = 8 * (blocks - 1)
        masks[blocks - 1] = _zig8(last, lo, hi, sd, tail, 0, width32, _KI32) & ((1 << W - last) - 1)
        n_rejected |= masks[blocks - 1]
        for q in range(last, W):
            row[q] = tail[q - last]
        for b in range(blocks if n_rejected else 0):
            for i in range(8 if masks[b] else 0):
                if not (masks[b] >> i) & 1:
                    continue
                q = 8 * b + i
                v = np.uint64(_hash32(q, lo, hi))
                sub = _mix(h ^ ((np.uint64(q) << np.uint64(32)) | v))
                row[q] = _slow32(v, sub, _WIDTH32, _WIDTH, _KI, _FX) * sd[q]


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_scaled(seed, keys, table, rows, s, K, out, width32, runs):
    """Row u: ``sd[u, j] * N(0, 1)`` at ``out[u, j*K + k]``, where ``sd[u] = table[u]`` (``s`` < 0)
    or ``sqrt(s * table[rows[u]])`` (a variance table, read in place). The value at position q
    comes from the 32-bit word ``_hash32(q, lo, hi)`` of the row key ``lo | hi << 32 =
    mix64(seed + keys[u] * golden)``."""
    U = keys.shape[0]
    runs = max(min(U, runs), 1)
    for r in prange(runs):
        _fill_rows(seed, keys, table, rows, s, K, out, width32, U * r // runs,
                   U * (r + 1) // runs)  # fmt: skip


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
    width32 = {np.float32: _WIDTH32F, np.float64: _WIDTH32}.get(np.dtype(dtype).type)
    if width32 is None:
        raise ValueError(f"dtype must be float32 or float64, got {np.dtype(dtype)}")
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape or out.dtype != np.dtype(dtype) or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {np.dtype(dtype)} array of shape {shape}")
    _fill_scaled(np.uint64(seed), keys, table, rows, float(s), int(k), out, width32,
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
