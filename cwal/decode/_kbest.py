"""Compiled kernel: exact k-best Viterbi (the k best distinct labelings, best first).

For each (position t, label j) the DP keeps the k best partial paths ending in j at t, sorted by
score. Those lists are built by a lazy k-way merge of the predecessor lists (each already sorted),
so a (t, j) cell costs O(k L). Every kept entry is a distinct path (distinct predecessor cell or
rank), hence the final k labelings are distinct. Ties go to the lowest predecessor label, then the
lower rank, so the first labeling equals :func:`viterbi`'s.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _merge(sc, cnt, t, trans, k, ptr, head, out_sc, out_lab, out_rank):
    """Top ``k`` of ``sc[t, i, r] + trans[i]`` over all kept (i, r), best first.

    A lazy k-way merge of the L sorted lists ``sc[t, i, :cnt[t, i]]``: ``head[i]`` holds the
    next candidate of list i (-inf once exhausted). Returns how many entries were written.
    """
    L = sc.shape[1]
    total = 0
    for i in range(L):
        ptr[i] = 0
        head[i] = sc[t, i, 0] + trans[i] if cnt[t, i] > 0 else -np.inf
        total += cnt[t, i]
    m = min(k, total)
    for q in range(m):
        best = head[0]
        arg = 0
        for i in range(1, L):
            if head[i] > best:
                best = head[i]
                arg = i
        if ptr[arg] >= cnt[t, arg]:  # only when every live head is -inf (or NaN)
            arg = 0
            while ptr[arg] >= cnt[t, arg]:
                arg += 1
            best = head[arg]
        r = ptr[arg]
        out_sc[q] = best
        out_lab[q] = arg
        out_rank[q] = r
        ptr[arg] = r + 1
        head[arg] = sc[t, arg, r + 1] + trans[arg] if r + 1 < cnt[t, arg] else -np.inf
    return m


@numba.njit(cache=True, nogil=True)
def n_labelings(L, n, cap):
    """``min(L ** n, cap)`` without overflow: how many labelings a k-best search of an
    ``n``-token sentence over ``L`` labels can return at most (``cap`` = the k asked)."""
    total = 1
    for _ in range(n):
        total *= L
        if total >= cap:
            return cap
    return total


@numba.njit(cache=True, nogil=True)
def kbest_kernel(E, A, k):
    """The ``min(k, L**n)`` best distinct labelings of ``E`` (n >= 1) and their scores."""
    n, L = E.shape
    sc = np.empty((n, L, k))
    back_lab = np.empty((n, L, k), dtype=np.int32)
    back_rank = np.empty((n, L, k), dtype=np.int32)
    cnt = np.zeros((n, L), dtype=np.int32)
    ptr = np.empty(L, dtype=np.int32)
    trans = np.empty(L)
    head = np.empty(L)
    for j in range(L):
        sc[0, j, 0] = A[L, j] + E[0, j]
        cnt[0, j] = 1
    for t in range(1, n):
        for j in range(L):
            for i in range(L):
                trans[i] = A[i, j]
            m = _merge(
                sc, cnt, t - 1, trans, k, ptr, head, sc[t, j], back_lab[t, j], back_rank[t, j]
            )
            for r in range(m):
                sc[t, j, r] += E[t, j]
            cnt[t, j] = m
    scores = np.empty(k)
    last_lab = np.empty(k, dtype=np.int32)
    last_rank = np.empty(k, dtype=np.int32)
    for i in range(L):
        trans[i] = A[L + 1, i]
    m = _merge(sc, cnt, n - 1, trans, k, ptr, head, scores, last_lab, last_rank)
    labels = np.empty((m, n), dtype=np.int32)
    for q in range(m):
        j = last_lab[q]
        r = last_rank[q]
        labels[q, n - 1] = j
        for t in range(n - 1, 0, -1):
            pj = back_lab[t, j, r]
            r = back_rank[t, j, r]
            j = pj
            labels[q, t - 1] = j
    return labels, scores[:m].copy()
