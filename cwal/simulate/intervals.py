"""Words to a target F1 with a bootstrap interval over seeds: the comparison a lead can trust.

A strategy's words to reach Random's final F1 vary by thousands between seeds (the curves are
flat where they cross), so one mean says little. ``word_costs`` resamples whole seeds with
replacement (the same seeds for every strategy: runs of one seed share their initial sentences)
and recomputes, per resample, each strategy's mean words to three targets and their ratio to
Random's: Random's mean final F1 (the target moves with the resample, as Random's finish does)
and 95% / 99% of the seed's full-data F1. A seed that never reaches a target makes that resample
infinite (it would need more than the budget), so an interval's upper end can be "beyond".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cwal.simulate.config import FULL_DATA
from cwal.simulate.summary import words_to_reach

TARGETS = {"random": "Random's final F1", "95": "95% of full-data F1", "99": "99% of full-data F1"}


def _quantiles(values: np.ndarray, level: float) -> tuple[float, float]:
    """Equal-tailed interval without interpolation (infinite resamples stay infinite; NaN if
    Random misses the target in any resample: no ratio to speak of)."""
    if np.isnan(values).any():
        return math.nan, math.nan
    tail = (1.0 - level) / 2
    lo, hi = np.quantile(values, [tail, 1.0 - tail], method="inverted_cdf")
    return float(lo), float(hi)


def _curves(curves: pd.DataFrame) -> tuple[dict, list[int], dict[int, float]]:
    """``{strategy: [(x, y, sentences) per seed]}`` over the seeds every strategy ran, the
    seeds, and full-data F1 per seed."""
    runs = curves[curves["strategy"] != FULL_DATA].sort_values(["strategy", "seed", "n_sentences"])
    full = curves[curves["strategy"] == FULL_DATA].groupby("seed")["f1"].last()
    by = {s: dict(iter(g.groupby("seed"))) for s, g in runs.groupby("strategy")}
    seeds = sorted(set.intersection(*(set(v) for v in by.values()))) if by else []
    out = {
        s: [
            (
                g[seed]["n_tokens"].to_numpy(float),
                g[seed]["f1"].to_numpy(float),
                g[seed]["n_sentences"].to_numpy(float),
            )  # fmt: skip
            for seed in seeds
        ]
        for s, g in by.items()
    }
    return out, seeds, {int(k): float(v) for k, v in full.items()}


def word_costs(
    curves: pd.DataFrame, replicates: int = 2000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Per strategy: ``seeds``; ``mean_length`` (words per sentence it picked, the random
    initial sentences excluded); for each target T in ``TARGETS``: ``words_T`` (mean over seeds,
    NaN unless every seed reaches it), ``reached_T``, ``ratio_T`` (to Random's words: its final
    words for T = random, its words to T otherwise) and ``ratio_T_lo`` / ``ratio_T_hi``, the
    ``level`` bootstrap interval over seeds (resampled ``replicates`` times, seeded)."""
    per, seeds, full = _curves(curves)
    if not per or "random" not in per or not seeds:
        return pd.DataFrame()
    n = len(seeds)
    finals = np.array([[c[1][-1] for c in per[s]] for s in per])  # (strategies, seeds)
    names = list(per)
    rnd = names.index("random")
    rnd_words = np.array([c[0][-1] for c in per["random"]])
    fixed = {  # words to the per-seed full-data targets do not depend on the resample
        t: np.array(
            [
                [
                    words_to_reach(x, y, float(t) / 100 * full.get(sd, math.nan))
                    for (x, y, _), sd in zip(per[s], seeds, strict=True)
                ]
                for s in names
            ]  # fmt: skip
        )
        for t in ("95", "99")
    }

    def costs(idx: np.ndarray) -> dict[str, np.ndarray]:
        """Mean words per strategy to each target over the seeds ``idx`` (inf if one misses)."""
        target = float(finals[rnd, idx].mean())
        words = np.array([[words_to_reach(per[s][i][0], per[s][i][1], target) for i in idx]
                          for s in names])  # fmt: skip
        out = {"random": np.where(np.isnan(words).any(1), np.inf, words.mean(1))}
        for t, w in fixed.items():
            out[t] = np.where(np.isnan(w[:, idx]).any(1), np.inf, w[:, idx].mean(1))
        return out

    def ratios(idx: np.ndarray, c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Words over Random's; NaN where Random itself never gets there."""
        base = {"random": rnd_words[idx].mean(), "95": c["95"][rnd], "99": c["99"][rnd]}
        with np.errstate(invalid="ignore", divide="ignore"):
            return {t: np.where(np.isinf(base[t]), np.nan, c[t] / base[t]) for t in TARGETS}

    everything = np.arange(n)
    point = costs(everything)
    point_ratio = ratios(everything, point)
    rng = np.random.default_rng(seed)
    boot = {t: np.empty((replicates, len(names))) for t in TARGETS}
    for r in range(replicates):
        idx = rng.integers(0, n, size=n)
        rr = ratios(idx, costs(idx))
        for t in TARGETS:
            boot[t][r] = rr[t]
    reached = {"random": [np.isfinite([words_to_reach(x, y, float(finals[rnd].mean()))
                                       for x, y, _ in per[s]]).sum() for s in names]}  # fmt: skip
    reached.update({t: np.isfinite(fixed[t]).sum(1).tolist() for t in fixed})
    rows = []
    for j, s in enumerate(names):
        picked_words = sum(x[-1] - x[0] for x, _, _ in per[s])
        picked_sents = sum(k[-1] - k[0] for _, _, k in per[s])
        row: dict[str, float | int | str] = {
            "strategy": s,
            "seeds": n,
            "mean_length": picked_words / picked_sents if picked_sents else math.nan,
        }
        for t in TARGETS:
            words = float(point[t][j])
            lo, hi = _quantiles(boot[t][:, j], level)
            row[f"words_{t}"] = words if math.isfinite(words) else math.nan
            row[f"reached_{t}"] = int(reached[t][j])
            ratio = float(point_ratio[t][j])
            row[f"ratio_{t}"] = ratio if math.isfinite(ratio) else math.nan
            row[f"ratio_{t}_lo"], row[f"ratio_{t}_hi"] = lo, hi
        rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def format_costs(table: pd.DataFrame, level: float = 0.95) -> str:
    """The word costs as text: per strategy and target, ratio to Random's words [interval]."""
    if table.empty:
        return "no strategy to compare with Random"

    def cell(r: pd.Series, t: str) -> str:
        ratio, lo, hi = r[f"ratio_{t}"], r[f"ratio_{t}_lo"], r[f"ratio_{t}_hi"]
        if not math.isfinite(ratio):
            return f"- ({int(r[f'reached_{t}'])}/{int(r['seeds'])} seeds)"
        high = f"{hi:.2f}" if math.isfinite(hi) else "beyond"
        return f"{ratio:.2f} [{lo:.2f}, {high}]"

    head = (f"{'strategy':<28}{'words/sent':>11}  {'x Random words to its F1':<26}"
            f"{'to 95% full':<22}{'to 99% full':<22}")  # fmt: skip
    lines = [f"words needed relative to Random's, with {100 * level:.0f}% bootstrap intervals "
             "over seeds", head, "-" * len(head)]  # fmt: skip
    for name, r in table.sort_values("ratio_random").iterrows():
        lines.append(f"{name:<28}{r['mean_length']:>11.1f}  {cell(r, 'random'):<26}"
                     f"{cell(r, '95'):<22}{cell(r, '99'):<22}")  # fmt: skip
    return "\n".join(lines)


def display_costs(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The word costs for a page: words per sentence picked and, per target, the ratio to
    Random's words with its interval as text (``beyond`` where a resample never gets there);
    empty without Random."""
    if table.empty:
        return pd.DataFrame()

    def cell(r: pd.Series, t: str) -> str:
        ratio, lo, hi = r[f"ratio_{t}"], r[f"ratio_{t}_lo"], r[f"ratio_{t}_hi"]
        if not math.isfinite(ratio):
            return f"not reached ({int(r[f'reached_{t}'])} of {int(r['seeds'])} seeds)"
        return f"{ratio:.2f} ({lo:.2f}–{f'{hi:.2f}' if math.isfinite(hi) else 'beyond'})"

    pct = f"{100 * level:.0f}%"
    return pd.DataFrame(
        {
            "words per sentence picked": table["mean_length"].round(1),
            **{
                f"× Random's words to {name} ({pct} interval)": [
                    cell(r, t) for _, r in table.iterrows()
                ]
                for t, name in TARGETS.items()
            },
        },
        index=table.index,
    )
