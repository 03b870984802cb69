"""Choosing KD's scale s (and K) on held-out labeled sentences, by AP or by calibration RMSE;
and fitting a map from KD's draw margin to accuracy on them (``fit_map``).

The paper tried ~20 values of s in [0.01, 1]; the right scale depends on the learner (its r or
phi), the data and the training length, and here it often lies far below that range. So the
search is log-spaced and *grows* past either end of the grid while the best value sits on that end,
then refines between the best point and its neighbours: the chosen s is always an interior optimum
(or the search says it hit its expansion limit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cwal.confidence.calibration import UNBOUNDED, CalibrationMap
from cwal.confidence.core import DEFAULT_K, SAMPLING, estimate
from cwal.confidence.result import Confidence
from cwal.features import Encoded
from cwal.io.sentence import Sentence
from cwal.measures import (
    average_precision,
    brier_score,
    calibration_rmse,
    expected_calibration_error,
)

SCALED = (*SAMPLING, "nbest-softmax")  # methods with a scale s to tune

CRITERIA = ("ap", "rmse", "ece", "brier")
DEFAULT_S_GRID = tuple(np.logspace(-4, 0, 9))  # two points a decade; grown as needed


@dataclass(frozen=True)
class Tuned:
    """The chosen ``s`` and ``k``, the criterion value there, whether s is interior to the search,
    and every evaluated point (``table``: s, k, ap, rmse, ece, brier)."""

    method: str
    criterion: str
    s: float
    k: int
    score: float
    interior: bool
    table: pd.DataFrame


def search_scale(
    evaluate: Callable[[float, int], float],
    s_grid: Iterable[float] = DEFAULT_S_GRID,
    k_grid: Iterable[int] = (50,),
    *,
    maximize: bool = True,
    max_expansions: int = 8,
    refine: int = 2,
) -> tuple[float, int, bool]:
    """Best ``(s, k, interior)`` of ``evaluate(s, k)`` over a log grid of s that grows by its own
    step past an edge holding the optimum (up to ``max_expansions`` times per side), then ``refine``
    rounds of halving the log step around the best s. Among equal values the largest s wins: a
    flat stretch (e.g. every token already at confidence 1) must not drag s towards 0.
    Evaluations are cached."""
    grid = np.sort(np.asarray(list(s_grid), dtype=np.float64))
    if grid.size < 2 or np.any(grid <= 0):
        raise ValueError("s_grid needs at least two positive values")
    step = float(np.median(np.diff(np.log(grid))))
    sign = 1.0 if maximize else -1.0
    cache: dict[tuple[float, int], float] = {}

    def value(s: float, k: int) -> float:
        key = (float(s), int(k))
        if key not in cache:
            v = float(evaluate(*key))
            cache[key] = sign * v if np.isfinite(v) else -np.inf
        return cache[key]

    best: tuple[float, float, int, bool] = (-np.inf, float(grid[0]), 0, False)
    for k in k_grid:
        pts = list(grid)
        grown = {"low": 0, "high": 0}
        while True:
            vals = np.array([value(s, k) for s in pts])
            i = int(np.flatnonzero(vals == vals.max())[-1])  # a flat optimum: the largest s
            if i == 0 and grown["low"] < max_expansions:
                pts.insert(0, pts[0] * np.exp(-step))
                grown["low"] += 1
            elif i == len(pts) - 1 and grown["high"] < max_expansions:
                pts.append(pts[-1] * np.exp(step))
                grown["high"] += 1
            else:
                break
        interior = 0 < i < len(pts) - 1
        s_best, h = pts[i], step
        for _ in range(refine if interior else 0):
            h /= 2
            cands = [s_best * np.exp(-h), s_best, s_best * np.exp(h)]
            vals = np.array([value(c, k) for c in cands])
            s_best = cands[int(np.flatnonzero(vals == vals.max())[-1])]
        v = value(s_best, k)
        if v > best[0]:
            best = (v, float(s_best), int(k), interior)
    return best[1], best[2], best[3]


def gold_ids(model: Any, sentences: Sequence[Sentence]) -> np.ndarray:
    """Gold label ids of every token (``-1`` for a tag the model does not know: always wrong)."""
    index = {t: i for i, t in enumerate(model.labels_)}
    return np.array([index.get(t, -1) for s in sentences for t in s.tags], dtype=np.int64)


def evaluate_point(
    model: Any, enc: Encoded, gold: np.ndarray, method: str, **kw: Any
) -> dict[str, float]:
    """AP (ranked by ``rank_key``), calibration RMSE, ECE and Brier score of one estimator
    setting."""
    conf = estimate(model, enc, method, **kw)
    ok = conf.labels == gold
    row = {"ap": average_precision(conf.rank_key(), ok)}
    if conf.absolute:
        row["rmse"] = calibration_rmse(conf.confidence, ok)
        row["ece"] = expected_calibration_error(conf.confidence, ok)
        row["brier"] = brier_score(conf.confidence, ok)
    return row


def tune(
    model: Any,
    dev: Sequence[Sentence],
    method: str = "kd-pc",
    *,
    criterion: str = "ap",
    s_grid: Iterable[float] = DEFAULT_S_GRID,
    k_grid: Iterable[int] | None = None,
    seed: int = 0,
    seeds: int = 1,
    **estimate_kw: Any,
) -> Tuned:
    """Tune ``s`` (sampling methods and the N-best soft-max's temperature) and ``k`` on labeled
    ``dev`` sentences.

    ``criterion``: ``ap`` (higher is better, ranking by ``rank_key``), ``rmse`` (the paper's
    calibration error, lower is better), ``ece`` or ``brier`` (the Brier score, a proper scoring
    rule: it rewards sharpness as well as calibration). RMSE measures bins by their centres, so a
    tiny s that puts every token at 1.0 scores well whenever accuracy is near the top bin's centre
    (0.975); ECE uses the bins' mean confidence and has no such blind spot. ``seeds`` > 1 averages
    each point over that many draw seeds (AP differences between scales are often as small as the
    spread between seeds). Other keywords (``rank``, ``correlated``, ...) go to ``estimate``.
    KBV / WKBV tune k only; Delta has nothing to tune.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if method in ("delta", "maxent"):
        raise ValueError(f"{method} has no parameter to tune")
    dev = [s for s in dev if s.tags is not None and len(s) > 0]
    if not dev:
        raise ValueError("tuning needs at least one labeled, non-empty sentence")
    enc = model.encode(dev)
    gold = gold_ids(model, dev)
    ks = [DEFAULT_K.get(method, 0)] if k_grid is None else [int(k) for k in k_grid]
    rows: list[dict[str, float]] = []
    repeats = max(1, int(seeds)) if method in SAMPLING else 1

    def run(s: float, k: int) -> float:
        points = [
            evaluate_point(
                model, enc, gold, method, k=k, s=s, seed=seed + i, **estimate_kw
            )  # fmt: skip
            for i in range(repeats)
        ]
        row = {key: float(np.mean([p[key] for p in points])) for key in points[0]}
        rows.append({"s": s, "k": k, **row})
        return row.get(criterion, np.nan)

    maximize = criterion == "ap"
    if method in SCALED:
        s, k, interior = search_scale(run, s_grid, ks, maximize=maximize)
    else:
        scores = [run(0.0, k) for k in ks]
        pick = int(np.nanargmax(scores) if maximize else np.nanargmin(scores))
        s, k, interior = 0.0, ks[pick], True
    table = pd.DataFrame(rows).sort_values(["k", "s"]).reset_index(drop=True)
    match = table[(table["s"] == s) & (table["k"] == k)].iloc[0]
    return Tuned(method, criterion, s, k, float(match[criterion]), interior, table)


def draw_signal(conf: Confidence) -> np.ndarray:
    """The continuous KD signal :func:`fit_map` calibrates: each token's mean over the K draws of
    the signed max-marginal margin of its predicted label (``rank="draw-margin"``), finite."""
    if conf.draw_margin is None:
        raise ValueError("the estimate has no draw margin: use kd-pc or kd-fixed, rank draw-margin")
    return np.clip(np.nan_to_num(conf.draw_margin, posinf=UNBOUNDED), -UNBOUNDED, UNBOUNDED)


def fit_map(
    model: Any,
    dev: Sequence[Sentence],
    method: str = "kd-pc",
    *,
    k: int | None = None,
    s: float | None = None,
    seed: int = 0,
    **estimate_kw: Any,
) -> CalibrationMap:
    """The isotonic map from KD's draw margin (:func:`draw_signal`) to the accuracy of labeled
    ``dev`` tokens, at scale ``s`` and ``k`` draws (tune them first). ``map(draw_signal(conf))``
    is then a probability for each token of an estimate made with the same settings: finer than
    the vote share (K + 1 levels, most tokens at 1.0), ranked as ``rank_key`` ranks them."""
    if method not in SAMPLING:
        raise ValueError(f"fit_map needs a sampling method {SAMPLING}, got {method!r}")
    dev = [x for x in dev if x.tags is not None and len(x) > 0]
    if not dev:
        raise ValueError("fitting a map needs at least one labeled, non-empty sentence")
    conf = estimate(model, model.encode(dev), method, k=k, s=s, seed=seed, rank="draw-margin",
                    **estimate_kw)  # fmt: skip
    return CalibrationMap.fit(draw_signal(conf), conf.labels == gold_ids(model, dev))
