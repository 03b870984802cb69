"""From curves to a decision: words needed to reach a target F1, area under the curve, the pick.

Every function takes the frame a ``ResultSink.curves()`` returns (``strategy``, ``seed``,
``n_sentences``, ``n_tokens``, ``f1``, ...); rows of the ``full-data`` pseudo-strategy hold the
learner trained on the whole pool, the reference of the "95% of full-data F1" target.
Curves are piecewise linear between their evaluation points.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cwal.simulate.config import FULL_DATA

X_AXES = {"n_tokens": "labeled words", "n_sentences": "labeled sentences"}


def words_to_reach(x: np.ndarray, y: np.ndarray, target: float) -> float:
    """The first ``x`` at which the curve reaches ``target`` (linear between points), else NaN."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    hit = np.flatnonzero(y >= target)
    if not hit.size:
        return math.nan
    i = int(hit[0])
    if i == 0:
        return float(x[0])
    frac = (target - y[i - 1]) / (y[i] - y[i - 1])
    return float(x[i - 1] + frac * (x[i] - x[i - 1]))


def mean_over(x: np.ndarray, y: np.ndarray, lo: float, hi: float, n: int = 400) -> float:
    """Mean of the curve over ``[lo, hi]`` (its normalised area); NaN if it does not span it."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not hi > lo or x[0] > lo + 1e-9 or x[-1] < hi - 1e-9:
        return math.nan
    grid = np.linspace(lo, hi, n)
    return float(np.trapezoid(np.interp(grid, x, y), grid) / (hi - lo))


def _split(curves: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Strategy rows sorted by labeled amount, and full-data F1 per seed."""
    full = curves[curves["strategy"] == FULL_DATA]
    runs = curves[curves["strategy"] != FULL_DATA].sort_values(["strategy", "seed", "n_sentences"])
    return runs, full.groupby("seed")["f1"].last()


def per_seed(curves: pd.DataFrame, reach: float = 0.95, beyond: int = 10_000) -> pd.DataFrame:
    """One row per (strategy, seed) with the measures ``summarize`` averages (see there).

    The words to reach Random's final F1 vary a lot between seeds (the curves are flat near
    their end, so a small F1 difference moves the crossing by thousands of words): reports
    should show these rows' spread, not only the mean."""
    runs, full = _split(curves)
    if runs.empty:
        return pd.DataFrame()
    cells = {key: g for key, g in runs.groupby(["strategy", "seed"])}
    common_end = min(float(g["n_tokens"].iloc[-1]) for g in cells.values())
    starts = runs.groupby("seed")["n_tokens"].min()
    finals = {k: float(g["f1"].iloc[-1]) for k, g in cells.items()}
    random_final = [v for (s, _), v in finals.items() if s == "random"]
    random_target = float(np.mean(random_final)) if random_final else math.nan
    rows = []
    for (strategy, seed), g in cells.items():
        x, y = g["n_tokens"].to_numpy(float), g["f1"].to_numpy(float)
        target = reach * float(full[seed]) if seed in full.index else math.nan
        rows.append(
            {
                "strategy": strategy,
                "seed": seed,
                "final_f1": y[-1],
                "final_sentences": float(g["n_sentences"].iloc[-1]),
                "final_words": x[-1],
                "full_f1": float(full[seed]) if seed in full.index else math.nan,
                "words_to_target": words_to_reach(x, y, target),
                "words_to_random": words_to_reach(x, y, random_target),
                "auc": mean_over(x, y, float(starts[seed]), common_end),
                "f1_beyond": mean_over(x, y, beyond, common_end),
            }
        )
    return pd.DataFrame(rows)


def summarize(curves: pd.DataFrame, reach: float = 0.95, beyond: int = 10_000) -> pd.DataFrame:
    """One row per strategy (means over seeds): ``final_f1`` (and its std), ``final_sentences``,
    ``final_words``; ``words_to_target`` = labeled words to reach ``reach`` x the seed's
    full-data F1 (NaN unless every seed gets there; ``reached`` counts the seeds that do);
    ``words_to_random`` = words to reach Random's mean final F1 (mean over the seeds that do,
    counted in ``reached_random``: Random's own seeds end around it); ``auc`` = mean F1 over the
    labeled-words range every run covers; ``f1_beyond`` = mean F1 over words in
    ``[beyond, end of that range]``."""
    seeds = per_seed(curves, reach, beyond)
    if seeds.empty:
        return pd.DataFrame()
    grouped = seeds.groupby("strategy", sort=False)
    table = grouped.agg(
        seeds=("seed", "size"),
        final_f1=("final_f1", "mean"),
        final_f1_std=("final_f1", "std"),
        final_sentences=("final_sentences", "mean"),
        final_words=("final_words", "mean"),
        full_f1=("full_f1", "mean"),
        words_to_target=("words_to_target", lambda v: v.mean() if v.notna().all() else math.nan),
        reached=("words_to_target", lambda v: int(v.notna().sum())),
        words_to_random=("words_to_random", "mean"),
        reached_random=("words_to_random", lambda v: int(v.notna().sum())),
        auc=("auc", "mean"),
        f1_beyond=("f1_beyond", "mean"),
    )
    return table.sort_values("auc", ascending=False)


