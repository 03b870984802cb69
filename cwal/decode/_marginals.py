"""Compiled kernels: max-marginals from Viterbi alpha/beta tables, and the Delta margin.

``MM[p, y] = alpha[p, y] + beta[p, y]`` is the best total score of any labeling with ``y_p = y``:
``alpha`` (forward, includes ``E[p, y]`` and the start transition) and ``beta`` (backward, includes
the end transition, excludes ``E[p, y]``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _max_marginals_span(E, A, start, end, beta, tmp, out):
    """Max-marginals of tokens ``start:end`` of ``E`` into ``out[start:end]``.

    ``beta`` is a work table of at least ``end - start`` rows, ``tmp`` a work vector of length L.
    """
    n = end - start
    if n == 0:
        return
    L = E.shape[1]
    for j in range(L):
        out[start, j] = A[L, j] + E[start, j]
    for p in range(start + 1, end):
        for j in range(L):
            best = out[p - 1, 0] + A[0, j]
            for i in range(1, L):
                s = out[p - 1, i] + A[i, j]
                if s > best:
                    best = s
            out[p, j] = best + E[p, j]
    for i in range(L):
        beta[n - 1, i] = A[L + 1, i]
    for t in range(n - 2, -1, -1):
        for j in range(L):
            tmp[j] = E[start + t + 1, j] + beta[t + 1, j]
        for i in range(L):
            best = A[i, 0] + tmp[0]
            for j in range(1, L):
                s = A[i, j] + tmp[j]
                if s > best:
                    best = s
            beta[t, i] = best
    for t in range(n):
        for y in range(L):
            out[start + t, y] += beta[t, y]


@numba.njit(cache=True, nogil=True)
def max_marginals_batch_kernel(E, sent_offsets, A):
    """Max-marginals of every sentence ``sent_offsets[b]:sent_offsets[b+1]`` of ``E``."""
    L = E.shape[1]
    out = np.empty(E.shape)
    longest = 1
    for b in range(sent_offsets.shape[0] - 1):
        longest = max(longest, sent_offsets[b + 1] - sent_offsets[b])
    beta = np.empty((longest, L))
    tmp = np.empty(L)
    for b in range(sent_offsets.shape[0] - 1):
        _max_marginals_span(E, A, sent_offsets[b], sent_offsets[b + 1], beta, tmp, out)
    return out


@numba.njit(cache=True, nogil=True)
def delta_from_max_marginals(MM):
    """Per token: best minus second-best max-marginal (0 on a tie, +inf when L = 1).

    Equals s(y_hat) - max_{u != y_hat_p} MM[p, u], since MM[p, y_hat_p] = s(y_hat) is the row
    maximum; it does not depend on how Viterbi breaks ties.
    """
    n, L = MM.shape
    out = np.empty(n)
    for p in range(n):
        first = -np.inf
        second = -np.inf
        for y in range(L):
            v = MM[p, y]
            if v > first:
                second = first
                first = v
            elif v > second:
                second = v
        out[p] = first - second if L > 1 else np.inf
    return out
