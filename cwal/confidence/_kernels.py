"""Compiled kernels of the confidence estimators.

``kd_vote_kernel`` is KD-PC / KD-Fixed's hot loop: for each sentence it builds the emission scores
under all K draws at once, ``E[t, j, k] = Emean[t, j] + sum_{f in t} Z[f, j, k]``, decodes the K
Viterbi paths together with the draw index k innermost (one SIMD lane per draw, so the L x L
max-plus step is vectorised across draws), counts the label each draw gives each token and,
optionally, adds a backward pass for each draw's max-marginal margin of the predicted label
(otherwise each draw's path is backtracked from the forward scores alone). (Padding the draws
to whole SIMD vectors, 8 or 32 lanes, measured no faster on esp.)
Flat row views keep numba's inner loops free of multi-dimensional index arithmetic, which measured
2-6x faster here. Running maxima never update a row in place (``c[k] = max(c[k], s)`` compiles to
masked stores, microcoded on AMD): each step writes the other of two rows (:func:`_maxplus`), which
made the margin path's decoding ~3x faster on esp. Ties go to the lowest label index, as in
:mod:`cwal.decode`.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from cwal.decode._kbest import kbest_kernel, n_labelings

UNIFORM, POSITIVE, SOFTMAX = 0, 1, 2  # how kbest_vote_kernel weighs the k best labelings


@numba.njit(cache=True, nogil=True, fastmath=True)
def _emissions_span(local, tok_offsets, t0, n, Emean, Z, K, E2, acc):
    """``E2[t, j*K + k] = Emean[t0 + t, j] + N[t, j, k]`` for t < n and the ``K`` draws, with the
    noise sums ``N[t, j, k] = sum_{f in token} Z[f, j*Kz + k]`` over ``Kz = Z.shape[1] / L``
    generated draws, summed in the flat row ``acc`` (contiguous, vectorised adds, four rows a
    pass). With ``Kz < K`` the draws are antithetic pairs: draw ``Kz + k`` gets ``-N[t, j, k]``,
    so only half the noise is read and summed."""
    L = Emean.shape[1]
    W = Z.shape[1]
    Kz = W // L
    for t in range(n):
        for q in range(W):
            acc[q] = 0.0
        idx = tok_offsets[t0 + t]
        end = tok_offsets[t0 + t + 1]
        while idx + 4 <= end:  # four rows a pass: a quarter of the loads and stores of acc
            Za = Z[local[idx]]
            Zb = Z[local[idx + 1]]
            Zc = Z[local[idx + 2]]
            Zd = Z[local[idx + 3]]
            for q in range(W):
                acc[q] += (Za[q] + Zb[q]) + (Zc[q] + Zd[q])
            idx += 4
        for rest in range(idx, end):
            Zf = Z[local[rest]]
            for q in range(W):
                acc[q] += Zf[q]
        Et = E2[t]
        for j in range(L):
            m = Emean[t0 + t, j]
            o = j * K
            z = j * Kz
            for k in range(Kz):
                Et[o + k] = m + acc[z + k]
            for k in range(K - Kz):
                Et[o + Kz + k] = m - acc[z + k]


@numba.njit(cache=True, nogil=True, fastmath=True)
def _maxplus(x, y, rows, A, col, vec, out):
    """``out[k] = max_i rows[i, k] + A[i, col, k] + vec[k]`` (``A[i, :, k]`` when ``col`` < 0:
    ``A[col', i]`` rows of the backward pass, see below), reduced through the two scratch rows
    ``x``, ``y`` in turn: each step writes a row it does not read, so the max is a plain vector
    max and store (an in-place ``c = max(c, s)`` compiles to masked stores, slow on AMD)."""
    L = rows.shape[0]
    K = rows.shape[1]
    r0 = rows[0]
    a0 = A[0, col] if col >= 0 else A[-col - 1, 0]
    for k in range(K):
        x[k] = r0[k] + a0[k]
    for i in range(1, L):
        ri = rows[i]
        ai = A[i, col] if col >= 0 else A[-col - 1, i]
        for k in range(K):
            y[k] = max(x[k], ri[k] + ai[k])
        x, y = y, x
    for k in range(K):
        out[k] = x[k] + vec[k]


@numba.njit(cache=True, nogil=True, fastmath=True)
def _forward_values(E3, AK, n, x, y, alpha):
    """The Viterbi forward scores of all draws into ``alpha[t]``: the forward half of the
    max-marginals (margin mode) and what votes mode backtracks (no back-pointers are stored)."""
    L = AK.shape[1]
    K = AK.shape[2]
    for j in range(L):
        s0 = AK[L, j]
        e = E3[0, j]
        a = alpha[0, j]
        for k in range(K):
            a[k] = s0[k] + e[k]
    for t in range(1, n):
        for j in range(L):
            _maxplus(x, y, alpha[t - 1], AK, j, E3[t, j], alpha[t, j])


@numba.njit(cache=True, nogil=True)
def _backtrack_votes(alpha, AK, K, n, t0, counts):
    """Each of the first ``K`` draws' Viterbi labeling, one vote per token, backtracked from the
    forward scores ``alpha`` of :func:`_forward_values`: the predecessor of label y at t is the
    lowest i maximising ``alpha[t-1, i] + AK[i, y]``, the very sums and strict comparisons a
    back-pointer pass makes, so ties resolve as in :mod:`cwal.decode`. Recomputing them along
    the one path (L adds a token) is far cheaper than storing L x L back-pointers per draw."""
    L = AK.shape[1]
    for k in range(K):
        best = alpha[n - 1, 0, k] + AK[L + 1, 0, k]
        y = 0
        for j in range(1, L):
            s = alpha[n - 1, j, k] + AK[L + 1, j, k]
            if s > best:
                best = s
                y = j
        counts[t0 + n - 1, y] += 1
        for t in range(n - 1, 0, -1):
            best = alpha[t - 1, 0, k] + AK[0, y, k]
            b = 0
            for i in range(1, L):
                s = alpha[t - 1, i, k] + AK[i, y, k]
                if s > best:
                    best = s
                    b = i
            y = b
            counts[t0 + t - 1, y] += 1


@numba.njit(cache=True, nogil=True, fastmath=True)
def _best_other(mm, yt, x, y):
    """``max_{u != yt} mm[u]`` per lane, left in the first row returned (the other is scratch).
    Its own function: inlined in :func:`_margin_span`'s token loop it stayed scalar."""
    L = mm.shape[0]
    first = 1 if yt == 0 else 0
    m0 = mm[first]
    for k in range(mm.shape[1]):
        x[k] = m0[k]
    for u in range(first + 1, L):
        if u != yt:
            mu = mm[u]
            for k in range(mm.shape[1]):
                y[k] = max(x[k], mu[k])
            x, y = y, x
    return x, y


@numba.njit(cache=True, nogil=True, fastmath=True)
def _lowest_best(mm, best, a0, a1):
    """Per lane, the lowest label u with ``mm[u] == best`` (scanned from the top down, through
    the alternating rows ``a0``/``a1``; returns the one holding the answer)."""
    L = mm.shape[0]
    for k in range(mm.shape[1]):
        a0[k] = L - 1
    for u in range(L - 2, -1, -1):
        mu = mm[u]
        lab = np.int32(u)
        for k in range(mm.shape[1]):
            a1[k] = lab if mu[k] == best[k] else a0[k]
        a0, a1 = a1, a0
    return a0


@numba.njit(cache=True, nogil=True, fastmath=True)
def _margin_span(E3, AK, K, n, t0, alpha, beta, tmp, x, y, yhat, counts, msum):
    """Backward max pass, then per token: each of the first ``K`` draws' vote for its best label by max-marginal
    (its Viterbi label whenever the optimum is unique) into ``counts``, and the sum over draws of
    the signed margin of the predicted label, ``MM[y_hat] - max_{u != y_hat} MM[u]`` (negative
    where a draw's best labeling through that token disagrees), into ``msum``. Every running
    max and argmax alternates between two rows (see :func:`_maxplus`)."""
    L = AK.shape[1]
    zero = np.zeros(K, dtype=tmp.dtype)
    for i in range(L):
        b = beta[n - 1, i]
        e = AK[L + 1, i]
        for k in range(K):
            b[k] = e[k]
    for t in range(n - 2, -1, -1):
        for j in range(L):
            tj = tmp[j]
            e = E3[t + 1, j]
            b = beta[t + 1, j]
            for k in range(K):
                tj[k] = e[k] + b[k]
        for i in range(L):
            _maxplus(x, y, tmp, AK, -i - 1, zero, beta[t, i])
    mm = tmp
    a0 = np.empty(K, dtype=np.int32)
    a1 = np.empty(K, dtype=np.int32)
    for t in range(n):
        yt = yhat[t0 + t]
        if L == 1:  # no other label: every draw agrees (kd_vote_kernel sets the margin to inf)
            counts[t0 + t, 0] += K
            continue
        for u in range(L):
            au = alpha[t, u]
            bu = beta[t, u]
            mu = mm[u]
            for k in range(K):
                mu[k] = au[k] + bu[k]
        # the best other label's max-marginal (label 0 or 1 starts it), then the best overall
        x, y = _best_other(mm, yt, x, y)
        my = mm[yt]
        total = 0.0
        for k in range(K):
            total += my[k] - x[k]
            y[k] = max(x[k], my[k])
        msum[t0 + t] += total
        # each draw's vote: the lowest label reaching the best (scanned from the top down)
        votes = _lowest_best(mm, y, a0, a1)
        row = counts[t0 + t]
        for k in range(K):
            row[votes[k]] += 1


@numba.njit(cache=True, nogil=True)
def _vote_run(local, tok_offsets, sent_offsets, b0, b1, Emean, Z, AK, K, yhat, mode, counts,
              msum):  # fmt: skip
    """Sentences ``b0:b1`` of :func:`kd_vote_kernel`, with their own work buffers.
    (Generating each sentence's new noise rows here, just before they are summed, measured no
    faster on esp than the separate generation pass: 353 vs 359 ms, within the noise.)"""
    L = AK.shape[1]
    longest = 1
    for b in range(b0, b1):
        longest = max(longest, sent_offsets[b + 1] - sent_offsets[b])
    E2 = np.empty((longest, L * K), dtype=Z.dtype)
    E3 = E2.reshape((longest, L, K))
    alpha = np.empty((longest, L, K), dtype=Z.dtype)
    beta = np.empty((longest, L, K), dtype=Z.dtype)
    tmp = np.empty((L, K), dtype=Z.dtype)
    acc = np.empty(Z.shape[1], dtype=Z.dtype)
    x = np.empty(K, dtype=Z.dtype)
    y = np.empty(K, dtype=Z.dtype)
    for b in range(b0, b1):
        t0 = sent_offsets[b]
        n = sent_offsets[b + 1] - t0
        if n == 0:
            continue
        _emissions_span(local, tok_offsets, t0, n, Emean, Z, K, E2, acc)
        if mode == 0:
            counts[t0, 0] += E2[0, 0] > 0.0
            continue
        _forward_values(E3, AK, n, x, y, alpha)
        if mode == 3:
            counts[t0, 0] += alpha[n - 1, 0, 0] > 0.0
        elif mode == 2:
            _margin_span(E3, AK, K, n, t0, alpha, beta, tmp, x, y, yhat, counts, msum)
        else:
            _backtrack_votes(alpha, AK, K, n, t0, counts)


@numba.njit(cache=True, nogil=True, parallel=True)
def kd_vote_kernel(local, tok_offsets, sent_offsets, Emean, Z, AK, yhat, mode, chunks):
    """The K draws of a batch: ``counts (n_tok, L) int32`` (how many draws' Viterbi labelings give
    each token each label) and, with ``mode`` 2, ``msum (n_tok)``: the sum over draws of the signed
    max-marginal margin of ``yhat`` (``mode`` 1: votes only; for timing, 0: emissions only,
    3: emissions and the forward pass of mode 2).

    Sentences are split into ``chunks`` contiguous runs processed in parallel threads; each run
    owns its work buffers and its rows of the outputs, so the result does not depend on threads.
    """
    B = sent_offsets.shape[0] - 1
    K = AK.shape[2]
    counts = np.zeros((Emean.shape[0], AK.shape[1]), dtype=np.int32)
    msum = np.zeros(Emean.shape[0])
    chunks = max(min(B, chunks), 0)
    for q in prange(chunks):
        _vote_run(local, tok_offsets, sent_offsets, B * q // chunks, B * (q + 1) // chunks,
                  Emean, Z, AK, K, yhat, mode, counts, msum)  # fmt: skip
    if AK.shape[1] == 1 and mode == 2:  # no other label: an unbounded margin (not fastmath)
        msum[:] = np.inf
    return counts, msum


@numba.njit(cache=True, nogil=True)
def kbest_vote_kernel(E, sent_offsets, A, k, weighting, scale):
    """Label shares of the k best labelings of every sentence: ``dist (n_tok, L)``.

    ``weighting``: ``UNIFORM`` (KBV), ``POSITIVE`` (WKBV: ``max(0, score)``, uniform again when
    every weight is 0) or ``SOFTMAX`` (``exp(scale * score)``, the N-best soft-max).
    """
    L = E.shape[1]
    dist = np.zeros(E.shape)
    for b in range(sent_offsets.shape[0] - 1):
        t0 = sent_offsets[b]
        t1 = sent_offsets[b + 1]
        if t1 == t0:
            continue
        labels, scores = kbest_kernel(E[t0:t1], A, n_labelings(L, t1 - t0, k))
        m = labels.shape[0]
        w = np.ones(m)
        if weighting == POSITIVE:
            for q in range(m):
                w[q] = max(0.0, scores[q])
            if w.sum() <= 0.0:
                w[:] = 1.0
        elif weighting == SOFTMAX:
            for q in range(m):  # scores are sorted best first: every exponent is <= 0
                w[q] = math.exp(scale * (scores[q] - scores[0]))
        total = w.sum()
        for q in range(m):
            for p in range(t1 - t0):
                dist[t0 + p, labels[q, p]] += w[q]
        for p in range(t0, t1):
            for y in range(L):
                dist[p, y] = min(dist[p, y] / total, 1.0)
    return dist
