"""Feature templates and the feature index: sentences become integer arrays.

A template turns each token of a sentence into feature strings; a ``FeatureIndex`` maps those
strings to dense integer ids, so weights are numpy arrays indexed by feature x label.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from operator import itemgetter

import numpy as np

from cwal.features import documents as _documents
from cwal.features._batch import BatchSpec, T, W, encode_batch
from cwal.features._clustered import with_clusters
from cwal.features.clusters import WordClusters
from cwal.features.encoded import Encoded, release_heap, with_slots
from cwal.features.lexicon import Lexicon
from cwal.io.sentence import Sentence

_PAD_LEFT = ("<s-2>", "<s-1>")
_PAD_RIGHT = ("</s+1>", "</s+2>")

# Speed. Everything that depends on one word alone (lowercase, shape, affixes, flags, and the
# strings the word contributes at each window offset) is built once per distinct word and then
# looked up; likewise (ner) the POS features of a window of tags and a shape. Templates
# walk a sentence's padded entries with zip, not index arithmetic. The caches are LRU-bounded at
# _CACHE_MAX entries each (full: ~35 MB for a template), so a long-running server cannot grow
# them without limit. The strings and their order must never change: model files store features
# by string, and feature ids follow first appearance (tests/test_features_speed_equality.py).
_CACHE_MAX = 1 << 14
_cached = lru_cache(maxsize=_CACHE_MAX)
_second = itemgetter(1)


def word_shape(word: str) -> str:
    """Collapsed character classes: ``McDonald's`` -> ``XxXx'x``, ``1.8`` -> ``d.d``."""
    out: list[str] = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def _padded_tags(pos: Sequence[str], n: int) -> list[str]:
    """The POS column padded like the words: ``t[c]`` is the tag of token ``c - 2``."""
    if len(pos) < n:
        raise ValueError(f"the pos column has {len(pos)} tags for {n} tokens")
    return [*_PAD_LEFT, *pos, *_PAD_RIGHT]


@_cached
def _shape_strings(sh: str) -> tuple[str, ...]:
    """A shape's unary features at offsets -2..+2 (shared by all words of that shape)."""
    return (f"sh-2={sh}", f"sh-1={sh}", f"sh0={sh}", f"sh+1={sh}", f"sh+2={sh}")


# --- chunk template ---------------------------------------------------------------------------
# A word's entry: 0 lowercased word lw, 1 shape, 2-6 "w-2=lw" .. "w+2=lw", 7 "sh0=", 8 "s2=",
# 9 "s3=", 10 "s4=", 11 "pre3=", 12 lw[-3:]. (The POS features stay plain f-strings: caching tag
# n-grams measured no faster for this template.)


def _chunk_fields(lw: str, sh: str) -> tuple[str, ...]:
    return (
        lw, sh, f"w-2={lw}", f"w-1={lw}", f"w0={lw}", f"w+1={lw}", f"w+2={lw}",
        _shape_strings(sh)[2], f"s2={lw[-2:]}", f"s3={lw[-3:]}", f"s4={lw[-4:]}", f"pre3={lw[:3]}",
        lw[-3:],
    )  # fmt: skip


@_cached
def _chunk_word(word: str) -> tuple[str, ...]:
    return _chunk_fields(word.lower(), word_shape(word))


_CHUNK_PAD_LEFT = [_chunk_fields(p, p) for p in _PAD_LEFT]
_CHUNK_PAD_RIGHT = [_chunk_fields(p, p) for p in _PAD_RIGHT]


