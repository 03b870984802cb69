"""Delta: the margin between the best labeling and the best one that changes token p's label.

``Delta_p = s(y_hat) - max_{u != y_hat_p} MM[p, u]`` from Viterbi max-marginals (mejer-crammer-2010
§5). A relative score only: it ranks tokens but is not a probability. It also serves as the finer
signal that breaks KD's ties (many tokens agree in all K draws), raw or normalised by the
standard deviation of the score difference under the model's covariance (``z_margin``).
"""

from __future__ import annotations

import numpy as np

from cwal.decode import max_marginals_batch
from cwal.decode._marginals import delta_from_max_marginals
from cwal.features import Encoded


def runner_up(MM: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per token, the best label other than ``labels[p]`` by max-marginal (``int32[n]``)."""
    masked = MM.copy()
    masked[np.arange(len(labels)), labels] = -np.inf
    return np.argmax(masked, axis=1).astype(np.int32)


def margins(
    E: np.ndarray, sent_offsets: np.ndarray, A: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(Delta float64[n], MM (n, L))`` for a batch with emission scores ``E``."""
    MM = max_marginals_batch(E, sent_offsets, A)
    return delta_from_max_marginals(MM), MM


def z_margin(
    delta: np.ndarray,
    MM: np.ndarray,
    labels: np.ndarray,
    enc: Encoded,
    SW: np.ndarray | None,
) -> np.ndarray:
    """Delta over the standard deviation of token p's emission-score difference between its label
    and the runner-up: ``sqrt(sum_{f in p} SW[f, y_p] + SW[f, u_p])`` (``SW = 1`` when None).

    A local, emission-only approximation of how many standard deviations of weight noise it takes
    to flip the token, comparable across tokens with few and many (or certain and uncertain)
    features."""
    n = len(labels)
    if MM.shape[1] < 2:
        return np.full(n, np.inf)
    counts = np.diff(enc.tok_offsets)
    tok = np.repeat(np.arange(n), counts)
    if SW is None:
        var = 2.0 * counts.astype(np.float64)
    else:
        u = runner_up(MM, labels)
        f = enc.feat_ids
        var = np.bincount(tok, weights=SW[f, labels[tok]] + SW[f, u[tok]], minlength=n)
    return delta / np.sqrt(np.maximum(var, 1e-300))
