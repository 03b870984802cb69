"""Batch encoding of the built-in templates over integer ids: the same feature ids as encoding
every token's template strings one by one, at a fraction of the cost.

A template is described as data (``BatchSpec``): each *slot* is one feature every token has, a
function of a few values around it (a field of the cached word entry at an offset, or the POS tag
at an offset). Words, fields and tags become integer ids once per distinct value; a slot's values
combine into one integer key per token, ``_codes`` numbers the distinct keys in order of first
appearance (a compiled hash table: the training path never imports pandas), and only each distinct feature's string is built and looked up in the index
(a few hundred thousand strings where the token-by-token route builds millions). A *bag* is a
variable-length tuple of strings per (word, first-in-sentence) pair (the NER affixes and flags).
Ids follow first appearance in token-major, template order, exactly as the string route numbers
them (tests/test_features_speed_equality.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from cwal.io.sentence import Sentence

Dep = tuple[str, int, int]  # ("w", offset, field of the word entry) or ("t", offset, 0)
Slot = tuple[str | None, tuple[Dep, ...]]  # (prefix, deps); no deps: the constant ``prefix``
_KEY_LIMIT = 1 << 62
_TAG_PADS = ("<s-2>", "<s-1>", "</s+1>", "</s+2>")


def W(offset: int, field: int) -> Dep:
    """Field ``field`` of the entry of the word at ``offset``."""
    return ("w", offset, field)


def T(offset: int) -> Dep:
    """The POS tag at ``offset``."""
    return ("t", offset, 0)


@dataclass(frozen=True)
class BatchSpec:
    """A template as data: ``entry(word)`` gives a word's cached fields (``pads``: the four
    padding entries, offsets -2, -1, +1, +2 past the ends); ``words`` the slots every token has;
    ``bag`` the entry fields of a variable-length tuple (first token, other tokens) or None;
    ``pos`` the slots added after the bag where the sentence has a POS column."""

    entry: Callable[[str], tuple]
    pads: Sequence[tuple]
    words: Sequence[Slot]
    bag: tuple[int, int] | None
    pos: Sequence[Slot]


def _factorize(values: list) -> tuple[np.ndarray, list]:
    """(integer code per value, distinct values in order of first appearance)."""
    ids: dict = {}
    codes = [ids.setdefault(v, len(ids)) for v in values]
    return np.asarray(codes, dtype=np.int32), list(ids)


def _codes(key: np.ndarray, radix: int | None = None) -> np.ndarray:
    """Integer code of every key, the distinct keys numbered in order of first appearance (what
    ``pandas.factorize`` returns). Keys known to lie in ``[0, radix)`` with ``radix`` small next
    to their number go through a table indexed by the key itself (one slot a key, in cache: a
    word field has tens of thousands of values); others through a compiled open-addressing hash
    table (twice as many slots as keys)."""
    key = np.ascontiguousarray(key, dtype=np.int64)
    if radix is not None and radix <= max(_DIRECT_MIN, 2 * len(key)):
        return _direct_kernel(key, radix)
    return _factorize_kernel(key)


_DIRECT_MIN = 1 << 16


def first_compiled_call() -> None:
    """Run one tiny encoding kernel: loads numba's compiler context (and this kernel from the
    on-disk cache) at a moment the caller chooses (``cwal train`` does it with scipy.linalg out of
    reach)."""
    _codes(np.zeros(1, np.int64), 1)


@numba.njit(cache=True, nogil=True)
def _direct_kernel(key, radix):
    table = np.full(radix, -1, np.int32)
    codes = np.empty(key.shape[0], np.int64)
    m = 0
    for i in range(key.shape[0]):
        c = table[key[i]]
        if c < 0:
            c = m
            table[key[i]] = m
            m += 1
        codes[i] = c
    return codes


@numba.njit(cache=True, nogil=True)
def _factorize_kernel(key):
    n = key.shape[0]
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    mask = (1 << bits) - 1
    table_key = np.empty(mask + 1, np.int64)
    table_code = np.full(mask + 1, -1, np.int64)
    codes = np.empty(n, np.int64)
    shift = np.uint64(64 - bits)
    golden = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of k * 2^64/phi
    m = 0
    for i in range(n):
        k = key[i]
        h = np.int64((np.uint64(k) * golden) >> shift)
        while table_code[h] >= 0 and table_key[h] != k:
            h = (h + 1) & mask
        if table_code[h] < 0:
            table_key[h] = k
            table_code[h] = m
            m += 1
        codes[i] = table_code[h]
    return codes


def _first_seen(codes: np.ndarray) -> np.ndarray:
    """Index of the first occurrence of each code, given codes numbered by first appearance."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    seen = np.maximum.accumulate(codes)
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    new[1:] = codes[1:] > seen[:-1]
    return np.flatnonzero(new)


