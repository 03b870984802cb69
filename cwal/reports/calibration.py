"""Error-analysis data: reliability per confidence method, confusion of predicted against given
labels, entropy histograms of groups of tokens (docs/algorithms.md §5)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from cwal.measures import (
    brier_score,
    calibration_rmse,
    entropy_histogram,
    expected_calibration_error,
    reliability_table,
)

BINS = 20


def reliability(tokens: pd.DataFrame, bins: int = BINS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Reliability tables and summary per confidence method.

    ``tokens``: one row per token with ``method``, ``confidence`` (in [0, 1]) and ``correct``.
    Returns ``(table, summary)``: ``table`` is ``cwal.measures.reliability_table`` per method
    with a ``method`` column (every bin, counts included); ``summary`` has ``method``,
    ``tokens``, ``accuracy``, ``mean_confidence``, ``rmse``, ``ece``, ``brier``.
    """
    tables, rows = [], []
    for method, part in tokens.groupby("method", sort=True):
        conf = part["confidence"].to_numpy(dtype=np.float64)
        ok = part["correct"].to_numpy(dtype=bool)
        if conf.size == 0 or conf.min() < 0 or conf.max() > 1:
            continue  # a relative score (Delta) has no reliability diagram
        tables.append(reliability_table(conf, ok, bins).assign(method=method))
        rows.append(
            {
                "method": method,
                "tokens": int(conf.size),
                "accuracy": float(ok.mean()),
                "mean_confidence": float(conf.mean()),
                "rmse": calibration_rmse(conf, ok, bins),
                "ece": expected_calibration_error(conf, ok, bins),
                "brier": brier_score(conf, ok),
            }
        )
    table_cols = ["method", "bin", "lo", "hi", "center", "count", "accuracy", "mean_confidence"]
    table = pd.concat(tables, ignore_index=True)[table_cols] if tables else None
    summary_cols = ["method", "tokens", "accuracy", "mean_confidence", "rmse", "ece", "brier"]
    return (
        table if table is not None else pd.DataFrame(columns=table_cols),
        pd.DataFrame(rows, columns=summary_cols),
    )


def confusion_matrix(tokens: pd.DataFrame) -> pd.DataFrame:
    """Counts of (predicted, given) label pairs, every pair of seen labels included.

    ``tokens`` has ``predicted`` and ``truth``. Columns: ``given``, ``predicted``, ``count``,
    ``share`` (of the tokens with that given label).
    """
    cols = ["given", "predicted", "count", "share"]
    if tokens.empty:
        return pd.DataFrame(columns=cols)
    pairs = Counter(
        zip(tokens["truth"].to_numpy(object), tokens["predicted"].to_numpy(object), strict=True)
    )
    labels = sorted({x for pair in pairs for x in pair}, key=_label_order)
    grid = [(g, p) for g in labels for p in labels]
    out = pd.DataFrame(grid, columns=["given", "predicted"])
    out["count"] = [pairs.get(pair, 0) for pair in grid]
    per_given = out.groupby("given")["count"].transform("sum")
    out["share"] = np.where(per_given > 0, out["count"] / per_given.where(per_given > 0, 1), 0.0)
    out["count"] = out["count"].astype(np.int64)
    return out[cols]


def _label_order(tag: str) -> tuple[int, str, str]:
    """``O`` first, then by type, then by prefix (B before I ...)."""
    if tag == "O":
        return (0, "", "")
    prefix, _, typ = tag.partition("-")
    return (1, typ or prefix, prefix)


def entropy_histograms(tokens: pd.DataFrame, bins: int = BINS) -> pd.DataFrame:
    """Histograms of token entropy per ``group`` over one shared range (so they compare).

    ``tokens`` has ``group`` and ``entropy``. Columns: ``group``, ``bin``, ``lo``, ``hi``,
    ``center``, ``count``, ``fraction`` (of the group's tokens).
    """
    cols = ["group", "bin", "lo", "hi", "center", "count", "fraction"]
    if tokens.empty:
        return pd.DataFrame(columns=cols)
    top = float(tokens["entropy"].max())
    span = (0.0, top if top > 0 else 1.0)
    parts = [
        entropy_histogram(part["entropy"].to_numpy(dtype=np.float64), bins, span).assign(
            group=group
        )
        for group, part in tokens.groupby("group", sort=False)
    ]
    return pd.concat(parts, ignore_index=True)[cols]
