"""Inter-annotator agreement that counts spans, with bootstrap intervals over sentences.

Items are sentences labeled independently by two or more annotators (``{annotator: tags}``).
Measures, per pair of annotators, pooled over all pairs ("overall") and per entity type:

* **span F1, exact**: a span agrees when both annotators marked the same type over the same
  tokens (nervaluate's *strict*); F1 = 2 * matches / (spans of a + spans of b).
* **span F1, partial**: nervaluate's *partial* scheme with ``a`` as the reference: an exact
  boundary match counts 1, an overlapping one 1/2 (entity type ignored overall; per type, only
  spans of that type are compared). P = (COR + PAR/2) / spans of b, R = (COR + PAR/2) / spans
  of a, so F1 = 2 (COR + PAR/2) / (spans of a + spans of b).
* **Cohen's kappa** on tokens, each token labeled with its entity type or ``O`` (the B/I prefix
  is left to the span measures); per type: that type against everything else. "Overall" is the
  mean of the pairs' kappas (Light's kappa).
* **Krippendorff's alpha** (nominal) over all annotators, tokens as units (a token labeled by
  one annotator only is not pairable and does not count), as INCEpTION reports it.

Every measure is a function of sums over sentences: the per-sentence counts are made in
``agreement_counts`` (kept up to date item by item by its ``SentenceCounts``), the bootstrap
intervals over sentences in ``agreement_intervals``; this module turns sums into measures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cwal.measures.agreement_counts import (
    ALL,
    Item,
    Layout,
    SentenceCounts,
    partial_counts,
    sentence_counts,
)
from cwal.measures.agreement_intervals import percentile_intervals

OVERALL = "overall"
MEASURES = ("span F1 exact", "span F1 partial", "Cohen's kappa", "Krippendorff's alpha")
COLUMNS = ["scope", "type", "measure", "value", "low", "high", "items", "units", "a", "b"]

__all__ = [
    "ALL",
    "MEASURES",
    "OVERALL",
    "Item",
    "SentenceCounts",
    "agreement",
    "counts_table",
    "pair_matrix",
    "partial_counts",
]


def _safe(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)


def _estimates(s: np.ndarray, lay: Layout) -> dict[tuple, np.ndarray]:
    """Every measure from column sums ``s`` (shape ``(..., columns)``)."""
    ix = lay.index
    col = lambda *key: s[..., ix[key]]  # noqa: E731
    out: dict[tuple, np.ndarray] = {}
    for t in [ALL, *lay.types]:
        kappas = []
        pooled = {k: 0.0 for k in ("match", "part", "n")}
        for pair in lay.pairs:
            scope = f"{pair[0]} × {pair[1]}"
            n_spans = col(pair, t, "na") + col(pair, t, "nb")
            out[(scope, t, MEASURES[0])] = _safe(2 * col(pair, t, "match"), n_spans)
            out[(scope, t, MEASURES[1])] = _safe(2 * col(pair, t, "part"), n_spans)
            n = col(pair, "tokens")
            po = _safe(col(pair, t, "agree"), n)
            if t == ALL:
                labels = [("O",), *[(x,) for x in lay.types]]
                pa = [_safe(col(pair, *lab, "ta") if lab == ("O",) else col(pair, lab[0], "ta"), n)
                      for lab in labels]  # fmt: skip
                pb = [_safe(col(pair, *lab, "tb") if lab == ("O",) else col(pair, lab[0], "tb"), n)
                      for lab in labels]  # fmt: skip
                pe = sum(x * y for x, y in zip(pa, pb, strict=True))
            else:
                qa, qb = _safe(col(pair, t, "ta"), n), _safe(col(pair, t, "tb"), n)
                pe = qa * qb + (1 - qa) * (1 - qb)
            kappa = _kappa(po, pe)
            out[(scope, t, MEASURES[2])] = kappa
            kappas.append(kappa)
            pooled["match"] = pooled["match"] + 2 * col(pair, t, "match")
            pooled["part"] = pooled["part"] + 2 * col(pair, t, "part")
            pooled["n"] = pooled["n"] + n_spans
        if lay.pairs:
            out[(OVERALL, t, MEASURES[0])] = _safe(pooled["match"], pooled["n"])
            out[(OVERALL, t, MEASURES[1])] = _safe(pooled["part"], pooled["n"])
            stacked = np.stack(kappas)
            finite = np.isfinite(stacked)
            total = np.where(finite, stacked, 0).sum(axis=0)
            out[(OVERALL, t, MEASURES[2])] = _safe(total, finite.sum(axis=0))
        labels = ["O", *lay.types] if t == ALL else ["in", "out"]
        n = col("alpha", t, "n")
        expected = n * n - sum(col("alpha", t, "nc", c) ** 2 for c in labels)
        observed = n - col("alpha", t, "diag")
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(expected > 0, 1 - (n - 1) * observed / np.where(expected > 0, expected, 1),
                             np.nan)  # fmt: skip
        out[(OVERALL, t, MEASURES[3])] = alpha
    return out


def _counts(s: np.ndarray, lay: Layout, scope: str, t: str, measure: str) -> tuple[int, int]:
    """(sentences, spans or tokens) behind one figure."""
    ix = lay.index
    pairs = lay.pairs if scope == OVERALL else [p for p in lay.pairs if f"{p[0]} × {p[1]}" == scope]
    if measure == MEASURES[3]:
        return int(s[ix[("items", "any")]]), int(s[ix[("alpha", t, "n")]])
    items = int(sum(s[ix[("items", p)]] for p in pairs))
    if measure == MEASURES[2]:
        return items, int(sum(s[ix[(p, "tokens")]] for p in pairs))
    return items, int(sum(s[ix[(p, t, "na")]] + s[ix[(p, t, "nb")]] for p in pairs))


def agreement(
    items: Sequence[Item],
    scheme: str = "IOB2",
    *,
    replicates: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The agreement table of ``items`` (sentences with two or more annotators' tags).

    One row per (scope, type, measure): ``value``, the bootstrap interval ``low``..``high`` at
    ``level`` (percentiles of ``replicates`` resamples of the sentences; seeded), ``items``
    (sentences behind the figure) and ``units`` (spans, tokens, or pairable token values for
    alpha). Scope is ``overall`` or a pair ``a × b`` (its annotators also in columns ``a`` and
    ``b``, empty for overall). Empty when no sentence has two versions."""
    items = [it for it in items if len(it) >= 2]
    if not items:
        return pd.DataFrame(columns=COLUMNS)
    stats, lay = sentence_counts(items, scheme)
    return _table(stats, lay, replicates=replicates, level=level, seed=seed)


