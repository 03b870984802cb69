"""One interface for every estimator: ``estimate(model, batch, method) -> Confidence``.

A ``Confidence`` holds, for each token of the batch, the label predicted with the mean weights and
a confidence in it: the probability that it is right for the sampling and k-best methods, a
relative score (the margin) for Delta. ``rank_key`` orders tokens from least to most confident.
KD's vote share ties for most tokens (all K draws agree), so by default the sampling methods rank
by a finer signal from the same draws: the mean signed max-marginal margin of the predicted label.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import ndtr

from cwal.confidence.delta import margins, z_margin
from cwal.confidence.kbest import kbest_distribution
from cwal.confidence.proba import proba_confidence
from cwal.confidence.result import Confidence
from cwal.confidence.sampling import Sampler
from cwal.confidence.softmax import model_scale, softmax_distribution
from cwal.decode import emissions, viterbi_batch
from cwal.features import Encoded
from cwal.io.sentence import Sentence
from cwal.measures import token_entropy

METHODS = ("kd-pc", "kd-fixed", "kbv", "wkbv", "delta", "nbest-softmax", "maxent")
SAMPLING = ("kd-pc", "kd-fixed")
NEEDS_COVARIANCE = ("kd-pc",)
# How tokens are ranked (least confident first). "draw-margin": the mean over the K draws of the
# signed max-marginal margin of the predicted label (continuous, so no ties); "votes+X": the
# share of agreeing draws, ties broken by X (Delta, Delta over its noise deviation, 10x more
# draws); "votes": ties left to chance; "z-delta": Delta over its noise deviation alone, the
# analytic form of the expected vote share (which is increasing in it for a given s): no draw
# noise in the order, so two seeds rank alike (the ranking the strategies and the live queue use);
# no draws are made, ``confidence`` is that analytic share Phi(z / sqrt(s)).
RANKS = ("draw-margin", "votes+delta", "votes+z-delta", "votes+draws", "votes", "z-delta")
DEFAULT_RANK = "draw-margin"  # best AP in bench/confidence.py; k-best methods use votes+delta
DEFAULT_K = {"kd-pc": 50, "kd-fixed": 50, "kbv": 30, "wkbv": 30, "delta": 0, "nbest-softmax": 30}
DEFAULT_K["maxent"] = 0  # the probability method draws nothing
# Middle of the scales tuned on np / esp / ned with CW (bench/confidence.py: 0.03-0.4 for KD-PC,
# 0.05-0.13 for KD-Fixed); the right value depends on the learner and data: tune it.
DEFAULT_S = {"kd-pc": 0.1, "kd-fixed": 0.1}
DRAWS_FACTOR = 10  # "votes+draws" runs this many times K more draws
# The first interface named the secondary key only; ``tiebreak=`` still selects these rankings.
TIEBREAKS = {"delta": "votes+delta", "z-delta": "votes+z-delta", "draws": "votes+draws",
             "none": "votes"}  # fmt: skip


def vote_entropy(counts: np.ndarray, k: int) -> np.ndarray:
    """Entropy of each token's vote shares ``counts / k``: :func:`token_entropy` of the tokens
    whose draws disagree, 0 for the rest (most tokens; they need neither its checks nor logs)."""
    out = np.zeros(counts.shape[0])
    split = np.flatnonzero(counts.max(axis=1) < k)
    if split.size:
        out[split] = token_entropy(counts[split] / k)
    return out


def _weights(model: Any, method: str) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    W, A = model.averaged()
    if method == "kd-pc":
        if not getattr(model, "has_covariance", False):
            raise ValueError(
                f"kd-pc needs a learner with a covariance (cw, arow); {type(model).__name__} has "
                "none: use kd-fixed"
            )
        SW, SA = model.covariance()
        return W, A, SW, SA
    return W, A, None, None


def estimate(
    model: Any,
    batch: Sequence[Sentence] | Encoded,
    method: str = "kd-pc",
    *,
    k: int | None = None,
    s: float | None = None,
    seed: int = 0,
    rank: str | None = None,
    correlated: bool = True,
    dtype: type = np.float32,
    timings: dict[str, float] | None = None,
    tiebreak: str | None = None,
    antithetic: bool = True,
) -> Confidence:
    """Per-token confidence of ``model``'s predictions on ``batch`` (sentences or an Encoded).

    ``method``: ``kd-pc`` (draws from N(mu, s Sigma); needs a covariance), ``kd-fixed``
    (N(mu, s I)), ``kbv`` / ``wkbv`` (k best labelings), ``delta`` (max-marginal margin, relative),
    ``nbest-softmax`` (the k best labelings weighted by exp(s * score); s defaults to the learner's
    ``softmax_scale``, see :mod:`cwal.confidence.softmax`), ``maxent`` (the learner's own
    probability of its label, for ``maxent-l1``; k, s, seed and rank do not apply).
    ``k`` draws or labelings (default 50 / 30), ``s`` the noise scale (tune it with
    :func:`cwal.confidence.tune`), ``seed`` makes the draws reproducible. ``rank`` (see ``RANKS``;
    default ``draw-margin`` for sampling, ``votes+delta`` for k-best) sets ``rank_key``.
    ``correlated=False`` draws each token's scores from their Gaussian marginal (faster,
    approximate). ``antithetic`` draws the K weight vectors in mirrored pairs around the mean
    (each is still a draw of N(mu, s Sigma); the vote share and mean margin lose their first-order
    noise; half the normals). ``timings`` accumulates seconds per stage. ``tiebreak`` (``delta``, ``z-delta``,
    ``draws``, ``none``) is the older spelling of ``rank="votes+<tiebreak>"``.
    """
    rank = _ranking(method, rank, tiebreak)
    if not getattr(model, "labels_", None):
        raise ValueError("the model has no labels yet: train it on at least one sentence")
    clock = timings if timings is not None else {}
    enc = batch if isinstance(batch, Encoded) else model.encode(list(batch))
    if method == "maxent":
        return proba_confidence(model, enc)
    W, A, SW, SA = _weights(model, method)
    k = DEFAULT_K[method] if k is None else int(k)
    if s is None:
        s = model_scale(model) if method == "nbest-softmax" else DEFAULT_S.get(method, 0.0)
    params: dict[str, Any] = {"k": k, "s": float(s), "seed": seed}
    if method in SAMPLING:
        params.update(correlated=correlated, antithetic=antithetic)
    draws = {"seed": seed, "correlated": correlated, "dtype": dtype, "antithetic": antithetic}

    start = time.perf_counter()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    labels = viterbi_batch(E, enc.sent_offsets, A)
    delta, MM = margins(E, enc.sent_offsets, A)
    clock["predict"] = clock.get("predict", 0.0) + time.perf_counter() - start

    if method == "delta":
        conf = np.where(np.isfinite(delta), delta, np.finfo(np.float64).max)
        return Confidence(method, labels, conf, enc.sent_offsets, margin=delta, rank="delta",
                          absolute=False, params=params)  # fmt: skip
    if rank == "z-delta":  # analytic: no draws, the expected vote share from Delta / its sd
        z = z_margin(delta, MM, labels, enc, SW)
        return Confidence(method, labels, _expected_share(z, float(s)), enc.sent_offsets,
                          margin=delta, tiebreak=z, rank=rank, params=params)  # fmt: skip
    draw_margin = None
    if method in SAMPLING:
        sampler = Sampler(W, A, SW, SA, k=k, s=float(s), **draws)
        want = labels if rank == "draw-margin" else None
        counts, draw_margin = sampler.draw(enc, E, want, clock)
        dist, entropy = counts / k, vote_entropy(counts, k)
    else:
        dist = _labelings(method, enc, E, A, k, float(s))
        entropy = token_entropy(dist) if len(labels) else np.zeros(0)
    conf = dist[np.arange(len(labels)), labels] if len(labels) else np.zeros(0)
    if rank in ("draw-margin", "votes+delta"):
        tb = delta
    elif rank == "votes+z-delta":
        tb = z_margin(delta, MM, labels, enc, SW)
    elif rank == "votes+draws":
        more = Sampler(W, A, SW, SA, k=k * DRAWS_FACTOR, s=float(s), **{**draws, "seed": seed + 1})
        tb = more.draw(enc, E, None, clock)[0][np.arange(len(labels)), labels] / more.k
    else:
        tb = None
    return Confidence(method, labels, conf, enc.sent_offsets, dist, entropy, delta, draw_margin,
                      tb, rank, params=params)  # fmt: skip


def _ranking(method: str, rank: str | None, tiebreak: str | None) -> str:
    """The ranking ``estimate`` uses: checked against the method, defaulted, the older
    ``tiebreak`` spelling translated."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    if tiebreak is not None:
        if rank is not None:
            raise ValueError("give rank or tiebreak, not both")
        if tiebreak not in TIEBREAKS:
            raise ValueError(f"unknown tiebreak {tiebreak!r}; choose one of {sorted(TIEBREAKS)}")
        rank = TIEBREAKS[tiebreak]
    rank = rank or (DEFAULT_RANK if method in SAMPLING else "votes+delta")
    if rank not in RANKS:
        raise ValueError(f"unknown rank {rank!r}; choose one of {RANKS}")
    if rank in ("draw-margin", "votes+draws", "z-delta") and method not in SAMPLING:
        raise ValueError(f"rank {rank!r} needs a sampling method (kd-pc, kd-fixed)")
    return rank


def _expected_share(z: np.ndarray, s: float) -> np.ndarray:
    """The analytic vote share Phi(z / sqrt(s)) of KD at noise scale ``s`` (0.5 where undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = ndtr(z / np.sqrt(s)) if s > 0 else (z > 0).astype(np.float64)
    return np.where(np.isnan(share), 0.5, share)


def _labelings(
    method: str, enc: Encoded, E: np.ndarray, A: np.ndarray, k: int, s: float
) -> np.ndarray:
    """The label distribution ``(n, L)`` of the k-best methods: the k best labelings of each
    sentence, counted (``kbv``), score-weighted (``wkbv``) or softmax-weighted (``nbest-softmax``)."""
    if method == "nbest-softmax":
        return softmax_distribution(E, enc.sent_offsets, A, k, s)
    return kbest_distribution(E, enc.sent_offsets, A, k, weighted=method == "wkbv")