def chunk_template(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """Chunking features: Sha & Pereira (2003) -- words and POS tags in a +-2 window, POS bigrams
    and trigrams, word bigrams, word/POS conjunctions -- plus word shapes, suffixes of 2-4
    letters, a 3-letter prefix, POS/shape and POS/suffix conjunctions (dev-tuned additions)."""
    ents = [*_CHUNK_PAD_LEFT, *map(_chunk_word, tokens), *_CHUNK_PAD_RIGHT]
    feats: list[list[str]] = []
    for a, b, e, d, g in zip(ents, ents[1:], ents[2:], ents[3:], ents[4:], strict=False):
        lb, lw, ld = b[0], e[0], d[0]
        s0 = e[1]
        feats.append([
            "b", a[2], b[3], e[4], d[5], g[6],
            f"w-2|w-1={a[0]}|{lb}", f"w-1|w0={lb}|{lw}", f"w0|w+1={lw}|{ld}",
            f"w+1|w+2={ld}|{g[0]}",
            e[7], f"sh-1|sh0={b[1]}|{s0}", f"sh0|sh+1={s0}|{d[1]}",
            e[8], e[9], e[10], e[11],
        ])  # fmt: skip
    pos = columns.get("pos")
    if pos is None or not feats:
        return feats
    t = _padded_tags(pos, len(feats))
    for f, b, e, d, tm2, tm1, p0, tp1, tp2 in zip(
        feats, ents[1:], ents[2:], ents[3:], t, t[1:], t[2:], t[3:], t[4:], strict=False
    ):
        lb, lw, ld = b[0], e[0], d[0]
        f += [
            f"p-2={tm2}", f"p-1={tm1}", f"p0={p0}", f"p+1={tp1}", f"p+2={tp2}",
            f"p-2|p-1={tm2}|{tm1}", f"p-1|p0={tm1}|{p0}", f"p0|p+1={p0}|{tp1}",
            f"p+1|p+2={tp1}|{tp2}",
            f"p-2|p-1|p0={tm2}|{tm1}|{p0}", f"p-1|p0|p+1={tm1}|{p0}|{tp1}",
            f"p0|p+1|p+2={p0}|{tp1}|{tp2}",
            f"w0|p0={lw}|{p0}", f"w-1|p0={lb}|{p0}", f"w+1|p0={ld}|{p0}",
            f"w-1|p-1={lb}|{tm1}", f"w+1|p+1={ld}|{tp1}",
            f"w0|p-1={lw}|{tm1}", f"w0|p+1={lw}|{tp1}",
            f"p0|sh0={p0}|{e[1]}", f"p0|s3={p0}|{e[12]}",
        ]  # fmt: skip
    return feats


# --- ner template -----------------------------------------------------------------------------
# A word's entry: 0 lowercased word lw, 1 shape, 2-6 "w-2=lw" .. "w+2=lw", 7 "W0=word",
# 8-12 "sh-2=" .. "sh+2=", 13 "suf3-1=" and 14 "pre3-1=" (of the next token), 15 "suf3+1=" (of
# the previous one), 16 "len=", then the affixes and flags: 17 as the first token, 18 elsewhere.

_LEN = tuple(f"len={k}" for k in range(9))


def _ner_fields(word: str, lw: str, sh: str) -> tuple:
    affixes = (
        f"pre1={lw[:1]}", f"suf1={lw[-1:]}", f"pre2={lw[:2]}", f"suf2={lw[-2:]}",
        f"pre3={lw[:3]}", f"suf3={lw[-3:]}", f"pre4={lw[:4]}", f"suf4={lw[-4:]}",
    )[: 2 * min(len(lw), 4)]  # fmt: skip
    flags: list[str] = []
    if word.isupper():
        flags.append("allcap")
    if any(map(str.isdigit, word)):
        flags.append("digit")
        if word.isdigit():
            flags.append("alldigit")
    if "-" in word:
        flags.append("hyphen")
    cap = word[:1].isupper()
    first = (*affixes, "first", *(("cap&first", "cap") if cap else ()), *flags)
    rest = (*affixes, *(("cap&mid", "cap") if cap else ()), *flags)
    return (
        lw, sh, f"w-2={lw}", f"w-1={lw}", f"w0={lw}", f"w+1={lw}", f"w+2={lw}", f"W0={word}",
        *_shape_strings(sh), f"suf3-1={lw[-3:]}", f"pre3-1={lw[:3]}", f"suf3+1={lw[-3:]}",
        _LEN[min(len(word), 8)], first, rest,
    )  # fmt: skip


@_cached
def _ner_word(word: str) -> tuple:
    return _ner_fields(word, word.lower(), word_shape(word))


_NER_PAD_LEFT = [_ner_fields(p, p, p) for p in _PAD_LEFT]
_NER_PAD_RIGHT = [_ner_fields(p, p, p) for p in _PAD_RIGHT]


@_cached
def _ner_tags(a: str, b: str, c: str, sh: str) -> tuple[str, ...]:
    """The tags ``a b c`` around a token of shape ``sh`` as its POS features."""
    return (
        f"p-1={a}", f"p0={b}", f"p+1={c}", f"p-1|p0={a}|{b}", f"p0|p+1={b}|{c}", f"p0|sh0={b}|{sh}",
    )  # fmt: skip


def ner_template(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """NER features (no gazetteer): lowercased words +-2 and the word as written, word bigrams,
    shapes +-2 with bigram/trigram and word/shape conjunctions, prefixes and suffixes up to 4
    letters (also of the neighbours), token length, capitalisation in and out of first position,
    digit and hyphen flags, and POS +-1 (with POS/shape) where a POS column exists."""
    ents = [*_NER_PAD_LEFT, *map(_ner_word, tokens), *_NER_PAD_RIGHT]
    pos = columns.get("pos")
    if pos is None:
        tags: Iterable[tuple[str, ...]] = repeat(())
    else:
        t = _padded_tags(pos, len(tokens))
        tags = map(_ner_tags, t[1:], t[2:], t[3:], map(_second, ents[2:]))
    feats: list[list[str]] = []
    rest = 17  # the first token's affixes and flags, then everyone else's
    for a, b, e, d, g, pf in zip(ents, ents[1:], ents[2:], ents[3:], ents[4:], tags, strict=False):
        lb, lw, ld = b[0], e[0], d[0]
        sb, s0, sd = b[1], e[1], d[1]
        feats.append([
            "b", a[2], b[3], e[4], d[5], g[6], e[7],
            f"w-1|w0={lb}|{lw}", f"w0|w+1={lw}|{ld}",
            a[8], b[9], e[10], d[11], g[12],
            f"sh-1|sh0={sb}|{s0}", f"sh0|sh+1={s0}|{sd}", f"sh-1|sh0|sh+1={sb}|{s0}|{sd}",
            f"w-1|sh0={lb}|{s0}", f"sh0|w+1={s0}|{ld}", f"sh-1|w0={sb}|{lw}",
            f"w0|sh+1={lw}|{sd}",
            e[16], b[13], b[14], d[15], *e[rest], *pf,
        ])  # fmt: skip
        rest = 18
    return feats


# --- the same templates as data, for batch encoding (cwal/features/_batch.py) --------------------
# Slot order and fields mirror the templates above exactly (tests/test_features_speed_equality.py).
_WORDS_2 = [(None, (W(-2, 2),)), (None, (W(-1, 3),)), (None, (W(0, 4),)), (None, (W(1, 5),)),
            (None, (W(2, 6),))]  # fmt: skip
CHUNK_SPEC = BatchSpec(
    _chunk_word, [*_CHUNK_PAD_LEFT, *_CHUNK_PAD_RIGHT],
    [
        ("b", ()), *_WORDS_2,
        ("w-2|w-1", (W(-2, 0), W(-1, 0))), ("w-1|w0", (W(-1, 0), W(0, 0))),
        ("w0|w+1", (W(0, 0), W(1, 0))), ("w+1|w+2", (W(1, 0), W(2, 0))),
        (None, (W(0, 7),)), ("sh-1|sh0", (W(-1, 1), W(0, 1))), ("sh0|sh+1", (W(0, 1), W(1, 1))),
        (None, (W(0, 8),)), (None, (W(0, 9),)), (None, (W(0, 10),)), (None, (W(0, 11),)),
    ],
    None,
    [
        ("p-2", (T(-2),)), ("p-1", (T(-1),)), ("p0", (T(0),)), ("p+1", (T(1),)), ("p+2", (T(2),)),
        ("p-2|p-1", (T(-2), T(-1))), ("p-1|p0", (T(-1), T(0))), ("p0|p+1", (T(0), T(1))),
        ("p+1|p+2", (T(1), T(2))),
        ("p-2|p-1|p0", (T(-2), T(-1), T(0))), ("p-1|p0|p+1", (T(-1), T(0), T(1))),
        ("p0|p+1|p+2", (T(0), T(1), T(2))),
        ("w0|p0", (W(0, 0), T(0))), ("w-1|p0", (W(-1, 0), T(0))), ("w+1|p0", (W(1, 0), T(0))),
        ("w-1|p-1", (W(-1, 0), T(-1))), ("w+1|p+1", (W(1, 0), T(1))),
        ("w0|p-1", (W(0, 0), T(-1))), ("w0|p+1", (W(0, 0), T(1))),
        ("p0|sh0", (T(0), W(0, 1))), ("p0|s3", (T(0), W(0, 12))),
    ],
)  # fmt: skip
NER_SPEC = BatchSpec(
    _ner_word, [*_NER_PAD_LEFT, *_NER_PAD_RIGHT],
    [
        ("b", ()), *_WORDS_2, (None, (W(0, 7),)),
        ("w-1|w0", (W(-1, 0), W(0, 0))), ("w0|w+1", (W(0, 0), W(1, 0))),
        (None, (W(-2, 8),)), (None, (W(-1, 9),)), (None, (W(0, 10),)), (None, (W(1, 11),)),
        (None, (W(2, 12),)),
        ("sh-1|sh0", (W(-1, 1), W(0, 1))), ("sh0|sh+1", (W(0, 1), W(1, 1))),
        ("sh-1|sh0|sh+1", (W(-1, 1), W(0, 1), W(1, 1))),
        ("w-1|sh0", (W(-1, 0), W(0, 1))), ("sh0|w+1", (W(0, 1), W(1, 0))),
        ("sh-1|w0", (W(-1, 1), W(0, 0))), ("w0|sh+1", (W(0, 0), W(1, 1))),
        (None, (W(0, 16),)), (None, (W(-1, 13),)), (None, (W(-1, 14),)), (None, (W(1, 15),)),
    ],
    (17, 18),
    [
        ("p-1", (T(-1),)), ("p0", (T(0),)), ("p+1", (T(1),)), ("p-1|p0", (T(-1), T(0))),
        ("p0|p+1", (T(0), T(1))), ("p0|sh0", (T(0), W(0, 1))),
    ],
)  # fmt: skip
_SPECS = {chunk_template: CHUNK_SPEC, ner_template: NER_SPEC}

_CACHES = (_shape_strings, _chunk_word, _ner_word, _ner_tags)


def clear_caches() -> None:
    """Empty the templates' word and tag caches (bounded anyway; for benchmarks and tests)."""
    for cache in _CACHES:
        cache.cache_clear()


Template = Callable[[Sequence[str], dict[str, Sequence[str]]], list[list[str]]]
TEMPLATES: dict[str, Template] = {"chunk": chunk_template, "ner": ner_template}


def get_template(name: str) -> Template:
    """Look a template up by name (``chunk`` or ``ner``)."""
    try:
        return TEMPLATES[name]
    except KeyError:
        raise ValueError(
            f"unknown feature template {name!r}; choose one of {sorted(TEMPLATES)}"
        ) from None


class FeatureIndex:
    """Maps feature strings to dense ids. Grows while not frozen; a frozen index drops unseen
    strings, so prediction never adds weights."""

    def __init__(
        self,
        template: str = "chunk",
        strings: Iterable[str] = (),
        clusters: WordClusters | None = None,
        documents: bool = False,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.template = template
        self.documents = bool(documents)
        self.lexicon = lexicon
        self._fn = get_template(template)
        self._spec = _SPECS.get(self._fn)
        self.clusters: WordClusters | None = None
        self._ids: dict[str, int] = {}
        self.frozen = False
        if clusters is not None:
            self.set_clusters(clusters)
        for s in strings:
            self._ids.setdefault(s, len(self._ids))

    def set_clusters(self, clusters: WordClusters) -> None:
        """Add word cluster features to the template of this still empty index (features are
        numbered as they come: clusters added later would change what the ids mean)."""
        if self._ids or self.clusters is not None:
            raise ValueError("word clusters go on an empty index without clusters")
        self.clusters = clusters
        if self._spec is not None:
            self._spec, self._fn = with_clusters(self._spec, self._fn, clusters)

    @property
    def template_fn(self) -> Template:
        """The token template this index encodes with (word clusters included)."""
        return self._fn

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def strings(self) -> list[str]:
        """Feature strings in id order (what a model file stores)."""
        return list(self._ids)

    def encode_pruned(self, sentences: Iterable[Sentence], min_count: int) -> Encoded:
        """Build an empty index from ``sentences`` keeping only features seen at least
        ``min_count`` times, freeze it, and return the sentences encoded under it (one pass)."""
        if self._ids:
            raise ValueError("encode_pruned builds a fresh index; this one already has features")
        enc = self._encode(sentences, True, min_count)
        keep = np.bincount(enc.feat_ids, minlength=len(self._ids)) >= min_count
        self.frozen = True
        if keep.all():  # the built-in templates left out the rare features already
            return enc
        new_id = (np.cumsum(keep) - 1).astype(np.int32)
        kept = (f for f, k in zip(self._ids, keep.tolist(), strict=True) if k)
        self._ids = {f: j for j, f in enumerate(kept)}
        mask = keep[enc.feat_ids]
        kept_before = np.concatenate([[0], np.cumsum(mask)]).astype(np.int64)
        out = Encoded(new_id[enc.feat_ids[mask]], kept_before[enc.tok_offsets], enc.sent_offsets)
        del enc, mask, kept_before
        release_heap(out.n_tokens)  # the unpruned index's strings
        return out

    def token_features(self, sentence: Sentence) -> list[list[str]]:
        """The template's feature strings of each token (whether or not the index knows them);
        document features (``documents``) from the sentence alone."""
        feats = self._fn(sentence.tokens, sentence.columns)
        if self.documents:
            for f, extra in zip(feats, _documents.features([sentence])[0], strict=True):
                f += extra
        if self.lexicon is not None:
            for p, f in enumerate(feats):
                f += [f"{k}={names[c[p]]}" for k, c, names in self.lexicon.slots([sentence])
                      if c[p] >= 0]  # fmt: skip
        return feats

    def encode(self, sentences: Iterable[Sentence], grow: bool | None = None) -> Encoded:
        """Encode sentences as one batch. ``grow`` (default: not frozen) admits new features."""
        return self._encode(sentences, (not self.frozen) if grow is None else grow)

    def _encode(self, sentences: Iterable[Sentence], grow: bool, min_count: int = 1) -> Encoded:
        """``encode``; with ``min_count`` > 1 features seen fewer times may be left out (the
        built-in templates skip them before building their strings; see ``encode_pruned``).
        Document features (``documents``) follow each token's template features."""
        sentences = list(sentences)
        enc = self._encode_template(sentences, grow, min_count)
        if self.documents:
            enc = with_slots(enc, _documents.slots(sentences), self._ids, grow)
        if self.lexicon is not None:
            enc = with_slots(enc, self.lexicon.slots(sentences), self._ids, grow)
        release_heap(enc.n_tokens)
        return enc

    def _encode_template(self, sentences: list[Sentence], grow: bool, min_count: int) -> Encoded:
        spec = self._spec
        if spec is not None:
            done = encode_batch(spec, sentences, self._ids, grow, min_count)
            if done is not None:
                return Encoded(*done)
        ids = self._ids
        get, add = ids.get, ids.setdefault
        feat = array("i")  # compact: one int32 per feature occurrence
        tok_off = [0]
        sent_off = [0]
        for s in sentences:
            for tok in self._fn(s.tokens, s.columns):
                if grow:
                    feat.extend([add(f, len(ids)) for f in tok])
                else:
                    feat.extend([j for j in map(get, tok) if j is not None])
                tok_off.append(len(feat))
            sent_off.append(len(tok_off) - 1)
        return Encoded(
            np.frombuffer(feat, dtype=np.int32) if feat else np.zeros(0, np.int32),
            np.asarray(tok_off, dtype=np.int64),
            np.asarray(sent_off, dtype=np.int64),
        )