def counts_table(
    counts: SentenceCounts, *, replicates: int = 1000, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """:func:`agreement` of the items ``counts`` holds, in key order, from its counts."""
    if counts.layout is None or not len(counts.keys):
        return pd.DataFrame(columns=COLUMNS)
    return _table(counts.stats, counts.layout, replicates=replicates, level=level, seed=seed)


def _table(
    stats: np.ndarray, lay: Layout, *, replicates: int, level: float, seed: int
) -> pd.DataFrame:
    total = stats.sum(axis=0)
    point = _estimates(total, lay)
    intervals = percentile_intervals(
        stats, lambda sums: _estimates(sums, lay), replicates=replicates, level=level, seed=seed
    )
    pair_of = {f"{a} × {b}": (a, b) for a, b in lay.pairs}
    rows = []
    for (scope, t, measure), value in point.items():
        low, high = intervals[(scope, t, measure)]
        rows.append((scope, t, measure, float(value), low, high,
                     *_counts(total, lay, scope, t, measure), *pair_of.get(scope, ("", ""))))  # fmt: skip
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = {m: i for i, m in enumerate(MEASURES)}
    table["_o"] = table["measure"].map(order)
    table["_s"] = table["scope"] != OVERALL
    table["_t"] = table["type"] != ALL
    return (
        table.sort_values(["_s", "scope", "_t", "type", "_o"], kind="stable")
        .drop(columns=["_o", "_s", "_t"])
        .reset_index(drop=True)
    )


def pair_matrix(table: pd.DataFrame, measure: str = MEASURES[0], type_: str = ALL) -> pd.DataFrame:
    """Long form ``a``, ``b``, ``value`` of one pairwise measure, both orders (for a heatmap)."""
    rows = table[(table["measure"] == measure) & (table["type"] == type_)]
    out = []
    for a, b, value in zip(rows["a"], rows["b"], rows["value"], strict=True):
        if a:
            out += [(a, b, value), (b, a, value)]
    return pd.DataFrame(out, columns=["a", "b", "value"])
