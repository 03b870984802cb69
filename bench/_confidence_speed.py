"""bench/confidence.py's speed figure: KD-PC (K = 50) on 1,000 test sentences, one core,
each stage's CPU seconds and the multiply-add floor of the machine."""

from __future__ import annotations

import time

import numba
import numpy as np

from cwal.confidence import estimate
from cwal.confidence.sampling import Sampler
from cwal.decode import emissions


def machine_rate(dtype=np.float32) -> float:
    """Measured multiply-adds per second of one core on L1-resident vectors (numba, SIMD)."""

    @numba.njit(fastmath=True)
    def fma(x, y, a, reps):
        for _ in range(reps):
            for i in range(x.shape[0]):
                y[i] = y[i] * a + x[i]
        return y[0]

    x, y = np.ones(2048, dtype), np.zeros(2048, dtype)
    fma(x, y, dtype(0.5), 1)
    reps = 20000
    start = time.process_time()
    fma(x, y, dtype(0.5), reps)
    return 2048 * reps / (time.process_time() - start)


def speed(model, test, s: float, repeats: int) -> dict:
    """KD-PC, K = 50 on 1,000 test sentences, one thread: CPU seconds per stage and the floor."""
    numba.set_num_threads(1)
    sents = test[:1000]
    enc = model.encode(sents)
    W, A = model.averaged()
    SW, SA = model.covariance()
    best = lambda f: min(f() for _ in range(repeats))  # noqa: E731

    def total(**kw) -> float:
        start = time.process_time()
        estimate(model, enc, "kd-pc", k=50, s=s, **kw)
        return time.process_time() - start

    out = {"sentences": len(sents), "tokens": enc.n_tokens, "labels": len(model.labels_)}
    variants = (("total_1core", {}), ("votes_only_1core", {"rank": "votes+delta"}),
                ("float64_1core", {"dtype": np.float64}),
                ("marginal_approx_1core", {"correlated": False}),
                ("independent_draws_1core", {"antithetic": False}))  # fmt: skip
    for key, kw in variants:
        estimate(model, enc, "kd-pc", k=50, s=s, **kw)
        out[key] = best(lambda kw=kw: total(**kw))
    t = time.process_time()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    estimate(model, enc, "delta")
    out["predict+delta"] = time.process_time() - t
    y = model.predict_ids(enc)
    stages = [Sampler(W, A, SW, SA, k=50, s=s).profile(enc, E, y) for _ in range(repeats)]
    for key in stages[0]:
        out[key] = min(st[key] for st in stages)
    L, K, M = len(model.labels_), 50, len(enc.feat_ids)
    U = len(np.unique(enc.feat_ids))
    # emissions, Viterbi forward, backward (margins), noise scaling; antithetic pairs share the
    # noise of their first draw, so only K/2 draws are generated and summed
    work = K // 2 * L * M + 2 * K * L * L * enc.n_tokens + K // 2 * L * U
    out.update(active_features=U, occurrences=M, multiply_adds=work)
    out["rate_per_s"] = machine_rate()
    out["floor"] = work / out["rate_per_s"]
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    start = time.perf_counter()
    estimate(model, enc, "kd-pc", k=50, s=s)
    out["wall_all_cores"] = time.perf_counter() - start
    return out
