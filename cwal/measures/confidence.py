"""How good per-token confidence is: ranking (relative) and calibration (absolute) measures.

Follows mejer-crammer-2010 §5 (docs/algorithms.md §5). Tokens are ranked by ascending
confidence, least confident first, and the mis-labeled tokens are the ones to retrieve.
Every function raises ValueError on empty input, on arrays of different lengths and on
non-finite confidence; calibration measures also require confidence in [0, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:  # pandas loads only where a table is made (not on the training path)
    import pandas as pd

Ties = Literal["random", "pessimistic", "optimistic"]
TIES = ("random", "pessimistic", "optimistic")


def _confidence(values: object, *, unit: bool, name: str = "confidence") -> np.ndarray:
    """Validate a 1-D, non-empty, finite array (in [0, 1] when ``unit``) as float64."""
    conf = np.asarray(values, dtype=np.float64)
    if conf.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {conf.shape}")
    if conf.size == 0:
        raise ValueError(f"{name} is empty: nothing to measure")
    if not np.all(np.isfinite(conf)):
        raise ValueError(f"{name} holds NaN or infinite values")
    if unit and (conf.min() < 0.0 or conf.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got values in [{conf.min()}, {conf.max()}]")
    return conf


def _correct(correct: object, n: int) -> np.ndarray:
    """Validate a boolean (or 0/1) array of length ``n``."""
    arr = np.asarray(correct)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"correct must be 1-D of length {n}, got shape {arr.shape}")
    if arr.dtype != np.bool_:
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError("correct must be boolean (or 0/1)")
        arr = arr.astype(bool)
    return arr


def rank_order(
    confidence: np.ndarray,
    correct: np.ndarray,
    *,
    tiebreak: np.ndarray | None = None,
    ties: Ties = "random",
    seed: int = 0,
) -> np.ndarray:
    """Token indices from least to most confident.

    Equal confidences are ordered by ``tiebreak`` (ascending) when given; tokens still tied are
    ordered by ``ties``: ``"random"`` (a permutation drawn from ``seed``: the paper's implicit
    behaviour), ``"pessimistic"`` (errors last: the lowest score a tie can give) or
    ``"optimistic"`` (errors first: the highest).
    """
    conf = _confidence(confidence, unit=False)
    ok = _correct(correct, conf.size)
    if ties == "random":
        last = np.random.default_rng(seed).permutation(conf.size)
    elif ties == "pessimistic":
        last = (~ok).astype(np.int8)
    elif ties == "optimistic":
        last = ok.astype(np.int8)
    else:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    keys = [last]
    if tiebreak is not None:
        tb = np.asarray(tiebreak, dtype=np.float64)
        if tb.shape != conf.shape:
            raise ValueError(f"tiebreak must have shape {conf.shape}, got {tb.shape}")
        if np.isnan(tb).any():
            raise ValueError("tiebreak holds NaN values")
        keys.append(tb)
    keys.append(conf)
    return np.lexsort(keys)  # the last key is the primary one


def average_precision(
    confidence: np.ndarray,
    correct: np.ndarray,
    *,
    tiebreak: np.ndarray | None = None,
    ties: Ties = "random",
    seed: int = 0,
) -> float:
    """AP of retrieving the mis-labeled tokens when ranking by ascending confidence.

    The mean over erroneous tokens of the precision at their rank: sum_k (k / r_k) / m for the
    k-th error found at 1-based rank r_k, m errors in all. Confidence may be any real score
    (the margin of Delta too). With no errors there is nothing to retrieve and AP is 0.0.
    Ties: see ``rank_order``.
    """
    conf = _confidence(confidence, unit=False)
    ok = _correct(correct, conf.size)
    order = rank_order(conf, ok, tiebreak=tiebreak, ties=ties, seed=seed)
    ranks = np.flatnonzero(~ok[order]) + 1
    if ranks.size == 0:
        return 0.0
    return float(np.mean(np.arange(1, ranks.size + 1) / ranks))


def errors_in_top(
    confidence: np.ndarray,
    correct: np.ndarray,
    n: int = 5000,
    *,
    tiebreak: np.ndarray | None = None,
    ties: Ties = "random",
    seed: int = 0,
) -> int:
    """Number of mis-labeled tokens among the ``n`` least confident (all tokens if fewer).

    The paper's Fig. 3 counts these for the first 5,000 ranked words. Ties: see ``rank_order``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    conf = _confidence(confidence, unit=False)
    ok = _correct(correct, conf.size)
    order = rank_order(conf, ok, tiebreak=tiebreak, ties=ties, seed=seed)
    return int(np.count_nonzero(~ok[order[:n]]))


