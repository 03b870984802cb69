"""Compiled kernels for MinMargin and MinConfMargin: the two best labelings of each sentence, and
``g^T Sigma g`` for ``g = Phi(x, best) - Phi(x, second)`` with a diagonal Sigma."""

from __future__ import annotations

import numba
import numpy as np

from cwal.decode._kbest import kbest_kernel


@numba.njit(cache=True, nogil=True)
def top2_kernel(E, sent_offsets, A):
    """Per sentence ``s(best) - s(second)`` (inf when only one labeling exists) and both labelings
    concatenated over the batch (the second equals the first where none exists)."""
    B = sent_offsets.shape[0] - 1
    L = E.shape[1]
    margin = np.full(B, np.inf)
    first = np.zeros(E.shape[0], dtype=np.int32)
    second = np.zeros(E.shape[0], dtype=np.int32)
    for b in range(B):
        t0 = sent_offsets[b]
        t1 = sent_offsets[b + 1]
        if t1 == t0:
            continue
        k = 1 if (L == 1) else 2
        labels, scores = kbest_kernel(E[t0:t1], A, k)
        first[t0:t1] = labels[0]
        second[t0:t1] = labels[labels.shape[0] - 1]
        if labels.shape[0] == 2:
            margin[b] = scores[0] - scores[1]
    return margin, first, second


@numba.njit(cache=True, nogil=True)
def _squared_norm(keys, signs, var):
    """``sum_key (sum of signs at key)^2 * var.flat[key]`` (sparse g, diagonal Sigma)."""
    if keys.shape[0] == 0:
        return 0.0
    order = np.argsort(keys)
    total = 0.0
    run = 0.0
    for q in range(order.shape[0]):
        i = order[q]
        if q > 0 and keys[i] != keys[order[q - 1]]:
            total += run * run * var[keys[order[q - 1]]]
            run = 0.0
        run += signs[i]
    return total + run * run * var[keys[order[order.shape[0] - 1]]]


@numba.njit(cache=True, nogil=True)
def gsg_kernel(feat_ids, tok_offsets, sent_offsets, first, second, SW, SA):
    """Per sentence ``g^T Sigma g``: emission and transition features of the best labeling minus
    those of the second (features shared by both cancel), weighted by the diagonals SW, SA."""
    B = sent_offsets.shape[0] - 1
    L = SW.shape[1]
    sw = SW.ravel()
    sa = SA.ravel()
    out = np.zeros(B)
    for b in range(B):
        t0 = sent_offsets[b]
        t1 = sent_offsets[b + 1]
        size = 0
        for t in range(t0, t1):
            if first[t] != second[t]:
                size += 2 * (tok_offsets[t + 1] - tok_offsets[t])
        keys = np.empty(size, dtype=np.int64)
        signs = np.empty(size)
        m = 0
        for t in range(t0, t1):
            if first[t] != second[t]:
                for idx in range(tok_offsets[t], tok_offsets[t + 1]):
                    f = feat_ids[idx]
                    keys[m] = f * L + first[t]
                    signs[m] = 1.0
                    keys[m + 1] = f * L + second[t]
                    signs[m + 1] = -1.0
                    m += 2
        total = _squared_norm(keys, signs, sw)
        n = t1 - t0
        tk = np.empty(2 * (n + 1), dtype=np.int64)
        ts = np.empty(2 * (n + 1))
        m = 0
        for p in range(n + 1):
            for which in range(2):
                y = first if which == 0 else second
                prev = L if p == 0 else y[t0 + p - 1]
                if p == n:
                    key = (L + 1) * L + y[t0 + n - 1] if n > 0 else 0
                else:
                    key = prev * L + y[t0 + p]
                tk[m] = key
                ts[m] = 1.0 if which == 0 else -1.0
                m += 1
        out[b] = total + (_squared_norm(tk, ts, sa) if n > 0 else 0.0)
    return out
