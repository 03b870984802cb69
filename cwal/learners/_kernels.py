"""Compiled online updates: one sentence's sparse difference vector and the step of each learner.

Weights follow docs/design.md: emission ``W (F, L)`` and transitions ``A (L+2, L)``. Both are
addressed through one flat index space: ``j < W.size`` is ``W.flat[j]``, else ``A.flat[j - W.size]``.

Averaging uses the lazy trick: with ``count`` the number of examples seen before the current one,
every change adds ``count * dw`` to ``U``; after T examples the average of the T weight vectors
(one after each example) is ``w - U / T``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from cwal.decode._kbest import kbest_kernel, n_labelings
from cwal.decode._viterbi import emissions_kernel

PERCEPTRON, PA, CW_VAR, CW_STDEV, AROW = 0, 1, 2, 3, 4
PROJ_L2, PROJ_KL = 0, 1
_MIN_VAR = 1e-12


@numba.njit(cache=True, nogil=True)
def difference(feat_ids, tok_offsets, y, z, n_w, L):
    """Sparse ``Phi(x, y) - Phi(x, z)`` as sorted unique flat indices and their non-zero values.

    Every entry is +1 or -1 at one flat index; packed as ``2 * index + (1 if +1)`` they sort as
    plain integers (one in-place sort, no index permutation), and the sum per index is exact in
    any order (small integers)."""
    n = y.shape[0]
    cap = 2 * (n + 1)
    for p in range(n):
        if y[p] != z[p]:
            cap += 2 * (tok_offsets[p + 1] - tok_offsets[p])
    keys = np.empty(cap, dtype=np.int64)
    k = 0
    for p in range(n):
        if y[p] != z[p]:
            for q in range(tok_offsets[p], tok_offsets[p + 1]):
                f = np.int64(feat_ids[q])
                keys[k] = (f * L + y[p]) * 2 + 1
                keys[k + 1] = (f * L + z[p]) * 2
                k += 2
    for p in range(n + 1 if n > 0 else 0):
        # transition p: (label at p - 1, or start) -> (label at p, or end)
        yi = L if p == 0 else y[p - 1]
        zi = L if p == 0 else z[p - 1]
        if p == n:
            yj, zj = yi, zi
            yi, zi = L + 1, L + 1
        else:
            yj, zj = y[p], z[p]
        if yi == zi and yj == zj:
            continue
        keys[k] = (n_w + yi * L + yj) * 2 + 1
        keys[k + 1] = (n_w + zi * L + zj) * 2
        k += 2
    keys = keys[:k]
    keys.sort()
    out_i = np.empty(k, dtype=np.int64)
    out_v = np.empty(k)
    m = 0
    for t in range(k):
        j = keys[t] >> 1
        x = 1.0 if keys[t] & 1 else -1.0
        if m > 0 and out_i[m - 1] == j:
            out_v[m - 1] += x
        else:
            out_i[m] = j
            out_v[m] = x
            m += 1
    keep = 0
    for t in range(m):
        if out_v[t] != 0.0:
            out_i[keep] = out_i[t]
            out_v[keep] = out_v[t]
            keep += 1
    return out_i[:keep], out_v[:keep]


@numba.njit(cache=True, nogil=True)
def step_sizes(algo, m, v, sq, d, c, phi):
    """(alpha, beta_c, beta_inv) of one update: the mean step ``mu += alpha S delta`` and the
    covariance step in covariance form (``S <- S - beta_c S d d' S``) and inverse form
    (``S^-1 <- S^-1 + beta_inv d d'``); algorithms.md §2.

    ``m`` margin, ``v`` variance of the margin, ``sq`` squared norm, ``d`` Hamming cost, ``c`` the
    aggressiveness (PA's C, AROW's r), ``phi`` CW's confidence parameter.
    """
    if algo == PERCEPTRON:
        return 1.0, 0.0, 0.0
    if algo == PA:
        if sq <= 0.0:
            return 0.0, 0.0, 0.0
        return min(c, max(0.0, d - m) / sq), 0.0, 0.0
    if v <= 0.0:
        return 0.0, 0.0, 0.0
    if algo == AROW:
        alpha = max(0.0, d - m) / (c + v)
        if alpha <= 0.0:
            return 0.0, 0.0, 0.0
        return alpha, 1.0 / (c + v), 1.0 / c
    if algo == CW_VAR:
        # positive root of 2 phi v a^2 + (1 + 2 phi m) a + (m - phi v) / v = 0, cancellation-free
        b = 1.0 + 2.0 * phi * m
        cc = (m - phi * v) / v
        if cc >= 0.0:
            return 0.0, 0.0, 0.0
        alpha = 2.0 * cc / (-b - math.sqrt(b * b - 8.0 * phi * v * cc))
        if alpha <= 0.0:
            return 0.0, 0.0, 0.0
        beta_inv = 2.0 * alpha * phi
        return alpha, beta_inv / (1.0 + beta_inv * v), beta_inv
    # CW, stdev form (mejer-crammer-2010 eq. 3)
    psi = 1.0 + phi * phi / 2.0
    zeta = 1.0 + phi * phi
    alpha = (-m * psi + math.sqrt(m * m * phi**4 / 4.0 + v * phi * phi * zeta)) / (v * zeta)
    if alpha <= 0.0:
        return 0.0, 0.0, 0.0
    sqrt_vp = (-alpha * v * phi + math.sqrt(alpha * alpha * v * v * phi * phi + 4.0 * v)) / 2.0
    return alpha, alpha * phi / (sqrt_vp + v * alpha * phi), alpha * phi / sqrt_vp


@numba.njit(cache=True, nogil=True)
def apply_update(idx, val, Wf, Af, SWf, SAf, UWf, UAf, count, algo, proj, c, phi, d):
    """One update of ``mu`` (and the diagonal covariance) along ``delta = (idx, val)``.

    Returns True when the weights changed.
    """
    n_w = Wf.shape[0]
    m = 0.0
    v = 0.0
    sq = 0.0
    for t in range(idx.shape[0]):
        j = idx[t]
        x = val[t]
        if j < n_w:
            m += Wf[j] * x
            v += SWf[j] * x * x
        else:
            m += Af[j - n_w] * x
            v += SAf[j - n_w] * x * x
        sq += x * x
    alpha, beta_c, beta_inv = step_sizes(algo, m, v, sq, d, c, phi)
    if alpha == 0.0:
        return False
    has_cov = algo >= CW_VAR
    for t in range(idx.shape[0]):
        j = idx[t]
        x = val[t]
        if j < n_w:
            dw = alpha * (SWf[j] if has_cov else 1.0) * x
            Wf[j] += dw
            UWf[j] += count * dw
        else:
            dw = alpha * (SAf[j - n_w] if has_cov else 1.0) * x
            Af[j - n_w] += dw
            UAf[j - n_w] += count * dw
    if has_cov:
        shrink(idx, val, SWf, SAf, proj, beta_c, beta_inv)
    return True


@numba.njit(cache=True, nogil=True)
def shrink(idx, val, SWf, SAf, proj, beta_c, beta_inv):
    """The diagonal covariance step along ``delta = (idx, val)`` (unique indices): L2 projection
    ``s <- s - beta_c (s x)^2`` (floored), KL projection ``1 / s <- 1 / s + beta_inv x^2``."""
    n_w = SWf.shape[0]
    for t in range(idx.shape[0]):
        j = idx[t]
        if j < n_w:
            SWf[j] = _shrunk(SWf[j], val[t], proj, beta_c, beta_inv)
        else:
            SAf[j - n_w] = _shrunk(SAf[j - n_w], val[t], proj, beta_c, beta_inv)


@numba.njit(cache=True, nogil=True)
def _shrunk(s2, x, proj, beta_c, beta_inv):
    """One variance after ``shrink``'s step, in float64 (the two arrays may differ in dtype)."""
    s2 = np.float64(s2)
    if proj == PROJ_L2:
        return max(s2 - beta_c * (s2 * x) ** 2, _MIN_VAR)
    return 1.0 / (1.0 / s2 + beta_inv * x * x)


@numba.njit(cache=True, nogil=True)
def hamming(y, z):
    d = 0
    for p in range(y.shape[0]):
        if y[p] != z[p]:
            d += 1
    return d


@numba.njit(cache=True, nogil=True)
def _forward(E, A, alpha, back):
    """Viterbi's forward pass into ``alpha (n, L)`` (best prefix score ending in each label,
    emission included) and ``back`` (its predecessor; ties to the lowest label); returns the
    best final label."""
    n, L = E.shape
    for j in range(L):
        alpha[0, j] = A[L, j] + E[0, j]
    for t in range(1, n):
        for j in range(L):
            best = alpha[t - 1, 0] + A[0, j]
            arg = 0
            for i in range(1, L):
                s = alpha[t - 1, i] + A[i, j]
                if s > best:
                    best = s
                    arg = i
            alpha[t, j] = best + E[t, j]
            back[t, j] = arg
    best = alpha[n - 1, 0] + A[L + 1, 0]
    arg = 0
    for j in range(1, L):
        s = alpha[n - 1, j] + A[L + 1, j]
        if s > best:
            best = s
            arg = j
    return arg


@numba.njit(cache=True, nogil=True)
def _backward(E, A, beta, fwd):
    """The mirror pass: ``beta[t, j]`` the best score of tokens after t given label j at t
    (transitions to the end included), ``fwd`` the next label it takes (ties to the lowest)."""
    n, L = E.shape
    nxt = np.empty(L)
    for j in range(L):
        beta[n - 1, j] = A[L + 1, j]
    for t in range(n - 2, -1, -1):
        for k in range(L):
            nxt[k] = E[t + 1, k] + beta[t + 1, k]
        for j in range(L):
            best = A[j, 0] + nxt[0]
            arg = 0
            for k in range(1, L):
                s = A[j, k] + nxt[k]
                if s > best:
                    best = s
                    arg = k
            beta[t, j] = best
            fwd[t, j] = arg


@numba.njit(cache=True, nogil=True)
def best_wrong(E, A, y):
    """``viterbi_or_second(E, A, y, True)``: the best labeling other than ``y`` (see there)."""
    return viterbi_or_second(E, A, y, True)


@numba.njit(cache=True, nogil=True)
def viterbi_or_second(E, A, y, second):
    """The highest-scoring labeling other than ``y``, whether one exists (n >= 1 and L >= 2),
    and the Hamming error of Viterbi's labeling (``second`` False: Viterbi's labeling, whether it
    is wrong, and its error).

    Viterbi's labeling when it is not ``y``; else the second best: every labeling z != y differs
    from y at some p with some u != y_p, so its score is at most the max-marginal
    ``alpha[p, u] + beta[p, u]``; the best (p, u) pair's labeling is the best prefix into it
    (forward pointers) joined to the best suffix out of it (backward pointers), so one
    backward pass replaces max-marginals plus a forced Viterbi.
    """
    n, L = E.shape
    z = np.zeros(n, dtype=np.int32)
    if n == 0:
        return z, False, 0
    alpha = np.empty((n, L))
    back = np.zeros((n, L), dtype=np.int32)
    z[n - 1] = _forward(E, A, alpha, back)
    for t in range(n - 1, 0, -1):
        z[t - 1] = back[t, z[t]]
    errors = hamming(y, z)
    if not second or L < 2 or errors > 0:
        return z, errors > 0 if not second else L >= 2, errors
    beta = np.empty((n, L))
    fwd = np.zeros((n, L), dtype=np.int32)
    _backward(E, A, beta, fwd)
    best = -np.inf
    bp, bu = -1, -1
    for p in range(n):
        for u in range(L):
            if u != y[p] and (bp < 0 or alpha[p, u] + beta[p, u] > best):
                best = alpha[p, u] + beta[p, u]
                bp, bu = p, u
    z[bp] = bu
    for t in range(bp, 0, -1):
        z[t - 1] = back[t, z[t]]
    for t in range(bp, n - 1):
        z[t + 1] = fwd[t, z[t]]
    return z, True, 0


@numba.njit(cache=True, nogil=True)
def learn_sentence(feat_ids, tok_offsets, y, W, A, SW, SA, UW, UA, count, algo, proj, c, phi,
                   k, mistake_driven):  # fmt: skip
    """Update on one sentence against its ``k`` best wrong labelings under the current mean.

    ``mistake_driven`` skips the sentence when Viterbi's labeling is the gold one; otherwise a
    correct prediction whose margin is too small still updates (CW/AROW/PA's "margin too
    small" rule). With k = 1 the competitor is ``best_wrong``; with k > 1 the competitors come
    from k-best Viterbi (gold excluded) and are applied one after another, each a
    single-constraint step from the weights the previous one left.
    Returns the number of mislabeled tokens of Viterbi's labeling (the prequential error).
    """
    n = y.shape[0]
    if n == 0:
        return 0
    L = W.shape[1]
    n_w = W.size
    Wf, Af = W.reshape(n_w), A.reshape(A.size)
    SWf, SAf = SW.reshape(SW.size), SA.reshape(SA.size)
    UWf, UAf = UW.reshape(UW.size), UA.reshape(UA.size)
    E = emissions_kernel(feat_ids, tok_offsets, W)
    if k == 1:
        z, ok, first = viterbi_or_second(E, A, y, not mistake_driven)
        if ok:
            d = float(hamming(y, z))
            idx, val = difference(feat_ids, tok_offsets, y, z, n_w, L)
            apply_update(idx, val, Wf, Af, SWf, SAf, UWf, UAf, count, algo, proj, c, phi, d)
        return first
    Z, _ = kbest_kernel(E, A, n_labelings(L, n, k + 1))
    first = hamming(y, Z[0])
    if mistake_driven and first == 0:
        return 0
    done = 0
    for i in range(Z.shape[0]):
        if done == k:
            break
        d = hamming(y, Z[i])
        if d == 0:
            continue
        idx, val = difference(feat_ids, tok_offsets, y, Z[i], n_w, L)
        apply_update(idx, val, Wf, Af, SWf, SAf, UWf, UAf, count, algo, proj, c, phi, float(d))
        done += 1
    return first


@numba.njit(cache=True, nogil=True)
def train_epoch(order, feat_ids, tok_offsets, sent_offsets, gold, W, A, SW, SA, UW, UA, count,
                algo, proj, c, phi, k, mistake_driven):  # fmt: skip
    """One pass over the sentences in ``order``; returns (new count, mislabeled tokens)."""
    errors = 0
    for b in order:
        t0 = sent_offsets[b]
        t1 = sent_offsets[b + 1]
        f0 = tok_offsets[t0]
        offs = tok_offsets[t0 : t1 + 1] - f0
        feats = feat_ids[f0 : tok_offsets[t1]]
        errors += learn_sentence(
            feats, offs, gold[t0:t1], W, A, SW, SA, UW, UA, count, algo, proj, c, phi,
            k, mistake_driven,
        )  # fmt: skip
        count += 1.0
    return count, errors