def recommend(table: pd.DataFrame) -> tuple[str, str]:
    """The strategy to pick and why: the largest area under the F1-vs-words curve (the best F1
    per labeled word over the whole budget) among the strategies that reach the target F1 in
    every seed; among all strategies when none does."""
    if table.empty:
        raise ValueError("no finished curves to compare")
    reached = table[table["words_to_target"].notna()]
    if not reached.empty:
        best = reached["auc"].idxmax()
        words = reached.loc[best, "words_to_target"]
        return str(best), (
            "the best F1 per labeled word (area under the curve) among the strategies that reach "
            f"the target F1 in every seed; it gets there after {words:,.0f} labeled words"
        )
    best = table["auc"].idxmax()
    return str(best), "no strategy reached the target F1; it has the largest area under the curve"


def band(curves: pd.DataFrame, x: str = "n_tokens", points: int = 60) -> pd.DataFrame:
    """Per strategy, the mean, lowest and highest F1 over seeds on a common grid of ``x`` (the
    range every seed covers): columns ``strategy``, ``x``, ``f1``, ``lo``, ``hi``, ``seeds``."""
    if x not in X_AXES:
        raise ValueError(f"x must be one of {sorted(X_AXES)}")
    runs, _ = _split(curves)
    frames = []
    for strategy, g in runs.groupby("strategy"):
        seeds = [(s.sort_values(x)[x].to_numpy(float), s.sort_values(x)["f1"].to_numpy(float))
                 for _, s in g.groupby("seed")]  # fmt: skip
        lo, hi = max(sx[0] for sx, _ in seeds), min(sx[-1] for sx, _ in seeds)
        grid = np.unique(np.linspace(lo, hi, points).round()) if hi > lo else np.array([lo])
        ys = np.array([np.interp(grid, sx, sy) for sx, sy in seeds])
        frames.append(
            pd.DataFrame(
                {
                    "strategy": strategy,
                    "x": grid,
                    "f1": ys.mean(0),
                    "lo": ys.min(0),
                    "hi": ys.max(0),
                    "seeds": len(seeds),
                }  # fmt: skip
            )
        )
    if not frames:
        return pd.DataFrame(columns=["strategy", "x", "f1", "lo", "hi", "seeds"])
    return pd.concat(frames, ignore_index=True)


def progress(curves: pd.DataFrame, statuses: dict[tuple[str, int], str], initial: int,
             budget: int) -> float:  # fmt: skip
    """Fraction of the work done: finished cells count whole, a running one by its labeled
    sentences past the initial ones (``statuses`` maps every cell to its status)."""
    if not statuses:
        return 0.0
    last = curves.groupby(["strategy", "seed"])["n_sentences"].max() if len(curves) else {}
    done = 0.0
    for key, status in statuses.items():
        if status == "done" or key[0] == FULL_DATA:
            done += status == "done"
        elif key in last:
            done += max(0.0, (float(last[key]) - initial) / max(budget - initial, 1))
    return done / len(statuses)


def format_table(table: pd.DataFrame) -> str:
    """The comparison as a fixed-width text table (F1 in percent, words rounded)."""

    def words(v: float) -> str:
        return "-" if not math.isfinite(v) else f"{v:,.0f}"

    def pct(v: float) -> str:
        return "-" if not math.isfinite(v) else f"{100 * v:.2f}"

    w = max([16, *(len(str(n)) + 2 for n in table.index)])
    head = (f"{'strategy':<{w}}{'final F1':>9}{'± std':>7}{'sentences':>10}{'words':>9}"
            f"{'to 95% full':>12}{'to Random':>10}{'AUC':>7}{'F1 >10K':>8}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for name, r in table.iterrows():
        std = r["final_f1_std"] if math.isfinite(r["final_f1_std"]) else 0.0
        partial = 0 < r["reached_random"] < r["seeds"]
        to_random = words(r["words_to_random"]) + ("*" if partial else "")
        lines.append(
            f"{name:<{w}}{100 * r['final_f1']:>9.2f}{100 * std:>7.2f}{r['final_sentences']:>10,.0f}"
            f"{words(r['final_words']):>9}{words(r['words_to_target']):>12}"
            f"{to_random:>10}{pct(r['auc']):>7}{pct(r['f1_beyond']):>8}"
        )
    if any((table["reached_random"] > 0) & (table["reached_random"] < table["seeds"])):
        lines.append("* not every seed reaches Random's final F1: mean over those that do")
    return "\n".join(lines)


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison as shown: one row per strategy (a column), F1 and area as fractions (the
    page shows them in percent), whole words. Field names stay; the page names them for people."""

    def words(column: str) -> pd.Series:
        return table[column].round().astype("Int64")

    return pd.DataFrame(
        {
            "strategy": table.index,
            "final_f1": table["final_f1"].to_numpy(),
            "final_words": words("final_words").to_numpy(),
            "words_to_target": words("words_to_target").to_numpy(),
            "words_to_random": words("words_to_random").to_numpy(),
            "auc": table["auc"].to_numpy(),
        }
    )
