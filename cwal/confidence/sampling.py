"""KD-PC and KD-Fixed: K weight vectors drawn around the mean, one Viterbi labeling under each.

KD-PC draws ``w ~ N(mu, s * Sigma)`` with the learner's diagonal covariance, KD-Fixed
``w ~ N(mu, s * I)`` (mejer-crammer-2010 §5). Only the rows of the features active in the batch
are drawn, as the noise part ``E_k = E_mean + X Z_k`` (the mean emissions are computed once), with
counter-based noise keyed by the global feature id: a sentence gets the same draws whatever batch
it sits in, so long batches can be cut into chunks without changing the result. Transitions are
drawn too. Each draw votes for its labeling, and can also report the max-marginal margin of the
predicted label (the default ranking signal). Draws come in antithetic pairs by default (``w`` and
its mirror ``2 mu - w``): each is still a draw of the same Gaussian, the vote share and mean margin
lose their first-order noise, and only half the noise is generated, read and summed (measured on
np: the AP spread between seeds halves). ``correlated=False`` is a faster approximation: each
token's label scores get their exact Gaussian marginal, ignoring the correlation between tokens
that share features.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numba
import numpy as np

from cwal.confidence._kernels import kd_vote_kernel
from cwal.confidence._random import scaled_normals, stream, variance_normals
from cwal.decode import emissions
from cwal.features import Encoded

_WEIGHTS, _TRANSITIONS, _TOKENS = 1, 2, 3
NOISE_BUDGET = 256 * 2**20  # bytes of noise rows per chunk (about 2 rows per token)


def _chunks(enc: Encoded, max_tokens: int) -> Iterator[tuple[int, int]]:
    """Sentence ranges ``[b0, b1)`` of at most ``max_tokens`` tokens (a longer sentence alone)."""
    off = enc.sent_offsets
    B = len(off) - 1
    b0 = 0
    while b0 < B:
        b1 = int(np.searchsorted(off, off[b0] + max_tokens, side="right")) - 1
        b1 = min(max(b1, b0 + 1), B)
        yield b0, b1
        b0 = b1


def _sub(enc: Encoded, b0: int, b1: int) -> tuple[Encoded, int]:
    """Sentences ``b0:b1`` as their own Encoded, plus the global index of their first token."""
    T0, T1 = int(enc.sent_offsets[b0]), int(enc.sent_offsets[b1])
    f0, f1 = int(enc.tok_offsets[T0]), int(enc.tok_offsets[T1])
    return (
        Encoded(
            enc.feat_ids[f0:f1],
            enc.tok_offsets[T0 : T1 + 1] - f0,
            enc.sent_offsets[b0 : b1 + 1] - T0,
        ),
        T0,
    )


_local = threading.local()


def _workspace(name: str, size: int, dtype: type) -> np.ndarray:
    """A flat per-thread buffer of at least ``size`` items, kept between calls: a fresh
    ~100 MB noise array each call cost more in page faults (~75 ms here) than filling it."""
    spaces = _local.__dict__.setdefault("spaces", {})
    key = (name, np.dtype(dtype).str)
    buf = spaces.get(key)
    if buf is None or buf.size < size:
        buf = np.zeros(max(size, 1), dtype=dtype)
        spaces[key] = buf
    return buf


@numba.njit(cache=True, nogil=True)
def _first_seen(feat_ids, seen, active, local):
    """Number the batch's distinct features in order of first occurrence: ``active[r]`` is
    the feature of row r, ``local`` each occurrence's row. ``seen`` (one slot per feature, all 0)
    holds row + 1 while counting and is zeroed again before returning."""
    n = 0
    for idx in range(feat_ids.shape[0]):
        f = feat_ids[idx]
        r = seen[f]
        if r == 0:
            active[n] = f
            n += 1
            r = n
            seen[f] = r
        local[idx] = r - 1
    for r in range(n):
        seen[active[r]] = 0
    return n


def _active(feat_ids: np.ndarray, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Active feature ids in order of first occurrence (so the emission pass reads the noise rows
    of new features as one forward stream) and the batch's feature ids remapped to rows of that
    list."""
    seen = _workspace("seen", n_features, np.int32)  # all zero between calls
    active = np.empty(min(feat_ids.size, n_features), dtype=np.int64)
    local = np.empty(feat_ids.size, dtype=np.int32)
    n = _first_seen(feat_ids, seen, active, local)
    return active[:n], local


