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

Every measure is a function of sums over sentences, so a bootstrap replicate (sentences drawn
with replacement) is one matrix product: fast enough for tens of thousands of items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from cwal.io import schemes

ALL = "all types"
OVERALL = "overall"
MEASURES = ("span F1 exact", "span F1 partial", "Cohen's kappa", "Krippendorff's alpha")

Item = Mapping[str, Sequence[str]]  # annotator -> tags of one sentence


def partial_counts(a: Sequence[tuple], b: Sequence[tuple]) -> tuple[int, int]:
    """``(COR, PAR)`` of nervaluate's partial scheme, ``a`` the reference and ``b`` compared
    (spans ``(type, start, end_exclusive)``; types are not compared). Greedy, in b's order,
    exactly as nervaluate matches: a b-span takes the first free a-span with the same bounds,
    else the first free a-span it overlaps."""
    taken: set[int] = set()
    cor = par = 0
    for _, bs, be in b:
        partial = None
        exact = False
        for i, (_, as_, ae) in enumerate(a):
            if i in taken or bs >= ae or as_ >= be:
                continue
            if (bs, be) == (as_, ae):
                taken.add(i)
                cor += 1
                exact = True
                break
            if partial is None:
                partial = i
        if not exact and partial is not None:
            taken.add(partial)
            par += 1
    return cor, par


@dataclass(frozen=True)
class _Layout:
    """Which column of the per-sentence statistics holds what."""

    annotators: list[str]
    types: list[str]
    pairs: list[tuple[str, str]]
    index: dict[tuple, int]

    @classmethod
    def make(cls, annotators: list[str], types: list[str]) -> _Layout:
        pairs = list(combinations(annotators, 2))
        keys: list[tuple] = []
        for pair in pairs:
            for t in [ALL, *types]:
                keys += [(pair, t, k) for k in ("match", "na", "nb", "part", "agree", "ta", "tb")]
            keys += [(pair, "tokens")]
            keys += [(pair, "O", k) for k in ("ta", "tb")]
        for t in [ALL, *types]:
            keys += [("alpha", t, "diag"), ("alpha", t, "n")]
            labels = ["O", *types] if t == ALL else ["in", "out"]
            keys += [("alpha", t, "nc", c) for c in labels]
        keys += [("items", p) for p in pairs] + [("items", "any")]
        return cls(annotators, types, pairs, {k: i for i, k in enumerate(keys)})