def _bin_index(conf: np.ndarray, bins: int) -> np.ndarray:
    """0-based bin of each confidence: bin j holds [j/bins, (j+1)/bins); 1.0 joins the last."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    edges = np.arange(bins + 1, dtype=np.float64) / bins
    return np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, bins - 1)


def reliability_table(confidence: np.ndarray, correct: np.ndarray, bins: int = 20) -> pd.DataFrame:
    """Per-bin accuracy against confidence over ``bins`` uniform bins of [0, 1].

    One row per bin (empty ones too), columns: ``bin`` (1-based j), ``lo``, ``hi``, ``center``
    (b_j = j/bins - 1/(2 bins)), ``count`` (n_j), ``accuracy`` (c_j, fraction correct) and
    ``mean_confidence``. Bin j holds [lo, hi); 0.0 falls in the first bin, 1.0 in the last.
    accuracy and mean_confidence are NaN in empty bins.
    """
    conf = _confidence(confidence, unit=True)
    ok = _correct(correct, conf.size)
    idx = _bin_index(conf, bins)
    count = np.bincount(idx, minlength=bins)
    hits = np.bincount(idx, weights=ok.astype(np.float64), minlength=bins)
    conf_sum = np.bincount(idx, weights=conf, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(count > 0, hits / count, np.nan)
        mean_conf = np.where(count > 0, conf_sum / count, np.nan)
    j = np.arange(1, bins + 1)
    import pandas as pd

    return pd.DataFrame(
        {
            "bin": j,
            "lo": (j - 1) / bins,
            "hi": j / bins,
            "center": j / bins - 1 / (2 * bins),
            "count": count.astype(np.int64),
            "accuracy": accuracy,
            "mean_confidence": mean_conf,
        }
    )


def calibration_rmse(confidence: np.ndarray, correct: np.ndarray, bins: int = 20) -> float:
    """The paper's RMSE: sqrt(sum_j n_j (b_j - c_j)^2 / sum_j n_j) with bin centers b_j."""
    table = reliability_table(confidence, correct, bins)
    used = table[table["count"] > 0]
    n = used["count"].to_numpy(dtype=np.float64)
    gap = used["center"].to_numpy() - used["accuracy"].to_numpy()
    return float(np.sqrt(np.sum(n * gap**2) / np.sum(n)))


def expected_calibration_error(
    confidence: np.ndarray, correct: np.ndarray, bins: int = 20
) -> float:
    """Standard ECE: sum_j (n_j / N) |mean confidence_j - c_j| over the same uniform bins."""
    table = reliability_table(confidence, correct, bins)
    used = table[table["count"] > 0]
    n = used["count"].to_numpy(dtype=np.float64)
    gap = np.abs(used["mean_confidence"].to_numpy() - used["accuracy"].to_numpy())
    return float(np.sum(n * gap) / np.sum(n))


def brier_score(confidence: np.ndarray, correct: np.ndarray) -> float:
    """Mean squared gap between confidence and the 0/1 correctness of each token."""
    conf = _confidence(confidence, unit=True)
    ok = _correct(correct, conf.size)
    return float(np.mean((conf - ok) ** 2))


def token_entropy(distributions: np.ndarray, atol: float = 1e-6) -> np.ndarray:
    """Natural-log entropy of each row of an ``(n, L)`` probability array (0 log 0 = 0).

    Rows must be non-negative and sum to 1 within ``atol``; a high entropy marks a token
    whose label distribution (e.g. the K-draws vote shares) is spread out.
    """
    p = np.asarray(distributions, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"distributions must be 2-D (n, L), got shape {p.shape}")
    if p.size == 0:
        raise ValueError(f"distributions is empty (shape {p.shape}): nothing to measure")
    if not np.all(np.isfinite(p)) or p.min() < 0.0:
        raise ValueError("distributions must hold finite, non-negative probabilities")
    sums = p.sum(axis=1)
    if not np.allclose(sums, 1.0, rtol=0.0, atol=atol):
        worst = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(f"row {worst} of distributions sums to {sums[worst]}, not 1")
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * logs, axis=1)


def entropy_histogram(
    entropy: np.ndarray, bins: int = 20, range: tuple[float, float] | None = None
) -> pd.DataFrame:
    """Histogram of token entropies: columns bin (1-based), lo, hi, center, count, fraction.

    ``range`` defaults to (0, max entropy), or (0, 1) when every entropy is 0. Bins are
    [lo, hi) except the last, which is closed; values outside ``range`` are not counted, and
    ``fraction`` is count over all given entropies.
    """
    h = _confidence(entropy, unit=False, name="entropy")
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if range is None:
        top = float(h.max())
        range = (0.0, top if top > 0 else 1.0)
    lo, hi = float(range[0]), float(range[1])
    if not hi > lo:
        raise ValueError(f"range must be increasing, got {range}")
    count, edges = np.histogram(h, bins=bins, range=(lo, hi))
    import pandas as pd

    return pd.DataFrame(
        {
            "bin": np.arange(1, bins + 1),
            "lo": edges[:-1],
            "hi": edges[1:],
            "center": (edges[:-1] + edges[1:]) / 2,
            "count": count.astype(np.int64),
            "fraction": count / h.size,
        }
    )
