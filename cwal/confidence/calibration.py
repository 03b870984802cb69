"""A monotone map from a confidence to the accuracy seen at it, fitted on labeled tokens.

KD's vote share is a probability only as well as s is tuned, and the paper's calibration RMSE
(bins scored at their centres) rewards a tiny s whenever accuracy is near the top bin's centre,
which leaves most tokens at 1.0 and the mean confidence above the accuracy. An isotonic fit
(pool-adjacent-violators over the distinct confidence values, weighted by their counts) maps each
confidence to the accuracy of the tokens that had it, keeping the order (so rankings and AP do not
change). The mean mapped confidence over unlabeled tokens is then an estimate of their accuracy
(the lead dashboard's pool estimate). A map is two short lists: JSON, never a pickle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cwal.io.schemes import OUTSIDE


def isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-decreasing fit of ``values`` (pool-adjacent-violators, as
    scikit-learn's ``isotonic_regression`` computes it)."""
    from sklearn.isotonic import (
        isotonic_regression,
    )  # imported on first use: scikit-learn is slow to load

    v, w = np.asarray(values, np.float64), np.asarray(weights, np.float64)
    if v.shape != w.shape:
        raise ValueError("one weight per value")
    return isotonic_regression(v, sample_weight=w, increasing=True) if v.size else v


