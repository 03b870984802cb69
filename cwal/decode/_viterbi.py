"""Compiled kernels: emission scores, labeling scores and first-order Viterbi (single, batch, K).

Layout (docs/design.md): ``E (n, L)``, ``A (L + 2, L)`` with row ``L`` = start and row ``L + 1`` =
end. Every kernel trusts its inputs (contiguous, right dtype, valid offsets); the public wrappers in
:mod:`cwal.decode` check them. Ties go to the lowest label index.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange


@numba.njit(cache=True, nogil=True)
def emissions_kernel(feat_ids, tok_offsets, W):
    """E[p] = sum of the rows of ``W`` named by token p's feature ids."""
    n = tok_offsets.shape[0] - 1
    L = W.shape[1]
    E = np.zeros((n, L))
    for p in range(n):
        for idx in range(tok_offsets[p], tok_offsets[p + 1]):
            f = feat_ids[idx]
            for y in range(L):
                E[p, y] += W[f, y]
    return E


@numba.njit(cache=True, nogil=True)
def emissions_multi_kernel(feat_ids, tok_offsets, W):
    """``emissions_kernel`` under K weight matrices ``W (K, F, L)`` -> ``E (K, n, L)``."""
    K = W.shape[0]
    n = tok_offsets.shape[0] - 1
    L = W.shape[2]
    E = np.zeros((K, n, L))
    for k in range(K):
        for p in range(n):
            for idx in range(tok_offsets[p], tok_offsets[p + 1]):
                f = feat_ids[idx]
                for y in range(L):
                    E[k, p, y] += W[k, f, y]
    return E


@numba.njit(cache=True, nogil=True)
def sequence_score_kernel(E, A, y):
    """Total score of labeling ``y`` (empty labeling scores 0)."""
    n = y.shape[0]
    if n == 0:
        return 0.0
    L = E.shape[1]
    s = A[L, y[0]] + E[0, y[0]]
    for p in range(1, n):
        s += A[y[p - 1], y[p]] + E[p, y[p]]
    return s + A[L + 1, y[n - 1]]


@numba.njit(cache=True, nogil=True, inline="always")
def _viterbi_span(E, A, start, end, prev, cur, back, out):
    """Viterbi over tokens ``start:end`` of ``E``; writes labels to ``out[start:end]``.

    ``prev``/``cur`` are work vectors of length L, ``back`` an int32 work table of at least
    ``end - start`` rows; nothing is allocated.
    """
    n = end - start
    if n == 0:
        return
    L = E.shape[1]
    for j in range(L):
        prev[j] = A[L, j] + E[start, j]
    for t in range(1, n):
        p = start + t
        for j in range(L):
            best = prev[0] + A[0, j]
            arg = 0
            for i in range(1, L):
                s = prev[i] + A[i, j]
                if s > best:
                    best = s
                    arg = i
            cur[j] = best + E[p, j]
            back[t, j] = arg
        for j in range(L):
            prev[j] = cur[j]
    best = prev[0] + A[L + 1, 0]
    arg = 0
    for j in range(1, L):
        s = prev[j] + A[L + 1, j]
        if s > best:
            best = s
            arg = j
    out[end - 1] = arg
    for t in range(n - 1, 0, -1):
        arg = back[t, arg]
        out[start + t - 1] = arg


@numba.njit(cache=True, nogil=True)
def _max_length(sent_offsets):
    m = 0
    for b in range(sent_offsets.shape[0] - 1):
        d = sent_offsets[b + 1] - sent_offsets[b]
        if d > m:
            m = d
    return m


@numba.njit(cache=True, nogil=True)
def viterbi_batch_kernel(E, sent_offsets, A):
    """Best labeling of every sentence ``sent_offsets[b]:sent_offsets[b+1]`` of ``E``."""
    L = E.shape[1]
    out = np.empty(E.shape[0], dtype=np.int32)
    prev = np.empty(L)
    cur = np.empty(L)
    back = np.empty((max(_max_length(sent_offsets), 1), L), dtype=np.int32)
    for b in range(sent_offsets.shape[0] - 1):
        _viterbi_span(E, A, sent_offsets[b], sent_offsets[b + 1], prev, cur, back, out)
    return out


@numba.njit(cache=True, nogil=True, parallel=True)
def viterbi_multi_kernel(E, sent_offsets, A):
    """``viterbi_batch_kernel`` under K weight vectors, K in parallel: ``E (K, n, L)``."""
    K = E.shape[0]
    L = E.shape[2]
    out = np.empty((K, E.shape[1]), dtype=np.int32)
    prev = np.empty((K, L))
    cur = np.empty((K, L))
    back = np.empty((K, max(_max_length(sent_offsets), 1), L), dtype=np.int32)
    for k in prange(K):
        Ek = E[k]
        Ak = A[k]
        for b in range(sent_offsets.shape[0] - 1):
            _viterbi_span(
                Ek, Ak, sent_offsets[b], sent_offsets[b + 1], prev[k], cur[k], back[k], out[k]
            )
    return out
