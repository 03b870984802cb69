"""The stopping signal in a simulation: where it fires, against where annotating stopped paying.

Each curve point after the first holds ``kappa``, the agreement of the model's tags on the run's
stop set with the previous point's model (``cwal.measures.stopping``). ``stop_table`` gives per
strategy the labeled words and the F1 when the signal fires (kappa >= 0.99 for 3 checks in a row)
and the words needed to reach 99% of the full-data F1, the point a lead would have wanted.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cwal.measures.stopping import THRESHOLD, WINDOW, stop_point
from cwal.simulate.config import FULL_DATA
from cwal.simulate.summary import words_to_reach


def stop_table(
    curves: pd.DataFrame, threshold: float = THRESHOLD, window: int = WINDOW, reach: float = 0.99
) -> pd.DataFrame:
    """Per strategy (means over seeds): ``signal_words`` and ``signal_f1`` where the signal fires
    (over the seeds where it does, counted in ``signalled``), ``words_to_99`` (words to ``reach``
    x the seed's full-data F1, over the seeds that get there, counted in ``reached``) and
    ``f1_gap``, the seed's final F1 minus the F1 at the signal (what stopping there gave up),
    and ``last_kappa``, the kappa of the last check (how close a run that never fired came)."""
    if "kappa" not in curves.columns:
        return pd.DataFrame()
    full = curves[curves["strategy"] == FULL_DATA].groupby("seed")["f1"].last()
    runs = curves[curves["strategy"] != FULL_DATA].sort_values(["strategy", "seed", "n_sentences"])
    rows = []
    for (strategy, seed), g in runs.groupby(["strategy", "seed"]):
        x, y = g["n_tokens"].to_numpy(float), g["f1"].to_numpy(float)
        kappas = g["kappa"].to_numpy(float)
        at = stop_point(kappas, threshold, window)
        target = reach * float(full[seed]) if seed in full.index else math.nan
        rows.append(
            {
                "strategy": strategy,
                "signal_words": x[at] if at >= 0 else math.nan,
                "signal_f1": y[at] if at >= 0 else math.nan,
                "f1_gap": y[-1] - y[at] if at >= 0 else math.nan,
                "words_to_99": words_to_reach(x, y, target),
                "last_kappa": kappas[-1] if len(kappas) > 1 else math.nan,
            }
        )
    if not rows:
        return pd.DataFrame()
    seeds = pd.DataFrame(rows).groupby("strategy")
    table = seeds.agg(
        seeds=("signal_words", "size"),
        signalled=("signal_words", lambda v: int(v.notna().sum())),
        signal_words=("signal_words", "mean"),
        signal_f1=("signal_f1", "mean"),
        f1_gap=("f1_gap", "mean"),
        reached=("words_to_99", lambda v: int(v.notna().sum())),
        words_to_99=("words_to_99", "mean"),
        last_kappa=("last_kappa", "mean"),
    )
    return table


def format_stops(table: pd.DataFrame) -> str:
    """The stopping signal per strategy as text."""
    if table.empty:
        return "stopping signal: no kappa recorded (curves from an older run)"

    def num(v: float, fmt: str) -> str:
        return format(v, fmt) if np.isfinite(v) else "-"

    head = (f"{'strategy':<28}{'signal at words':>16}{'F1 there':>9}{'final - there':>14}"
            f"{'words to 99% full':>19}{'last kappa':>11}")  # fmt: skip
    lines = [f"stopping signal (kappa >= {THRESHOLD} on the stop set {WINDOW} checks in a row)",
             head, "-" * len(head)]  # fmt: skip
    for name, r in table.iterrows():
        signal = f"{num(r['signal_words'], ',.0f')} ({int(r['signalled'])}/{int(r['seeds'])})"
        reached = f"{num(r['words_to_99'], ',.0f')} ({int(r['reached'])}/{int(r['seeds'])})"
        lines.append(f"{name:<28}{signal:>16}{num(100 * r['signal_f1'], '.2f'):>9}"
                     f"{num(100 * r['f1_gap'], '+.2f'):>14}{reached:>19}"
                     f"{num(r['last_kappa'], '.4f'):>11}")  # fmt: skip
    return "\n".join(lines)
