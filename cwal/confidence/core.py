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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtr

from cwal.confidence.delta import margins, z_margin
from cwal.confidence.kbest import kbest_distribution
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


@dataclass(frozen=True)
class Confidence:
    """Per-token labels and confidence of a batch (sentence b = tokens ``sent_offsets[b:b+2]``).

    ``confidence`` is the share of agreeing draws / labelings (a probability; ``absolute``) or,
    for Delta, the margin. ``distribution (n, L)`` and ``entropy`` exist for the sampling and
    k-best methods; ``margin`` is Delta; ``draw_margin`` the mean signed margin over the draws;
    ``rank`` names the ranking that ``rank_key`` implements, ``tiebreak`` its secondary key.
    """

    method: str
    labels: np.ndarray
    confidence: np.ndarray
    sent_offsets: np.ndarray
    distribution: np.ndarray | None = None
    entropy: np.ndarray | None = None
    margin: np.ndarray | None = None
    draw_margin: np.ndarray | None = None
    tiebreak: np.ndarray | None = None
    rank: str = "votes"
    absolute: bool = True
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return len(self.labels)

    @property
    def n_sentences(self) -> int:
        return len(self.sent_offsets) - 1

    def rank_key(self) -> np.ndarray:
        """A float per token, lower = less confident, per ``rank`` (dense ranks in [0, 1];
        tokens equal in both keys share a key)."""
        if self.rank == "z-delta":
            return rank_key(self.tiebreak)
        primary = self.draw_margin if self.rank == "draw-margin" else self.confidence
        return rank_key(primary, self.tiebreak)

    def per_sentence(self, values: np.ndarray | None = None) -> list[np.ndarray]:
        """``values`` (default: confidence) cut into one array per sentence."""
        v = self.confidence if values is None else values
        return np.split(v, self.sent_offsets[1:-1])


def vote_entropy(counts: np.ndarray, k: int) -> np.ndarray:
    """Entropy of each token's vote shares ``counts / k``: :func:`token_entropy` of the tokens
    whose draws disagree, 0 for the rest (most tokens; they need neither its checks nor logs)."""
    out = np.zeros(counts.shape[0])
    split = np.flatnonzero(counts.max(axis=1) < k)
    if split.size:
        out[split] = token_entropy(counts[split] / k)
    return out


def rank_key(primary: np.ndarray, secondary: np.ndarray | None = None) -> np.ndarray:
    """Dense lexicographic rank of ``(primary, secondary)`` scaled to [0, 1] (lower = first)."""
    p = np.asarray(primary, dtype=np.float64)
    if p.size == 0:
        return np.zeros(0)
    keys = [p] if secondary is None else [np.asarray(secondary, dtype=np.float64), p]
    order = np.lexsort(keys)  # the last key is the primary one
    step = np.zeros(p.size - 1, dtype=bool)
    for key in keys:
        ks = key[order]
        step |= ks[1:] != ks[:-1]
    dense = np.concatenate([[0], np.cumsum(step)])
    out = np.empty(p.size)
    out[order] = dense / max(int(dense[-1]), 1)
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
    if not getattr(model, "labels_", None):
        raise ValueError("the model has no labels yet: train it on at least one sentence")
    clock = timings if timings is not None else {}
    enc = batch if isinstance(batch, Encoded) else model.encode(list(batch))
    if method == "maxent":
        from cwal.confidence.proba import proba_confidence  # it imports Confidence from here

        return proba_confidence(model, enc)
    W, A, SW, SA = _weights(model, method)
    k = DEFAULT_K[method] if k is None else int(k)
    if s is None:
        s = model_scale(model) if method == "nbest-softmax" else DEFAULT_S.get(method, 0.0)
    s = float(s)
    params: dict[str, Any] = {"k": k, "s": s, "seed": seed}
    if method in SAMPLING:
        params["correlated"] = correlated
        params["antithetic"] = antithetic

    start = time.perf_counter()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    labels = viterbi_batch(E, enc.sent_offsets, A)
    delta, MM = margins(E, enc.sent_offsets, A)
    clock["predict"] = clock.get("predict", 0.0) + time.perf_counter() - start
    n = len(labels)
    rows = np.arange(n)

    if method == "delta":
        conf = np.where(np.isfinite(delta), delta, np.finfo(np.float64).max)
        return Confidence(method, labels, conf, enc.sent_offsets, margin=delta, rank="delta",
                          absolute=False, params=params)  # fmt: skip
    if rank == "z-delta":  # analytic: no draws, the expected vote share from Delta / its sd
        z = z_margin(delta, MM, labels, enc, SW)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = ndtr(z / np.sqrt(s)) if s > 0 else (z > 0).astype(np.float64)
        share = np.where(np.isnan(share), 0.5, share)
        return Confidence(method, labels, share, enc.sent_offsets, margin=delta, tiebreak=z,
                          rank=rank, params=params)  # fmt: skip
    draw_margin = None
    if method in SAMPLING:
        sampler = Sampler(W, A, SW, SA, k=k, s=s, seed=seed, correlated=correlated, dtype=dtype,
                          antithetic=antithetic)  # fmt: skip
        want = labels if rank == "draw-margin" else None
        counts, draw_margin = sampler.draw(enc, E, want, clock)
        dist = counts / k
    elif method == "nbest-softmax":
        dist = softmax_distribution(E, enc.sent_offsets, A, k, s)
    else:
        dist = kbest_distribution(E, enc.sent_offsets, A, k, weighted=method == "wkbv")
    conf = dist[rows, labels] if n else np.zeros(0)
    if not n:
        entropy = np.zeros(0)
    elif method in SAMPLING:
        entropy = vote_entropy(counts, k)
    else:
        entropy = token_entropy(dist)

    tb: np.ndarray | None = None
    if rank in ("draw-margin", "votes+delta"):
        tb = delta
    elif rank in ("votes+z-delta", "z-delta"):
        tb = z_margin(delta, MM, labels, enc, SW)
    elif rank == "votes+draws":
        more = Sampler(W, A, SW, SA, k=k * DRAWS_FACTOR, s=s, seed=seed + 1,
                       correlated=correlated, dtype=dtype, antithetic=antithetic)  # fmt: skip
        tb = more.draw(enc, E, None, clock)[0][rows, labels] / (k * DRAWS_FACTOR)
    return Confidence(method, labels, conf, enc.sent_offsets, dist, entropy, delta, draw_margin,
                      tb, rank, params=params)  # fmt: skip