class _Batch:
    """The integer views of one batch of sentences that slots are evaluated on."""

    def __init__(self, spec: BatchSpec, sentences: list[Sentence], has_pos: bool) -> None:
        lens = np.fromiter((len(s.tokens) for s in sentences), np.int64, len(sentences))
        self.sent_offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        self.n = n = int(self.sent_offsets[-1])
        word_ids, words = _factorize([w for s in sentences for w in s.tokens])
        self.entries = [*map(spec.entry, words), *spec.pads]
        self.n_words = len(words)
        self.pos_in = np.arange(n, dtype=np.int64) - np.repeat(self.sent_offsets[:-1], lens)
        self.length = np.repeat(lens, lens)
        self.word_ids = word_ids
        self._fields: dict[int, tuple[np.ndarray, list]] = {}
        self._at: dict[Dep, np.ndarray] = {}
        self._bar: dict[tuple[str, int], bool] = {}
        if has_pos:
            tags = [t for s in sentences for t in s.columns["pos"]]
            self.tag_ids, self.tags = _factorize([*_TAG_PADS, *tags])
            self.tag_ids = self.tag_ids[len(_TAG_PADS) :]

    def shifted(self, ids: np.ndarray, offset: int, pads: np.ndarray) -> np.ndarray:
        """``ids`` of the token ``offset`` away, else the pad id for that side and distance."""
        j = self.pos_in + offset
        inside = (j >= 0) & (j < self.length)
        src = np.clip(np.arange(self.n) + offset, 0, max(self.n - 1, 0))
        pad = np.where(j < 0, j + 2, j - self.length + 2).clip(0, 3)
        return np.where(inside, ids[src] if self.n else ids, pads[pad])

    def word_at(self, offset: int) -> np.ndarray:
        """Entry index (into ``entries``) of the word at ``offset`` of every token."""
        key = ("w", offset, -1)
        if key not in self._at:
            pads = np.arange(self.n_words, self.n_words + 4, dtype=np.int32)
            self._at[key] = self.shifted(self.word_ids, offset, pads)
        return self._at[key]

    def values(self, dep: Dep) -> tuple[np.ndarray, list]:
        """(value id of every token, value strings) of one dependency."""
        kind, offset, field = dep
        if kind == "t":
            if dep not in self._at:
                pads = np.arange(4, dtype=np.int32)
                self._at[dep] = self.shifted(self.tag_ids, offset, pads)
            return self._at[dep], self.tags
        if field not in self._fields:
            self._fields[field] = _factorize([e[field] for e in self.entries])
        codes, strings = self._fields[field]
        if dep not in self._at:
            self._at[dep] = codes[self.word_at(offset)]
        return self._at[dep], strings

    def release(self, dep: Dep | None = None) -> None:
        """Drop the cached per-token arrays (memory: one int32 array per offset and field), or
        the one of ``dep``."""
        if dep is None:
            self._at.clear()
        else:
            self._at.pop(dep, None)

    def has_bar(self, dep: Dep) -> bool:
        """Whether some value of ``dep`` contains ``|`` (then joined values can collide)."""
        strings = self.values(dep)[1]
        key = (dep[0], dep[2])
        if key not in self._bar:
            self._bar[key] = any("|" in v for v in strings)
        return self._bar[key]


def _slot(
    batch: _Batch, slot: Slot, min_count: int
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None]:
    """(code per token, first token of each code, the string of each kept code, the kept codes
    or None for all) of one slot. With ``min_count`` > 1 codes seen fewer times are left out
    where a code's count is its string's (no value of a multi-value slot contains ``|``)."""
    prefix, deps = slot
    if not deps:
        n = batch.n
        return np.zeros(n, np.int64), np.zeros(min(n, 1), np.int64), [prefix] * min(n, 1), None
    cols = [batch.values(d) for d in deps]
    key, radix = cols[0][0].astype(np.int64), len(cols[0][1])
    for ids, strings in cols[1:]:
        if radix * len(strings) >= _KEY_LIMIT:
            key = _codes(key, radix)
            radix = int(key.max()) + 1
        key = key * len(strings) + ids
        radix *= len(strings)
    codes = _codes(key, radix).astype(np.int32)
    first = _first_seen(codes)
    kept = None
    if min_count > 1 and (len(deps) == 1 or not any(batch.has_bar(d) for d in deps)):
        kept = np.flatnonzero(np.bincount(codes) >= min_count)
    rows = first if kept is None else first[kept]
    parts = [[strings[i] for i in ids[rows].tolist()] for ids, strings in cols]
    if prefix is None:
        return codes, first, parts[0], kept
    head = prefix + "="
    return codes, first, [head + "|".join(vals) for vals in zip(*parts, strict=True)], kept


