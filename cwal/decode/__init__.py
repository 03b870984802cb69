"""Decoding for first-order sequence models: emission scores, Viterbi, k-best, max-marginals.

Thin wrappers that check shapes and convert dtypes, then call the compiled kernels (numba,
``cache=True``). Layout (docs/design.md): ``W (F, L)``, ``E (n, L)``, ``A (L + 2, L)`` where
``A[i, j]`` scores label i followed by j, row ``L`` is start -> j and row ``L + 1`` is j -> end.
A batch concatenates sentences along the token axis; ``sent_offsets (B + 1)`` delimits them.
Ties are broken toward the lowest label index (deciding from the last token backwards).
"""

from __future__ import annotations

import numpy as np

from cwal.decode._kbest import kbest_kernel
from cwal.decode._marginals import delta_from_max_marginals, max_marginals_batch_kernel
from cwal.decode._viterbi import (
    emissions_kernel,
    emissions_multi_kernel,
    sequence_score_kernel,
    viterbi_batch_kernel,
    viterbi_multi_kernel,
)

__all__ = [
    "delta_margin",
    "delta_margin_batch",
    "emissions",
    "emissions_multi",
    "kbest",
    "max_marginals",
    "max_marginals_batch",
    "sequence_score",
    "viterbi",
    "viterbi_batch",
    "viterbi_multi",
]


def _floats(x: np.ndarray, ndim: int, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.shape[-1] < 1:
        raise ValueError(f"{name} needs at least one label column, got shape {arr.shape}")
    return arr


def _emissions_and_transitions(E: np.ndarray, A: np.ndarray, ndim: int = 2):
    E = _floats(E, ndim, "E")
    A = _floats(A, ndim, "A")
    L = E.shape[-1]
    if A.shape[-2:] != (L + 2, L):
        raise ValueError(f"A must end in shape ({L + 2}, {L}) for L={L}, got {A.shape}")
    if ndim == 3 and A.shape[0] != E.shape[0]:
        raise ValueError(f"E and A disagree on K: {E.shape[0]} vs {A.shape[0]}")
    return E, A


def _offsets(offsets: np.ndarray, total: int, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(offsets, dtype=np.int64)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if arr[0] != 0 or arr[-1] != total:
        raise ValueError(f"{name} must run from 0 to {total}, got {arr[0]}..{arr[-1]}")
    if arr.shape[0] > 1 and np.any(arr[1:] < arr[:-1]):
        raise ValueError(f"{name} must be non-decreasing")
    return arr


def _features(feat_ids: np.ndarray, tok_offsets: np.ndarray, n_features: int):
    ids = np.ascontiguousarray(feat_ids, dtype=np.int32)
    if ids.ndim != 1:
        raise ValueError(f"feat_ids must be 1-D, got shape {ids.shape}")
    offsets = _offsets(tok_offsets, ids.shape[0], "tok_offsets")
    if ids.size and (ids.min() < 0 or ids.max() >= n_features):
        raise ValueError(f"feature ids must lie in [0, {n_features}), got {ids.min()}..{ids.max()}")
    return ids, offsets


def emissions(feat_ids: np.ndarray, tok_offsets: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Emission scores ``E (n, L)``: ``E[p]`` sums the rows of ``W (F, L)`` of token p's features.

    Token p's feature ids are ``feat_ids[tok_offsets[p]:tok_offsets[p + 1]]``.
    """
    W = _floats(W, 2, "W")
    ids, offsets = _features(feat_ids, tok_offsets, W.shape[0])
    return emissions_kernel(ids, offsets, W)


def emissions_multi(feat_ids: np.ndarray, tok_offsets: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Emission scores under K weight matrices ``W (K, F, L)`` -> ``E (K, n, L)`` (for KD-PC)."""
    W = _floats(W, 3, "W")
    ids, offsets = _features(feat_ids, tok_offsets, W.shape[1])
    return emissions_multi_kernel(ids, offsets, W)


def sequence_score(E: np.ndarray, A: np.ndarray, y: np.ndarray) -> float:
    """Total score of labeling ``y`` (length n): emissions plus start, inner and end transitions."""
    E, A = _emissions_and_transitions(E, A)
    labels = np.ascontiguousarray(y, dtype=np.int64)
    if labels.shape != (E.shape[0],):
        raise ValueError(f"y must have shape ({E.shape[0]},), got {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= E.shape[1]):
        raise ValueError(f"labels must lie in [0, {E.shape[1]})")
    return float(sequence_score_kernel(E, A, labels))


def viterbi(E: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Highest-scoring labeling of one sentence, ``int32[n]`` (empty for n = 0)."""
    E, A = _emissions_and_transitions(E, A)
    return viterbi_batch_kernel(E, np.array([0, E.shape[0]], dtype=np.int64), A)


def viterbi_batch(E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Viterbi labeling of every sentence of a batch, concatenated: ``int32[n_tok]``."""
    E, A = _emissions_and_transitions(E, A)
    offsets = _offsets(sent_offsets, E.shape[0], "sent_offsets")
    return viterbi_batch_kernel(E, offsets, A)


def viterbi_multi(E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Viterbi of one batch under K weight vectors: ``E (K, n_tok, L)``, ``A (K, L + 2, L)``.

    Returns ``int32[K, n_tok]``; row k equals ``viterbi_batch(E[k], sent_offsets, A[k])``.
    The K decodings run in parallel threads (numba ``prange``).
    """
    E, A = _emissions_and_transitions(E, A, ndim=3)
    offsets = _offsets(sent_offsets, E.shape[1], "sent_offsets")
    return viterbi_multi_kernel(E, offsets, A)


def kbest(E: np.ndarray, A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k' = min(k, L**n)`` best distinct labelings, best first (exact k-best Viterbi).

    Returns ``(labels int32[k', n], scores float64[k'])``. For n = 0 the single (empty) labeling
    scores 0. The first labeling equals :func:`viterbi`'s.
    """
    E, A = _emissions_and_transitions(E, A)
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n, L = E.shape
    if n == 0:
        return np.zeros((1, 0), dtype=np.int32), np.zeros(1)
    k = min(k, L**n)
    return kbest_kernel(E, A, k)


def max_marginals(E: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``MM (n, L)``: ``MM[p, y]`` = best total score of any labeling with ``y_p = y``."""
    E, A = _emissions_and_transitions(E, A)
    return max_marginals_batch_kernel(E, np.array([0, E.shape[0]], dtype=np.int64), A)


def max_marginals_batch(E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray) -> np.ndarray:
    """:func:`max_marginals` of every sentence of a batch, concatenated: ``(n_tok, L)``."""
    E, A = _emissions_and_transitions(E, A)
    offsets = _offsets(sent_offsets, E.shape[0], "sent_offsets")
    return max_marginals_batch_kernel(E, offsets, A)


def delta_margin(E: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Per-token Delta confidence ``s(y_hat) - max_{u != y_hat_p} MM[p, u]``, ``float64[n]``.

    Non-negative; 0 where another label ties with the Viterbi label; +inf when L = 1.
    """
    return delta_from_max_marginals(max_marginals(E, A))


def delta_margin_batch(E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray) -> np.ndarray:
    """:func:`delta_margin` of every sentence of a batch, concatenated: ``float64[n_tok]``."""
    return delta_from_max_marginals(max_marginals_batch(E, sent_offsets, A))