def _runs() -> int:
    """How many sentence runs the vote kernel splits a batch into (a few per thread)."""
    return 8 * numba.get_num_threads()


class Sampler:
    """The noise of one KD run: ``k`` draws at scale ``s`` around ``(W, A)``.

    ``SW``/``SA`` give the covariance diagonal (KD-PC); ``None`` means the identity (KD-Fixed).
    """

    def __init__(
        self,
        W: np.ndarray,
        A: np.ndarray,
        SW: np.ndarray | None,
        SA: np.ndarray | None,
        *,
        k: int,
        s: float,
        seed: int = 0,
        correlated: bool = True,
        dtype: type = np.float32,
        antithetic: bool = True,
    ) -> None:
        if int(k) < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not np.isfinite(s) or s < 0:
            raise ValueError(f"s must be a finite non-negative scale, got {s}")
        if (SW is None) != (SA is None):
            raise ValueError("give both SW and SA (KD-PC) or neither (KD-Fixed)")
        self.W, self.A, self.SW, self.SA = W, A, SW, SA
        self.k, self.s, self.seed = int(k), float(s), int(seed)
        self.correlated = bool(correlated)
        self.antithetic = bool(antithetic)
        self.dtype = np.dtype(dtype).type
        L = A.shape[1]
        self.kz = (self.k + 1) // 2 if self.antithetic else self.k  # draws with their own noise
        sdA = np.sqrt(self.s * (SA if SA is not None else np.ones_like(A)))
        noise = scaled_normals(stream(seed, _TRANSITIONS), np.arange(L + 2), sdA, self.kz,
                               np.float64)  # fmt: skip
        self.AK = (A[:, :, None] + self.mirror(noise).reshape(L + 2, L, self.k)).astype(self.dtype)

    def mirror(self, Z: np.ndarray) -> np.ndarray:
        """Noise rows of the ``kz`` generated draws as rows of all ``k`` draws: with antithetic
        draws, draw ``kz + i`` is minus draw ``i`` (an odd k leaves its last draw unpaired)."""
        if self.kz == self.k:
            return Z
        L = Z.shape[1] // self.kz
        half = Z.reshape(Z.shape[0], L, self.kz)
        full = np.concatenate([half, -half[:, :, : self.k - self.kz]], axis=2)
        return full.reshape(Z.shape[0], L * self.k)

    def noise(
        self, enc: Encoded, first_token: int = 0, reuse: bool = False
    ) -> tuple[np.ndarray, Encoded]:
        """Noise rows ``Z (U, L*kz)`` of the generated draws (all k, or the first of each
        antithetic pair: see :meth:`mirror`) and the encoding whose feature ids index them. With
        ``reuse`` Z lives in this thread's workspace (valid until the next call)."""
        L, kz = self.A.shape[1], self.kz
        if self.correlated:
            active, local = _active(enc.feat_ids, self.W.shape[0])
            out = None
            if reuse:
                size = active.size * L * kz
                out = _workspace("noise", size, self.dtype)[:size].reshape(active.size, L * kz)
            seed = stream(self.seed, _WEIGHTS)
            if self.SW is not None:  # sqrt(s * SW[active]) row by row inside the kernel
                Z = variance_normals(seed, active, self.SW, active, self.s, kz, self.dtype, out)
            else:
                sd = np.full((active.size, L), np.sqrt(self.s))
                Z = scaled_normals(seed, active, sd, kz, self.dtype, out)
            return Z, Encoded(local, enc.tok_offsets, enc.sent_offsets)
        n = enc.n_tokens
        if self.SW is not None:
            var = emissions(enc.feat_ids, enc.tok_offsets, self.SW)
        else:
            var = np.repeat(np.diff(enc.tok_offsets).astype(np.float64)[:, None], L, axis=1)
        keys = first_token + np.arange(n)
        Z = scaled_normals(stream(self.seed, _TOKENS), keys, np.sqrt(self.s * var), kz, self.dtype)
        return Z, Encoded(np.arange(n, dtype=np.int32), np.arange(n + 1), enc.sent_offsets)

    def draw(
        self,
        enc: Encoded,
        Emean: np.ndarray,
        yhat: np.ndarray | None = None,
        timings: dict[str, float] | None = None,
        max_tokens: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """``counts (n_tok, L) int32`` (how many draws give each token each label) and, when the
        predicted labels ``yhat`` are given, each token's mean over draws of the signed
        max-marginal margin of its predicted label (a continuous, tie-free ranking signal).

        ``Emean`` are the batch's emission scores under the mean; ``timings`` (if given)
        accumulates seconds under ``sampling`` (remap + noise) and ``votes`` (emissions, Viterbi,
        margins). Batches longer than ``max_tokens`` (default: what keeps the noise near
        ``NOISE_BUDGET``) run in chunks, with identical results.
        """
        L = self.A.shape[1]
        if max_tokens is None:
            row = L * self.kz * np.dtype(self.dtype).itemsize
            max_tokens = max(1000, NOISE_BUDGET // (2 * row))
        counts = np.zeros((enc.n_tokens, L), dtype=np.int32)
        msum = np.zeros(enc.n_tokens)
        y = np.zeros(enc.n_tokens, np.int32) if yhat is None else np.asarray(yhat, np.int32)
        mode = 1 if yhat is None else 2
        clock = timings if timings is not None else {}
        for b0, b1 in _chunks(enc, max_tokens):
            sub, T0 = _sub(enc, b0, b1)
            T1 = T0 + sub.n_tokens
            start = time.perf_counter()
            Z, local = self.noise(sub, T0, reuse=True)
            mid = time.perf_counter()
            E = np.ascontiguousarray(Emean[T0:T1], dtype=self.dtype)
            counts[T0:T1], msum[T0:T1] = kd_vote_kernel(
                local.feat_ids, local.tok_offsets, local.sent_offsets, E, Z, self.AK,
                np.ascontiguousarray(y[T0:T1]), mode, _runs(),
            )  # fmt: skip
            end = time.perf_counter()
            clock["sampling"] = clock.get("sampling", 0.0) + mid - start
            clock["votes"] = clock.get("votes", 0.0) + end - mid
        return counts, (None if yhat is None else msum / self.k)

    def profile(self, enc: Encoded, Emean: np.ndarray, yhat: np.ndarray) -> dict[str, float]:
        """CPU seconds of each stage on one chunk-free batch (run it on one thread): ``remap``
        (active features), ``sampling`` (noise), ``emissions`` (E under the K draws),
        ``decoding`` (the K forward max-product passes) and ``margins`` (the backward passes,
        the draws' votes and margins) of the default draw-margin path, and ``votes`` (the
        votes-only path: forward with back-pointers and backtracking, instead of both)."""
        clock = time.process_time
        t0 = clock()
        if self.correlated:
            _active(enc.feat_ids, self.W.shape[0])
        t1 = clock()
        Z, local = self.noise(enc, reuse=True)
        t2 = clock()
        E = np.ascontiguousarray(Emean, dtype=self.dtype)
        y = np.ascontiguousarray(yhat, dtype=np.int32)
        args = (local.feat_ids, local.tok_offsets, local.sent_offsets, E, Z, self.AK, y)
        seconds = []
        for mode in (0, 3, 2, 1):
            start = clock()
            kd_vote_kernel(*args, mode, _runs())
            seconds.append(clock() - start)
        emis, fwd, full, votes = seconds
        return {
            "remap": t1 - t0,
            "sampling": (t2 - t1) - (t1 - t0),
            "emissions": emis,
            "decoding": fwd - emis,
            "margins": full - fwd,
            "votes": votes - emis,
        }
