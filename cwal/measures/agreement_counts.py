"""Agreement's per-sentence counts: for every item (a sentence labeled independently by two or
more annotators), the sums every measure of ``cwal.measures.agreement`` is a function of, one
row per item, one column per count (a :class:`Layout`).

Rows depend only on their own item and the layout (the annotators and entity types), so a
changing set of items (a project's overlap sentences as versions arrive) is kept up to date by
recomputing the changed items' rows: :class:`SentenceCounts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from cwal.io import schemes

ALL = "all types"

Item = Mapping[str, Sequence[str]]  # annotator -> tags of one sentence


class _NewType(ValueError):
    """An item holds an entity type the layout has no columns for."""


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
class Layout:
    """Which column of the per-sentence statistics holds what."""

    annotators: list[str]
    types: list[str]
    pairs: list[tuple[str, str]]
    index: dict[tuple, int]

    @classmethod
    def make(cls, annotators: list[str], types: list[str]) -> Layout:
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
        self,
        items: Sequence[Item],
        annotators: list[str],
        lengths: np.ndarray,
        scheme: str,
        types: Sequence[str] | None = None,
    ) -> None:
        """``types``: the entity types to code (``_NewType`` when a tag has another); by
        default those the tags hold, sorted."""
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
        found = {t for _, t in parsed if t}
        if types is not None and not found <= set(types):
            raise _NewType(f"entity types {sorted(found - set(types))} are new")
        self.types = sorted(found) if types is None else list(types)
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


def _all_span_stats(table: _TagTable, lay: Layout, out: np.ndarray) -> None:
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
    found: tuple[np.ndarray, np.ndarray, np.ndarray], table: _TagTable, i: int, lay: Layout
) -> list[tuple]:
    typ, start, end = found
    lo, hi = np.searchsorted(start, [table.offsets[i], table.offsets[i + 1]])
    base = table.offsets[i]
    return [(lay.types[t - 1], int(s - base), int(e - base))
            for t, s, e in zip(typ[lo:hi], start[lo:hi], end[lo:hi], strict=True)]  # fmt: skip


def _token_stats(
    items: Sequence[Item], codes: Mapping[str, np.ndarray], lengths: np.ndarray, lay: Layout
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


def _rows(
    items: Sequence[Item], lay: Layout, scheme: str, table: _TagTable | None = None
) -> np.ndarray:
    """The counts of ``items`` (one row each) under ``lay`` (``table``: their tag table when
    made already); ``_NewType`` when an item holds an entity type the layout lacks."""
    if not items:
        return np.zeros((0, len(lay.index)))
    lengths = np.array([len(next(iter(it.values()))) for it in items], dtype=np.int64)
    if table is None:
        table = _TagTable(items, lay.annotators, lengths, scheme, lay.types)
    codes = {a: table.codes(a) for a in lay.annotators}
    stats = _token_stats(items, codes, lengths, lay)
    _all_span_stats(table, lay, stats)
    return stats


def sentence_counts(items: Sequence[Item], scheme: str = "IOB2") -> tuple[np.ndarray, Layout]:
    """The counts of ``items`` (each with two or more annotators) in their order, and their
    layout: the items' annotators and entity types, sorted."""
    annotators = sorted({a for it in items for a in it})
    lengths = np.array([len(next(iter(it.values()))) for it in items], dtype=np.int64)
    table = _TagTable(items, annotators, lengths, scheme)
    lay = Layout.make(annotators, table.types)
    return _rows(items, lay, scheme, table), lay


class SentenceCounts:
    """The counts of a changing set of items, each under a key (a sentence id), rows in key
    order. :meth:`update` recomputes the rows of the changed items only, unless they bring an
    annotator or entity type the layout lacks, or leave one unused: then every row is
    recomputed. Either way the rows and layout equal ``sentence_counts`` of the items in key
    order."""

    def __init__(self, scheme: str = "IOB2") -> None:
        self.scheme = scheme
        self.items: dict[int, dict[str, list[str]]] = {}
        self.keys = np.zeros(0, dtype=np.int64)
        self.stats = np.zeros((0, 0))
        self.layout: Layout | None = None
        self._annotators: dict[str, int] = {}  # items each annotator labeled

    def update(self, changed: Mapping[int, Item | None]) -> int:
        """Replace the items of the changed keys (None, or fewer than two annotators: the key
        leaves); returns how many rows were computed."""
        fresh: dict[int, dict[str, list[str]]] = {}
        seen = self._annotators
        for key, item in changed.items():
            old = self.items.pop(key, None)
            for a in old or ():
                seen[a] -= 1
                if not seen[a]:
                    del seen[a]
            if item is not None and len(item) >= 2:
                self.items[key] = fresh[key] = dict(item)
                for a in item:
                    seen[a] = seen.get(a, 0) + 1
        lay = self.layout
        if lay is not None and set(seen) == set(lay.annotators):
            keys = sorted(fresh)
            try:
                rows = _rows([fresh[k] for k in keys], lay, self.scheme)
            except _NewType:
                rows = None
            if rows is not None:
                self._replace(np.array(list(changed), dtype=np.int64), keys, rows)
                if self._types_used():
                    return len(keys)
        return self._rebuild()

    def _replace(self, gone: np.ndarray, keys: list[int], rows: np.ndarray) -> None:
        keep = ~np.isin(self.keys, gone)
        all_keys = np.concatenate([self.keys[keep], np.array(keys, dtype=np.int64)])
        all_rows = np.concatenate([self.stats[keep], rows])
        order = np.argsort(all_keys, kind="stable")
        self.keys, self.stats = all_keys[order], all_rows[order]

    def _types_used(self) -> bool:
        """True when every entity type of the layout is still some token's (every token of
        an item is labeled by two or more annotators, so alpha counts it)."""
        lay = self.layout
        assert lay is not None
        total = self.stats.sum(axis=0)
        return all(total[lay.index[("alpha", ALL, "nc", t)]] > 0 for t in lay.types)

    def _rebuild(self) -> int:
        keys = sorted(self.items)
        self.keys = np.array(keys, dtype=np.int64)
        if not keys:
            self.stats, self.layout = np.zeros((0, 0)), None
            return 0
        self.stats, self.layout = sentence_counts([self.items[k] for k in keys], self.scheme)
        return len(keys)
