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


PRIOR = (-0.59, 20.3, 0.4)
"""Prior mean of ``(a, b, c)`` in ``p = sigmoid(a + b log1p(Delta) + c (log1p(m) - log1p(n)))``
(``m`` the labels the predicting model had learned, ``n`` the current model's). ``(a, b)``: the
map of the first 50 labels' prequential records of other corpora pooled (training files only;
AROW, the app's defaults, tag set given up front): demo (-0.79, 26.3) (-0.74, 25.9), ned.train
(-1.11, 25.1) (-0.77, 24.7), CoNLL-2000 train NP (-0.42, 16.2) (-0.10, 14.5), pooled (-0.585,
20.294): a tie (Delta = 0) is right 36% of the time, a margin of 0.1 (a few votes' worth) 87%.
``(a, b)`` were fitted without the age term and kept. ``c``: each record of demo, ned.train and
CoNLL-2000 NP fitted alone under a vague prior (``bench/early_calibration.py --fit-prior --seeds 3
--pool 1000``) gives c 0.72 (mean; sd 0.39, all 9 positive) after 10 labels (``--max-labels 10``)
and 0.02 (sd 0.66; ned's three negative, np's positive) after 20: the first labels' models improve
fastest. c = 0.4: a model that has learned twice as many labels is right more often at the same
margin, by about e^(0.4 log 2) = 1.3 in the odds."""
PRIOR_SD = (0.5, 5.0, 1.0)
"""Prior sd of ``a``, ``b`` and ``c``: about the spread of the fits above (c's covers both
stages), so a new project starts from what other corpora's first labels showed and its own record
takes over as it grows (a few hundred informative tokens outweigh it). The former weak prior (mean (0, 2), sd 10) left the
first labels' map to a handful of sentences: on esp, whose first served sentences are mostly O,
ECE .28 and an estimate 28 points low after 10 labels. Checked on 14 replays of demo, ned.train
and CoNLL-2000 NP (worst replay's token ECE on 600 pool sentences after 10 / 20 / 50 / 200 / 500
labels): .128 / .064 / .035 / .017 / .010 without the age term, .093 / .039 / .043 / .014 / .006
with it (c sd 0.5 to 3: within .01 of these; weighting recent entries more on top of it: no
better). With the ner features' word clusters and document features, 8 replays of demo, esp, ned
and np after 10 / 20 / 50 labels: .273 / .045 / .036 without, .142 / .057 / .040 with it (it can
overshoot once a fast start has stopped: demo .045 -> .057 after 20 labels). After 50 labels the first consolidation (5 epochs) doubles the model's margins, which no
record entry has seen yet: both maps are too confident there by 3-4 points."""


CONSOLIDATED = (-1.0, 0.5)
"""Prior mean and sd of ``d``, the logit shift of a model retrained by a consolidation (5 epochs
from scratch) against the single-pass models before it at the same margin. The first
consolidation doubles the margins (median pool Delta .44 -> .90 on esp, the slope fitted on the
pool's own tokens 20 -> 10), so a map fitted on the earlier entries only is 1-4 points too
confident. The shift that makes each of 19 replays (demo, esp, ned, np, 50 labels) exact ranges
from -0.9 to -4.9 (median -1.6); -1.0 for all takes the worst pool ECE from .043 to .029 and every
|estimate - accuracy| to .029 or less; the entries after the swap then fit ``d`` themselves."""

UNBOUNDED = 1e6
"""A Delta at or above this is a token with a single possible label (stored capped here)."""


def _features(delta: np.ndarray) -> np.ndarray:
    d = np.nan_to_num(np.asarray(delta, dtype=np.float64), nan=0.0, posinf=1e6)
    return np.log1p(np.clip(d, 0.0, 1e6))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _map_fit(X: np.ndarray, y: np.ndarray, mean: np.ndarray, sd: np.ndarray, iterations: int):
    """Posterior mode and Laplace covariance of a logistic regression of ``y`` on ``X`` under
    independent Gaussian priors (damped Newton: never a worse posterior)."""
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
    return w, np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X + precision)