@dataclass(frozen=True)
class CalibrationMap:
    """Piecewise-linear non-decreasing map ``x -> y`` (clipped at both ends)."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    tokens: int = 0

    @classmethod
    def fit(cls, confidence: np.ndarray, correct: np.ndarray) -> CalibrationMap:
        """The isotonic map of ``correct`` (0/1 per token) on ``confidence``."""
        conf = np.asarray(confidence, dtype=np.float64)
        ok = np.asarray(correct, dtype=np.float64)
        if conf.shape != ok.shape or conf.ndim != 1 or conf.size == 0:
            raise ValueError("need one confidence and one correctness per token (and a token)")
        if not np.all(np.isfinite(conf)):
            raise ValueError("confidence values must be finite")
        x, inverse, counts = np.unique(conf, return_inverse=True, return_counts=True)
        hits = np.bincount(inverse, weights=ok, minlength=x.size)
        y = isotonic(hits / counts, counts)
        return cls(tuple(map(float, x)), tuple(map(float, y)), int(conf.size))

    def __call__(self, confidence: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(confidence, dtype=np.float64), self.x, self.y)

    def to_dict(self) -> dict[str, Any]:
        return {"x": list(self.x), "y": list(self.y), "tokens": self.tokens}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> CalibrationMap | None:
        """The map stored by ``to_dict`` (``None`` for none or a malformed entry)."""
        if not data:
            return None
        x, y = data.get("x"), data.get("y")
        if not isinstance(x, Sequence) or not isinstance(y, Sequence) or len(x) != len(y) or not x:
            return None
        try:
            xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if np.any(np.diff(xs) <= 0) or np.any(np.diff(ys) < 0) or not np.all(np.isfinite(ys)):
            return None
        return cls(tuple(map(float, xs)), tuple(map(float, ys)), int(data.get("tokens", 0)))


PRIOR = (1.0, 20.0, 0.4, -2.2)
"""Prior mean of ``(a, b, c, e)`` in ``p = sigmoid(a + b log1p(Delta) + c (log1p(m) - log1p(n))
+ e [tag != O])`` (``m`` the labels the predicting model had learned, ``n`` the current model's;
``[tag != O]`` 1 where the predicted tag is not O). Each prequential record of demo, ned.train
and CoNLL-2000 NP (training files; 8 replays, pool 3000) fitted alone under a vague prior after
10 / 20 / 30 / 50 labels: a 2.4 / 0.9 / 1.2 / 1.1 (sd 3.1 / 0.8 / 1.1 / 1.2), b 28 / 22 / 19 / 18
(sd 12 / 7 / 8 / 8), c 0.9 / 0.2 / 0.4 / 0.4 (sd 1.3 / 0.3 / 0.2 / 0.4), e -3.8 / -2.5 / -2.1 /
-1.8 (sd 3.0 / 1.5 / 1.5 / 1.5; NER -1.5 to -5, NP chunks -0.5 to -1.8): a predicted O is right
far more often than a predicted entity tag at the same margin (esp seed 1 after 10 labels:
predicted O 99% right, the rest 13%, at median margins .06 and .02), and the share of each moves
fast while the first labels teach the model what is not an entity. Without ``e`` the map averages
the two over the record's models, and misses the pool by up to 15 points after 10 labels (esp,
whose first models tag almost everything as an entity). ``c``: the first labels' models improve
fastest; c = 0.4: a model that has learned twice as many labels is right more often at the same
margin, by about e^(0.4 log 2) = 1.3 in the odds."""
PRIOR_SD = (1.0, 7.0, 0.3, 2.0)
"""Prior sd of ``a``, ``b``, ``c`` and ``e``: about the spread of the fits above (``e``'s covers
NER and NP chunks; ``c``'s is its spread from 20 labels on, .2-.4: after 10 the vague fits' own
noise swamps it), so a new project starts from what other corpora's first labels showed and its
own record takes over as it grows (a few hundred informative tokens outweigh it). Offline on the
records of 3 replays each of esp (held out, pool 1000), demo, ned and np (pool 3000), worst
replay's pool ECE / |estimate - accuracy| after 10 labels: .158/.145, .101/.097, .181/.183,
.048/.061 without ``e`` (the former prior (-0.59, 20.3, 0.4), sd (0.5, 5, 1)); .034/.032,
.049/.033, .063/.040, .061/.073 with it (c sd 1.0); .037/.035, .050/.030, .061/.034, .044/.049
with c sd 0.3 (np's 10-label fit had leaned on c = 0.96 and overshot by 7 points; 20 labels and
on: within .007 of sd 1.0). (An age x entity term, weighting recent entries, or only the newer
half of the record: no better.)"""


CONSOLIDATED = (-1.0, 0.5)
"""Prior mean and sd of ``d``, the logit shift of a model retrained by a consolidation (5 epochs
from scratch) against the single-pass models before it at the same margin. The first
consolidation doubles the margins (median pool Delta .44 -> .90 on esp, the slope fitted on the
pool's own tokens 20 -> 10), so a map fitted on the earlier entries only is 1-4 points too
confident. The shift that makes each of 19 replays (demo, esp, ned, np, 50 labels) exact ranges
from -0.9 to -4.9 (median -1.6); -1.0 for all takes the worst pool ECE from .043 to .029 and every
|estimate - accuracy| to .029 or less; the entries after the swap then fit ``d`` themselves."""

GENERATION_STEP = (0.0, 0.25)
"""Prior mean and sd of the change of that shift from one consolidation to the next (each one
retrains on more labels). Its sd is also what the estimate's interval carries for a model just
swapped in, before its own entries arrive: per-record fits (vague prior, 200 labels, esp, ned,
np) put the steps of the second and third consolidation at -1.4 to +0.6 (median -0.1). With it,
and the record's sentences as clusters (below), the 95% interval covers the pool's accuracy in
43 of 54 replay stages from 70 to 200 labels (demo, esp, ned, np), where it covered 18."""

UNBOUNDED = 1e6
"""A Delta at or above this is a token with a single possible label (stored capped here)."""


def _features(delta: np.ndarray) -> np.ndarray:
    d = np.nan_to_num(np.asarray(delta, dtype=np.float64), nan=0.0, posinf=1e6)
    return np.log1p(np.clip(d, 0.0, 1e6))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _map_fit(
    X: np.ndarray,
    y: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    iterations: int,
    groups: np.ndarray | None = None,
):
    """Posterior mode and covariance of a logistic regression of ``y`` on ``X`` under
    independent Gaussian priors (damped Newton: never a worse posterior). The covariance is
    Laplace's, or with ``groups`` (a cluster id per row) the cluster-robust sandwich
    ``H^-1 (sum of each cluster's squared score + prior precision) H^-1``: a sentence's tokens
    are right or wrong together, so counting them as independent draws makes the interval too
    narrow (the Laplace one covered the pool's accuracy in 18 of 54 replay stages from 70
    labels on)."""
    precision = np.diag(1.0 / np.square(sd))

    def objective(w: np.ndarray) -> float:
        z = X @ w
        loglik = np.sum(y * z - np.logaddexp(0.0, z))
        return float(loglik - 0.5 * (w - mean) @ precision @ (w - mean))

    w = mean.copy()
    for _ in range(iterations):
        p = _sigmoid(X @ w)
        grad = X.T @ (y - p) - precision @ (w - mean)
        H = (X * (p * (1 - p))[:, None]).T @ X + precision
        step = np.linalg.solve(H, grad)
        here = objective(w)
        while objective(w + step) < here and np.max(np.abs(step)) > 1e-12:
            step = step / 2
        w = w + step
        if np.max(np.abs(step)) < 1e-9:
            break
    p = _sigmoid(X @ w)
    inverse = np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X + precision)
    if groups is None:
        return w, inverse
    _, cluster = np.unique(groups, return_inverse=True)
    residual = y - p
    scores = np.column_stack([np.bincount(cluster, weights=col * residual) for col in X.T])
    g = scores.shape[0]  # clusters; g / (g - 1): the usual small-sample correction (CR1)
    scale = g / (g - 1) if g > 1 else 1.0
    return w, inverse @ (scale * scores.T @ scores + precision) @ inverse


def _entity(predicted: Sequence[str] | np.ndarray | None, n: int, e: float) -> np.ndarray:
    """1.0 where a predicted tag is not ``O`` (zeros when the map has no such term)."""
    if predicted is None:
        if e != 0.0 and n:
            raise ValueError("this map needs the predicted tags (its e term is not 0)")
        return np.zeros(n)
    flags = np.asarray(predicted) != OUTSIDE
    if flags.shape != (n,):
        raise ValueError("need one predicted tag per margin")
    return flags.astype(np.float64)


@dataclass(frozen=True)
class MarginMap:
    """The calibrated confidence of a token from its Delta margin and predicted tag:
    ``sigmoid(a + b log1p(Delta) + e [tag != O])`` for the current model, fitted on the
    prequential record (each sentence scored by the model just before it learned the label,
    oldest first).

    The first labels teach the model fast, so the record's old entries come from much weaker
    models than the one whose tokens are shaded: a margin that meant a coin flip after 3 labels
    means a likely right tag after 10. The fit therefore has a model-age term,
    ``c (log1p(m) - log1p(n))`` with ``m`` the labels the predicting model had learned (the
    entry's position in the record) and ``n`` the current model's, and keeps the current model's
    map (``m = n``): ``(a, b, e)``. ``e`` is the shift of a token predicted as an entity (any tag
    but O) against one predicted O at the same margin: a young model's predicted O is nearly
    always right and its entity tags mostly wrong, and how many of each it predicts changes from
    label to label. The coefficients are the posterior mode (MAP) under Gaussian priors learned on
    other corpora (:data:`PRIOR`, :data:`PRIOR_SD`). With no labels it is the prior; ``cov`` is
    the Laplace posterior covariance of ``(a, b)`` and ``cov_e`` of ``e`` with ``(a, b, e)``
    (for intervals); ``labels`` and ``tokens`` say what it rests on; ``c`` is the fitted age
    coefficient. A record without predicted tags (``(margins, correct)`` pairs) fits no ``e``
    (0): such a map needs no tags. Deterministic (no draws), monotone in Delta (b > 0)."""

    a: float = PRIOR[0]
    b: float = PRIOR[1]
    cov: tuple[float, float, float] = (PRIOR_SD[0] ** 2, 0.0, PRIOR_SD[1] ** 2)  # a, ab, b
    labels: int = 0
    tokens: int = 0
    c: float = PRIOR[2]
    e: float = PRIOR[3]
    cov_e: tuple[float, float, float] = (0.0, 0.0, PRIOR_SD[3] ** 2)  # ae, be, e

    @classmethod
    def fit(
        cls,
        record: Sequence[tuple[Sequence[float], Sequence[bool]]]
        | Sequence[tuple[Sequence[float], Sequence[bool], Sequence[str]]],
        *,
        iterations: int = 30,
        prior: Sequence[float] = PRIOR,
        prior_sd: Sequence[float] = PRIOR_SD,
        aged: bool = True,
        consolidated: int | Sequence[int] | None = None,
    ) -> MarginMap:
        """MAP fit on ``record``: per labeled sentence, oldest first, its tokens' Delta, whether
        the prediction was right and (third, optional) the predicted tags. Entry ``j`` (from 0)
        was predicted by a model that had learned ``j + 1`` labels (the first label meets an
        untrained model, which logs no margins); the current model has learned
        ``len(record) + 1``. ``aged=False``: every entry was predicted by the model the map is
        for (held-out sentences scored by one model), so there is no age term (``c`` is 0).
        ``consolidated``: the current model descends from consolidations, which first predicted
        these entries, oldest first (one int: a single one; ``None``: none); a term ``d`` (prior
        :data:`CONSOLIDATED`) is the logit shift of the first one's models and each later one
        adds a step (prior :data:`GENERATION_STEP`), fitted on the entries they predicted (none
        yet: the prior's). The entity term ``e`` is fitted when every entry has its predicted
        tags. The covariance treats each entry (a sentence) as one cluster."""
        labels = len(record)
        tagged = all(len(entry) > 2 for entry in record)
        empty = (0.0, 0.0, prior_sd[3] ** 2 if tagged else 0.0)
        items = [(np.asarray(entry[0], float), np.asarray(entry[1], float),
                  _entity(entry[2] if tagged else None, len(entry[0]), 0.0), j + 1)
                 for j, entry in enumerate(record) if len(entry[0])]  # fmt: skip
        starts = sorted([consolidated] if isinstance(consolidated, int) else consolidated or [])
        if not items:
            return cls(prior[0], prior[1], (prior_sd[0] ** 2, 0.0, prior_sd[1] ** 2), labels,
                       0, prior[2], prior[3] if tagged else 0.0, empty)  # fmt: skip
        keys = np.concatenate([k for k, _, _, _ in items])
        y = np.concatenate([c for _, c, _, _ in items])
        m = np.repeat([m for _, _, _, m in items], [len(k) for k, _, _, _ in items])  # per token
        age = np.log1p(m) - np.log1p(labels + 1) if aged else np.zeros(m.size)  # 0: the current
        mean, sd = list(prior[:3]), list(prior_sd[:3])
        columns = [age]
        if tagged:
            columns.append(np.concatenate([t for _, _, t, _ in items]))
            mean.append(prior[3])
            sd.append(prior_sd[3])
        for g, start in enumerate(starts):  # 1 for entries generation g or later predicted
            columns.append((m - 1 >= start).astype(np.float64))
            mean.append((GENERATION_STEP if g else CONSOLIDATED)[0])
            sd.append((GENERATION_STEP if g else CONSOLIDATED)[1])
        # a token with one possible label (infinite Delta: a model that has seen only O) says
        # nothing about how margins turn into accuracy; the map gives it 1.0 anyway
        informative = np.isfinite(keys) & (keys < UNBOUNDED)
        x, y = _features(keys[informative]), y[informative]
        X = np.column_stack([np.ones_like(x), x, *(col[informative] for col in columns)])
        w, cov = _map_fit(X, y, np.asarray(mean, float), np.asarray(sd, float), iterations,
                          m[informative])  # fmt: skip
        # the current model's (a, b, c, e): its intercept is a + d + every later step
        T = np.eye(len(w))[: 3 + tagged]
        T[0, len(w) - len(starts) :] = 1.0
        w, cov = T @ w, T @ cov @ T.T
        b = max(float(w[1]), 1e-3)  # monotone: a larger margin is never less likely right
        e, cov_e = (float(w[3]), (cov[0, 3], cov[1, 3], cov[3, 3])) if tagged else (0.0, empty)
        return cls(float(w[0]), b, (cov[0, 0], cov[0, 1], cov[1, 1]), labels, int(y.size),
                   float(w[2]) if aged else 0.0, e, tuple(map(float, cov_e)))  # fmt: skip

    def __call__(
        self, delta: np.ndarray, predicted: Sequence[str] | np.ndarray | None = None
    ) -> np.ndarray:
        """The calibrated confidence of tokens with these Delta margins and ``predicted`` tags
        (needed unless the map was fitted without tags)."""
        x = _features(delta)
        return _sigmoid(self.a + self.b * x + self.e * _entity(predicted, x.size, self.e))

    def interval(
        self,
        delta: np.ndarray,
        predicted: Sequence[str] | np.ndarray | None = None,
        level: float = 0.95,
        draws: int = 400,
    ) -> tuple[float, float]:
        """A ``level`` interval of the mean calibrated confidence of these tokens (the expected
        accuracy) over the posterior of ``(a, b, e)`` (its mode and cluster-robust covariance,
        fixed draws; Student t with ``labels - 1`` degrees of freedom, as cluster-robust
        intervals from few clusters need: on the replays' records after 5-10 labels the 95%
        interval held the pool's accuracy in 28 of 30 stages, 23 with normal draws)."""
        x = _features(delta)
        if x.size == 0:
            return float("nan"), float("nan")
        ent = _entity(predicted, x.size, self.e)
        cells, counts = np.unique(
            np.column_stack([np.round(x, 3), ent]), axis=0, return_counts=True
        )  # fmt: skip  (a few hundred values)
        va, cab, vb = self.cov
        cae, cbe, ve = self.cov_e
        full = np.array([[va, cab, cae], [cab, vb, cbe], [cae, cbe, ve]])
        L = np.linalg.cholesky(full + 1e-12 * np.eye(3))
        rng = np.random.default_rng(0)
        z = rng.standard_normal((draws, 3)) @ L.T
        if self.labels > 1:  # few sentences (clusters): Student t draws, labels - 1 df
            df = self.labels - 1
            z = z * np.sqrt(df / rng.chisquare(df, draws))[:, None]
        abe = np.array([self.a, self.b, self.e]) + z
        logits = abe[:, :1] + abe[:, 1:2] * cells[None, :, 0] + abe[:, 2:] * cells[None, :, 1]
        means = _sigmoid(logits) @ counts / counts.sum()
        tail = (1.0 - level) / 2 * 100
        return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
