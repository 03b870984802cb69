"""Why the noise generator of KD-PC is written in LLVM IR: the same generator in plain numba.

cwal/confidence/_random.py draws each Gaussian value from a 32-bit counter-based hash and a
1024-layer ziggurat, eight values at a time in hand-written LLVM IR (numba widens uint32 products
to 64 bits, which AVX2 cannot multiply, and keeps table lookups scalar). This script holds the
plain-numba version of the very same generator (:func:`fill_plain`, bit-identical values in
float32 and float64; tests/test_confidence_random.py checks that) and times both on the same
rows, interleaved, in one run: the median of each and their ratio, per dtype. With one thread, as
the live service scores on, a ratio above 1 is time every KD-PC estimate pays.

    python bench/noise.py [--quick] [--json PATH] [--rows U] [--labels L] [--draws K]
"""

from __future__ import annotations

import time

import numba
import numpy as np
from _common import bench_parser, emit, format_table

from cwal.confidence import _random as rnd

_M32 = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, nogil=True, inline="always")
def _lowbias32(x):
    """Wellons' lowbias32 on a uint64 holding 32 bits (products masked back to 32 bits)."""
    x = ((x ^ (x >> np.uint64(16))) * np.uint64(rnd._C1)) & _M32
    x = ((x ^ (x >> np.uint64(15))) * np.uint64(rnd._C2)) & _M32
    return x ^ (x >> np.uint64(16))


@numba.njit(cache=True, nogil=True)
def fill_plain(seed, keys, scale, K, out, width32):
    """``out[u, j*K + k] = scale[u, j] * N(0, 1)``: the values of :func:`rnd.scaled_normals`, one
    at a time (word of position q = ``lowbias32(lowbias32(q * golden32 + lo) ^ hi)``, its
    ziggurat fast test, else the exact slow path of the IR kernel)."""
    for u in range(keys.shape[0]):
        row = out[u]
        h = rnd._mix(seed + np.uint64(keys[u]) * rnd.GOLDEN)
        lo, hi = h & _M32, h >> np.uint64(32)
        for j in range(scale.shape[1]):
            row[j * K] = scale[u, j]
            sd = row[j * K]  # the scale in the precision of out, as the IR kernel reads it
            for q in range(j * K, (j + 1) * K):
                v = _lowbias32(_lowbias32((np.uint64(q) * np.uint64(rnd._G32) + lo) & _M32) ^ hi)
                layer = v & np.uint64(rnd._LAYERS - 1)
                rabs = np.int64(v >> np.uint64(11))
                if rabs < rnd._KI32[layer]:
                    row[q] = rabs  # exact in float32 too (21 bits)
                    x = row[q] * width32[layer]
                    row[q] = x * -sd if v & np.uint64(rnd._LAYERS) else x * sd
                else:
                    sub = rnd._mix(h ^ ((np.uint64(q) << np.uint64(32)) | v))
                    row[q] = rnd._slow32(v, sub, rnd._WIDTH32, rnd._WIDTH, rnd._KI, rnd._FX) * sd


def plain_normals(seed, keys, scale, k: int, dtype=np.float32) -> np.ndarray:
    """:func:`rnd.scaled_normals` through :func:`fill_plain` (one thread)."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    out = np.empty((keys.shape[0], scale.shape[1] * k), dtype=dtype)
    width32 = rnd._WIDTH32F if np.dtype(dtype) == np.float32 else rnd._WIDTH32
    fill_plain(np.uint64(seed), keys, scale, int(k), out, width32)
    return out


def main() -> None:
    p = bench_parser(__doc__)
    p.add_argument("--rows", type=int, default=80_000, help="active features (esp: ~79K a batch)")
    p.add_argument("--labels", type=int, default=9)
    p.add_argument(
        "--draws", type=int, default=25, help="draws a label (K/2 with antithetic pairs)"
    )
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args()
    rows, repeats = (10_000, 5) if args.quick else (args.rows, args.repeats)
    numba.set_num_threads(1)
    keys = np.arange(rows)
    scale = np.random.default_rng(0).random((rows, args.labels)) + 0.5
    seed = rnd.stream(0, 1)
    table, payload = [], {"rows": rows, "labels": args.labels, "draws": args.draws, "results": []}
    for dtype in (np.float32, np.float64):
        call = (seed, keys, scale, args.draws, dtype)
        same = bool(np.array_equal(rnd.scaled_normals(*call), plain_normals(*call)))  # compiles
        t_ir, t_plain = [], []
        for _ in range(repeats):
            for f, times in ((rnd.scaled_normals, t_ir), (plain_normals, t_plain)):
                start = time.perf_counter()
                f(*call)
                times.append(time.perf_counter() - start)
        a, b = float(np.median(t_ir)), float(np.median(t_plain))
        values = rows * args.labels * args.draws
        row = {"dtype": np.dtype(dtype).name, "values": values, "identical": same,
               "ir_ms": 1e3 * a, "plain_ms": 1e3 * b, "ratio": b / a,
               "ir_ns_per_value": 1e9 * a / values}  # fmt: skip
        table.append(row)
        payload["results"].append(row)
    title = f"noise, one thread: {rows} rows x {args.labels} labels x {args.draws} draws, medians"
    emit(
        {title: format_table(table, digits={"ir_ms": 1, "plain_ms": 1, "ratio": 2})}, args, payload
    )
    if not all(r["identical"] for r in table):
        raise SystemExit("the plain version no longer gives the IR kernel's values")


if __name__ == "__main__":
    main()