@dataclass(frozen=True)
class MarginMap:
    """The calibrated confidence of a token from its Delta margin: ``sigmoid(a + b log1p(Delta))``
    for the current model, fitted on the prequential record (each sentence scored by the model
    just before it learned the label, oldest first).

    The first labels teach the model fast, so the record's old entries come from much weaker
    models than the one whose tokens are shaded: a margin that meant a coin flip after 3 labels
    means a likely right tag after 10. The fit therefore has a model-age term,
    ``sigmoid(a + b log1p(Delta) + c (log1p(m) - log1p(n)))`` with ``m`` the labels the predicting
    model had learned (the entry's position in the record) and ``n`` the current model's, and
    keeps the current model's map (``m = n``): ``(a, b)``. The coefficients are the posterior
    mode (MAP) under Gaussian priors learned on other corpora (:data:`PRIOR`, :data:`PRIOR_SD`).
    With no labels it is the prior; ``cov`` is the Laplace posterior covariance of ``(a, b)``
    (for intervals); ``labels`` and ``tokens`` say what it rests on; ``c`` is the fitted age
    coefficient. Deterministic (no draws), monotone in Delta (b > 0)."""

    a: float = PRIOR[0]
    b: float = PRIOR[1]
    cov: tuple[float, float, float] = (PRIOR_SD[0] ** 2, 0.0, PRIOR_SD[1] ** 2)  # a, ab, b
    labels: int = 0
    tokens: int = 0
    c: float = PRIOR[2]

    @classmethod
    def fit(
        cls,
        record: Sequence[tuple[Sequence[float], Sequence[bool]]],
        *,
        iterations: int = 30,
        prior: Sequence[float] = PRIOR,
        prior_sd: Sequence[float] = PRIOR_SD,
        aged: bool = True,
        consolidated: int | None = None,
    ) -> MarginMap:
        """MAP fit on ``record``: per labeled sentence, oldest first, its tokens' Delta and
        whether the prediction was right. Entry ``j`` (from 0) was predicted by a model that had
        learned ``j + 1`` labels (the first label meets an untrained model, which logs no
        margins); the current model has learned ``len(record) + 1``. ``aged=False``: every
        entry was predicted by the model the map is for (held-out sentences scored by one
        model), so there is no age term (``c`` is 0). ``consolidated``: the current model descends
        from a consolidation, which first predicted entry ``consolidated`` (``None``: it does not);
        a term ``d`` (prior :data:`CONSOLIDATED`) is the logit shift of such models, fitted on the
        entries they predicted (none yet: the prior's)."""
        labels = len(record)
        items = [(np.asarray(k, float), np.asarray(c, float), j + 1)
                 for j, (k, c) in enumerate(record) if len(k)]  # fmt: skip
        if not items:
            return cls(prior[0], prior[1], (prior_sd[0] ** 2, 0.0, prior_sd[1] ** 2), labels,
                       0, prior[2])  # fmt: skip
        keys = np.concatenate([k for k, _, _ in items])
        y = np.concatenate([c for _, c, _ in items])
        age = np.concatenate([np.full(len(k), np.log1p(m)) for k, _, m in items])
        age = age - np.log1p(labels + 1) if aged else np.zeros_like(age)  # 0: the current model
        mean, sd = list(prior), list(prior_sd)
        columns = [age]
        if consolidated is not None:  # 1 for entries a consolidated model predicted (and now)
            columns.append(np.concatenate([np.full(len(k), float(m - 1 >= consolidated))
                                           for k, _, m in items]))  # fmt: skip
            mean.append(CONSOLIDATED[0])
            sd.append(CONSOLIDATED[1])
        # a token with one possible label (infinite Delta: a model that has seen only O) says
        # nothing about how margins turn into accuracy; the map gives it 1.0 anyway
        informative = np.isfinite(keys) & (keys < UNBOUNDED)
        x, y = _features(keys[informative]), y[informative]
        X = np.column_stack([np.ones_like(x), x, *(col[informative] for col in columns)])
        w, cov = _map_fit(X, y, np.asarray(mean, float), np.asarray(sd, float), iterations)
        if consolidated is not None:  # the current model's intercept is a + d
            T = np.eye(len(w))[:3]
            T[0, 3] = 1.0
            w, cov = T @ w, T @ cov @ T.T
        b = max(float(w[1]), 1e-3)  # monotone: a larger margin is never less likely right
        return cls(float(w[0]), b, (cov[0, 0], cov[0, 1], cov[1, 1]), labels, int(y.size),
                   float(w[2]) if aged else 0.0)  # fmt: skip

    def __call__(self, delta: np.ndarray) -> np.ndarray:
        return _sigmoid(self.a + self.b * _features(delta))

    def interval(
        self, delta: np.ndarray, level: float = 0.95, draws: int = 400
    ) -> tuple[float, float]:
        """A ``level`` interval of the mean calibrated confidence of these tokens (the expected
        accuracy) over the posterior of ``(a, b)`` (Laplace approximation, fixed draws)."""
        x = _features(delta)
        if x.size == 0:
            return float("nan"), float("nan")
        x, counts = np.unique(np.round(x, 3), return_counts=True)  # a few hundred values
        va, cab, vb = self.cov
        L = np.linalg.cholesky(np.array([[va, cab], [cab, vb]]) + 1e-12 * np.eye(2))
        z = np.random.default_rng(0).standard_normal((draws, 2)) @ L.T
        ab = np.array([self.a, self.b]) + z
        means = _sigmoid(ab[:, :1] + ab[:, 1:] * x[None, :]) @ counts / counts.sum()
        tail = (1.0 - level) / 2 * 100
        return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
