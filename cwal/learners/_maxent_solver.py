"""The scikit-learn side of the L1 maxent baseline (``cwal.learners.maxent``): the binary token x
feature matrix it fits, the fit of either form, and label probabilities from scores."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

FORMS: dict[str, tuple[str, ...]] = {"exclusive": ("saga",), "independent": ("liblinear", "saga")}
# liblinear's own default for L1 logistic regression; saga's stopping rule is a weight change
TOL = {"liblinear": 1e-2, "saga": 1e-3}


def token_matrix(feat_ids: np.ndarray, counts: np.ndarray, n_features: int) -> Any:
    """The binary token x feature CSR matrix (row p has a 1 at each feature id of token p)."""
    from scipy.sparse import csr_matrix

    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    data = np.ones(len(feat_ids))
    return csr_matrix((data, feat_ids, indptr), shape=(len(counts), n_features))


def pad(a: np.ndarray, shape: tuple[int, int], fill: float = 0.0) -> np.ndarray:
    out = np.full(shape, fill)
    out[: a.shape[0], : a.shape[1]] = a
    return out


def normalise(S: np.ndarray, form: str) -> np.ndarray:
    """Label probabilities from scores ``S (n, L)`` (``-inf`` = impossible label): a softmax for
    the exclusive form, sigmoids renormalised over the labels for the independent one."""
    if form == "independent":
        S = -np.logaddexp(0.0, -S)  # log sigmoid
    P = np.exp(S - S.max(axis=1, keepdims=True)) if len(S) else S.copy()
    P /= P.sum(axis=1, keepdims=True)
    return P


def solve(
    X: Any, y: np.ndarray, n_labels: int, c: float, seed: int, params: dict[str, Any]
) -> tuple[np.ndarray, bool]:
    """``(W (F, n_labels), converged)``: the L1 maxent of ``params``' ``form`` fitted by
    scikit-learn (``solver``, ``tol``, ``max_iter``) on the token rows ``X`` with label ids
    ``y``; a label no token has keeps zero weights. Other warnings than non-convergence are
    passed on to the learner's caller."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    W = np.zeros((X.shape[1], n_labels))
    present = np.unique(y)
    if len(present) < 2:  # one label (or none) seen: nothing to discriminate
        return W, True
    p = params

    def model() -> LogisticRegression:
        return LogisticRegression(
            C=c, l1_ratio=1.0, solver=p["solver"], fit_intercept=False, tol=p["tol"],
            max_iter=p["max_iter"], random_state=seed,
        )  # fmt: skip

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if p["form"] == "exclusive":
            coef = model().fit(X, y).coef_
            if len(present) == 2:  # scikit-learn's binary model scores the second class
                W[:, present[1]] = coef[0]
            else:
                W[:, present] = coef.T
        else:
            for j in present:
                W[:, j] = model().fit(X, (y == j).astype(np.int8)).coef_[0]
    converged = True
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn(w.message, w.category, stacklevel=3)
    return W, converged