def encode_batch(
    spec: BatchSpec,
    sentences: list[Sentence],
    ids: dict[str, int],
    grow: bool,
    min_count: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(feat_ids, tok_offsets, sent_offsets)`` of ``sentences`` under ``ids`` (new strings
    added when ``grow``, else dropped), or None when the batch needs the string route (a POS
    column on some sentences only, or one whose length differs from the sentence's).
    ``min_count`` > 1 skips most features seen fewer times in the batch (before their strings
    are built); the caller still applies the exact cut-off."""
    has = {"pos" in s.columns and s.columns["pos"] is not None for s in sentences}
    if len(has) > 1:
        return None
    has_pos = has == {True}
    if has_pos and any(len(s.columns["pos"]) != len(s.tokens) for s in sentences):
        return None
    batch = _Batch(spec, sentences, has_pos)
    n = batch.n
    pos_slots = spec.pos if has_pos else ()
    n_a, n_b = len(spec.words), len(pos_slots)
    if spec.bag is not None:  # variant: the word's entry, first in its sentence or not
        variant = batch.word_at(0) * 2 + (batch.pos_in > 0)
        v_codes = _codes(variant, 2 * len(batch.entries))
        v_first = _first_seen(v_codes)
        bags = [batch.entries[v // 2][spec.bag[v % 2]] for v in variant[v_first].tolist()]
        bag_len = np.fromiter(map(len, bags), np.int64, len(bags))
        tok_bag = bag_len[v_codes] if n else np.zeros(0, np.int64)
    else:
        bags, v_codes, v_first, bag_len = [], None, None, np.zeros(0, np.int64)
        tok_bag = np.zeros(n, np.int64)
    tok_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_a + n_b + tok_bag, out=tok_offsets[1:])
    start = tok_offsets[:-1]
    # every distinct (slot, key): its string and first flat position; ids by first appearance
    todo = (*spec.words, *pos_slots)
    uses = Counter(d for _, deps in todo for d in deps)
    slots = []
    for slot in todo:
        slots.append(_slot(batch, slot, min_count))
        for d in slot[1]:  # a dependency's per-token ids go once no later slot needs them
            uses[d] -= 1
            if not uses[d]:
                batch.release(d)
    where = []
    for j, (_, first, _, kept) in enumerate(slots):
        f = first if kept is None else first[kept]
        where.append(start[f] + (j if j < n_a else n_a + tok_bag[f] + (j - n_a)))
    strings = [s for _, _, strs, _ in slots for s in strs]
    if bags:
        bag_start = np.concatenate([[0], np.cumsum(bag_len)])
        item = np.arange(int(bag_start[-1])) - np.repeat(bag_start[:-1], bag_len)
        where.append(np.repeat(start[v_first] + n_a, bag_len) + item)
        strings += [s for bag in bags for s in bag]
    order = np.argsort(np.concatenate(where) if where else np.zeros(0, np.int64), kind="stable")
    gid = np.empty(len(strings), dtype=np.int32)
    if grow:
        add = ids.setdefault
        gid[order] = [add(strings[i], len(ids)) for i in order.tolist()]
    else:
        get = ids.get
        gid[order] = [get(strings[i], -1) for i in order.tolist()]
    batch.release()  # the per-offset id arrays are no longer needed
    feat = np.empty(int(tok_offsets[-1]), dtype=np.int32)
    at = 0
    del strings, where, order
    for j in range(len(slots)):
        codes, first, strs, kept = slots[j]
        slots[j] = None  # each slot's per-token codes go once used (chunk: 34 MB at the peak)
        local = gid[at : at + len(strs)]
        at += len(strs)
        if kept is not None:
            local = np.full(len(first), -1, dtype=np.int32)
            local[kept] = gid[at - len(strs) : at]
        feat[start + (j if j < n_a else n_a + tok_bag + (j - n_a))] = local[codes]
    if bags:
        flat = gid[at:]
        per_tok = np.repeat(bag_start[v_codes], tok_bag)
        within = np.arange(int(tok_bag.sum())) - np.repeat(np.cumsum(tok_bag) - tok_bag, tok_bag)
        feat[np.repeat(start + n_a, tok_bag) + within] = flat[per_tok + within]
    if not grow or min_count > 1:
        keep = feat >= 0
        per_token = np.add.reduceat(keep, start, dtype=np.int64) if n else start
        tok_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_token, out=tok_offsets[1:])
        feat = feat[keep]
    return feat, tok_offsets, batch.sent_offsets