def _by_type(spans: Sequence[tuple]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for x in spans:
        out.setdefault(x[0], []).append(x)
    return out


class _TagTable:
    """Every annotator's tags of every item as integer arrays, and their spans found for all
    tokens at once (numpy): a span opens at a non-O token whose list starts there, or after an
    O, a token of another type, a closing prefix, or at an opening prefix; it closes before the
    next opening (``schemes.spans``'s reading, conlleval's for invalid sequences)."""

    def __init__(
        self, items: Sequence[Item], annotators: list[str], lengths: np.ndarray, scheme: str
    ) -> None:
        sch = schemes.get(scheme)
        n_tok = int(lengths.sum())
        self.offsets = np.concatenate([[0], np.cumsum(lengths)])
        # every annotator's tags in one flat array, a missing version as None, ids by hashing
        flat = [
            t
            for a in annotators
            for it, n in zip(items, lengths.tolist(), strict=True)
            for t in it.get(a, (None,) * n)
        ]
        ids, uniques = pd.factorize(np.array(flat, dtype=object), use_na_sentinel=True)
        tag_ids = list(uniques)
        self.ids = {a: ids[k * n_tok : (k + 1) * n_tok].astype(np.int32)
                    for k, a in enumerate(annotators)}  # fmt: skip
        parsed = []
        for tag in tag_ids:
            prefix, typ = schemes.split_tag(tag) or (None, None)
            if prefix is None:
                raise ValueError(f"malformed tag {tag!r}: expected 'O' or a prefix then a type")
            if prefix != schemes.OUTSIDE and prefix not in sch.alphabet:
                raise ValueError(f"tag {tag!r}: prefix {prefix!r} is not used by {sch.name}")
            parsed.append((prefix, typ))
        self.types = sorted({t for _, t in parsed if t})
        code_of = {t: k for k, t in enumerate(self.types, start=1)}
        self._type = np.array([code_of.get(t, 0) for _, t in parsed] + [0], dtype=np.int32)
        self._opens = np.array([p in sch.starts for p, _ in parsed] + [False])
        self._closes = np.array([p in sch.ends for p, _ in parsed] + [False])
        self.first = np.zeros(n_tok, dtype=bool)
        self.first[self.offsets[:-1][lengths > 0]] = True
        self.last = np.zeros(n_tok, dtype=bool)
        self.last[self.offsets[1:][lengths > 0] - 1] = True
        self.sentence = np.repeat(np.arange(len(items)), lengths)

    def codes(self, a: str) -> np.ndarray:
        """Each token's type code (0 = O, k = ``types[k-1]``; -1 where ``a`` gave no version)."""
        ids = self.ids[a]
        return np.where(ids >= 0, self._type[ids], -1).astype(np.int16)

    def spans(self, a: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(type code, start, end_exclusive)`` of every span of ``a``, in token order (global
        token positions; ``self.sentence[start]`` is the item)."""
        ids = self.ids[a]
        typ = np.where(ids >= 0, self._type[ids], 0)
        inside = typ > 0
        opens, closes = self._opens[ids], self._closes[ids]
        prev_typ = np.concatenate([[0], typ[:-1]])
        prev_closes = np.concatenate([[False], closes[:-1]])
        start = inside & (self.first | (prev_typ != typ) | opens | prev_closes)
        next_start = np.concatenate([start[1:], [True]])
        next_typ = np.concatenate([typ[1:], [0]])
        end = inside & (self.last | (next_typ != typ) | next_start | closes)
        starts, ends = np.flatnonzero(start), np.flatnonzero(end) + 1
        return typ[starts], starts, ends


def _all_span_stats(table: _TagTable, lay: _Layout, out: np.ndarray) -> None:
    """The span columns of every sentence: counted with numpy where a pair's tag lists are
    equal (every span matches), sentence by sentence where they differ."""
    ix = lay.index
    n = out.shape[0]
    spans = {a: table.spans(a) for a in lay.annotators}
    n_types = len(lay.types) + 1
    for pair in lay.pairs:
        a, b = pair
        ida, idb = table.ids[a], table.ids[b]
        both = np.bincount(table.sentence[(ida >= 0) & (idb >= 0)], minlength=n) > 0
        differs = np.bincount(table.sentence[ida != idb], minlength=n) > 0
        out[:, ix[("items", pair)]] = both
        counts = {}
        for who, (typ, start, _) in (("na", spans[a]), ("nb", spans[b])):
            sent = table.sentence[start]
            keep = both[sent]
            by = np.bincount(sent[keep] * n_types + typ[keep], minlength=n * n_types)
            counts[who] = by.reshape(n, n_types)
        for k, t in enumerate([ALL, *lay.types]):
            na = counts["na"].sum(axis=1) if k == 0 else counts["na"][:, k]
            nb = counts["nb"].sum(axis=1) if k == 0 else counts["nb"][:, k]
            out[:, ix[(pair, t, "na")]] = na
            out[:, ix[(pair, t, "nb")]] = nb
            same = both & ~differs
            out[:, ix[(pair, t, "match")]] = np.where(same, na, 0)
            out[:, ix[(pair, t, "part")]] = np.where(same, na, 0)
        for i in np.flatnonzero(both & differs):
            sa, sb = (
                _sentence_spans(spans[a], table, i, lay),
                _sentence_spans(spans[b], table, i, lay),
            )
            ga, gb = _by_type(sa), _by_type(sb)
            groups = [(ALL, sa, sb)]
            groups += [(t, ga.get(t, []), gb.get(t, [])) for t in ga.keys() | gb.keys()]
            for t, xa, xb in groups:
                cor, par = partial_counts(xa, xb)
                out[i, ix[(pair, t, "match")]] = len(set(xa) & set(xb))
                out[i, ix[(pair, t, "part")]] = cor + 0.5 * par


def _sentence_spans(
    found: tuple[np.ndarray, np.ndarray, np.ndarray], table: _TagTable, i: int, lay: _Layout
) -> list[tuple]:
    typ, start, end = found
    lo, hi = np.searchsorted(start, [table.offsets[i], table.offsets[i + 1]])
    base = table.offsets[i]
    return [(lay.types[t - 1], int(s - base), int(e - base))
            for t, s, e in zip(typ[lo:hi], start[lo:hi], end[lo:hi], strict=True)]  # fmt: skip


def _token_stats(
    items: Sequence[Item], codes: Mapping[str, np.ndarray], lengths: np.ndarray, lay: _Layout
) -> np.ndarray:
    """The token columns (kappa, alpha) of every sentence at once; ``codes[a]`` holds each
    token's type code (0 = O, t + 1 = ``lay.types[t]``, -1 where ``a`` gave no version)."""
    n = len(items)
    ix = lay.index
    out = np.zeros((n, len(ix)))
    sent = np.repeat(np.arange(n), lengths)

    def per_sentence(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        w = None if weights is None else weights[mask]
        return np.bincount(sent[mask], weights=w, minlength=n)

    width = len(lay.types) + 1
    for pair in lay.pairs:
        ca, cb = codes[pair[0]], codes[pair[1]]
        both = (ca >= 0) & (cb >= 0)
        # one count of every (code of a, code of b) per sentence gives every token column
        joint = np.bincount(
            (sent[both] * width + ca[both]) * width + cb[both], minlength=n * width * width
        ).reshape(n, width, width)
        tokens = joint.sum(axis=(1, 2))
        ta, tb = joint.sum(axis=2), joint.sum(axis=1)
        out[:, ix[(pair, "tokens")]] = tokens
        out[:, ix[(pair, ALL, "agree")]] = np.trace(joint, axis1=1, axis2=2)
        out[:, ix[(pair, "O", "ta")]] = ta[:, 0]
        out[:, ix[(pair, "O", "tb")]] = tb[:, 0]
        for k, t in enumerate(lay.types, start=1):
            out[:, ix[(pair, t, "agree")]] = tokens - ta[:, k] - tb[:, k] + 2 * joint[:, k, k]
            out[:, ix[(pair, t, "ta")]] = ta[:, k]
            out[:, ix[(pair, t, "tb")]] = tb[:, k]
    stacked = np.stack([codes[a] for a in lay.annotators])
    m = (stacked >= 0).sum(axis=0).astype(np.float64)
    pairable = m >= 2
    out[:, ix[("items", "any")]] = per_sentence(pairable) > 0
    counts = np.stack([(stacked == c).sum(axis=0) for c in range(len(lay.types) + 1)]).astype(
        np.float64
    )
    denom = np.where(pairable, m - 1, 1)
    for t_index, t in enumerate([ALL, *lay.types]):
        if t == ALL:
            labels = dict(zip(["O", *lay.types], counts, strict=True))
        else:
            labels = {"in": counts[t_index], "out": m - counts[t_index]}
        diag = sum(c * (c - 1) for c in labels.values()) / denom
        out[:, ix[("alpha", t, "diag")]] = per_sentence(pairable, diag)
        out[:, ix[("alpha", t, "n")]] = per_sentence(pairable, m)
        for c, v in labels.items():
            out[:, ix[("alpha", t, "nc", c)]] = per_sentence(pairable, v)
    return out


def _safe(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / np.where(pe < 1, 1 - pe, 1), np.nan)


def _estimates(s: np.ndarray, lay: _Layout) -> dict[tuple, np.ndarray]:
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


def _counts(s: np.ndarray, lay: _Layout, scope: str, t: str, measure: str) -> tuple[int, int]:
    """(sentences, spans or tokens) behind one figure."""
    ix = lay.index
    pairs = lay.pairs if scope == OVERALL else [p for p in lay.pairs if f"{p[0]} × {p[1]}" == scope]
    if measure == MEASURES[3]:
        return int(s[ix[("items", "any")]]), int(s[ix[("alpha", t, "n")]])
    items = int(sum(s[ix[("items", p)]] for p in pairs))
    if measure == MEASURES[2]:
        return items, int(sum(s[ix[(p, "tokens")]] for p in pairs))
    return items, int(sum(s[ix[(p, t, "na")]] + s[ix[(p, t, "nb")]] for p in pairs))


def _resampled_sums(stats: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``replicates`` resamples of the rows (drawn with replacement): the
    multiplicity of each row times the rows, in blocks to bound memory."""
    n = stats.shape[0]
    out = np.empty((replicates, stats.shape[1]))
    block = max(1, min(replicates, 2**24 // max(n, 1)))
    for start in range(0, replicates, block):
        stop = min(replicates, start + block)
        draws = rng.integers(0, n, size=(stop - start, n))
        draws += np.arange(stop - start)[:, None] * n  # one bin range per replicate
        counts = np.bincount(draws.ravel(), minlength=(stop - start) * n)
        out[start:stop] = counts.reshape(stop - start, n).astype(np.float32) @ stats
    return out


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
    items = [dict(it) for it in items if len(it) >= 2]
    columns = ["scope", "type", "measure", "value", "low", "high", "items", "units"]
    if not items:
        return pd.DataFrame(columns=[*columns, "a", "b"])
    annotators = sorted({a for it in items for a in it})
    lengths = np.array([len(next(iter(it.values()))) for it in items])
    table = _TagTable(items, annotators, lengths, scheme)
    types = table.types
    lay = _Layout.make(annotators, types)
    codes = {a: table.codes(a) for a in annotators}
    stats = _token_stats(items, codes, lengths, lay)
    _all_span_stats(table, lay, stats)
    total = stats.sum(axis=0)
    point = _estimates(total, lay)
    rng = np.random.default_rng(seed)
    used = np.flatnonzero(total)  # columns that are zero everywhere stay zero in every resample
    boot_sums = np.zeros((replicates, stats.shape[1]))
    boot_sums[:, used] = _resampled_sums(stats[:, used].astype(np.float32), replicates, rng)
    boot = _estimates(boot_sums, lay)
    tail = (1 - level) / 2 * 100
    pair_of = {f"{a} × {b}": (a, b) for a, b in lay.pairs}
    rows = []
    for (scope, t, measure), value in point.items():
        reps = boot[(scope, t, measure)]
        reps = reps[np.isfinite(reps)]
        low, high = np.percentile(reps, [tail, 100 - tail]) if reps.size else (np.nan, np.nan)
        rows.append((scope, t, measure, float(value), float(low), float(high),
                     *_counts(total, lay, scope, t, measure), *pair_of.get(scope, ("", ""))))  # fmt: skip
    table = pd.DataFrame(rows, columns=[*columns, "a", "b"])
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
