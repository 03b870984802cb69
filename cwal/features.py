"""Feature templates and the feature index: sentences become integer arrays.

A template turns each token of a sentence into feature strings; a ``FeatureIndex`` maps those
strings to dense integer ids, so weights are numpy arrays indexed by feature x label.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cwal.io.sentence import Sentence

_PAD_LEFT = ("<s-2>", "<s-1>")
_PAD_RIGHT = ("</s+1>", "</s+2>")


def _window(seq: Sequence[str]) -> list[str]:
    return [*_PAD_LEFT, *seq, *_PAD_RIGHT]


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


def chunk_template(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """Chunking features: Sha & Pereira (2003) -- words and POS tags in a +-2 window, POS bigrams
    and trigrams, word bigrams, word/POS conjunctions -- plus word shapes, suffixes of 2-4
    letters, a 3-letter prefix, POS/shape and POS/suffix conjunctions (dev-tuned additions)."""
    w = _window([t.lower() for t in tokens])
    sh = _window([word_shape(t) for t in tokens])
    pos = columns.get("pos")
    t = _window(pos) if pos is not None else None
    feats: list[list[str]] = []
    for c in range(2, len(tokens) + 2):
        lw = w[c]
        f = [
            "b",
            f"w-2={w[c - 2]}",
            f"w-1={w[c - 1]}",
            f"w0={lw}",
            f"w+1={w[c + 1]}",
            f"w+2={w[c + 2]}",
            f"w-2|w-1={w[c - 2]}|{w[c - 1]}",
            f"w-1|w0={w[c - 1]}|{lw}",
            f"w0|w+1={lw}|{w[c + 1]}",
            f"w+1|w+2={w[c + 1]}|{w[c + 2]}",
            f"sh0={sh[c]}",
            f"sh-1|sh0={sh[c - 1]}|{sh[c]}",
            f"sh0|sh+1={sh[c]}|{sh[c + 1]}",
            f"s2={lw[-2:]}",
            f"s3={lw[-3:]}",
            f"s4={lw[-4:]}",
            f"pre3={lw[:3]}",
        ]
        if t is not None:
            p0 = t[c]
            f += [
                f"p-2={t[c - 2]}",
                f"p-1={t[c - 1]}",
                f"p0={p0}",
                f"p+1={t[c + 1]}",
                f"p+2={t[c + 2]}",
                f"p-2|p-1={t[c - 2]}|{t[c - 1]}",
                f"p-1|p0={t[c - 1]}|{p0}",
                f"p0|p+1={p0}|{t[c + 1]}",
                f"p+1|p+2={t[c + 1]}|{t[c + 2]}",
                f"p-2|p-1|p0={t[c - 2]}|{t[c - 1]}|{p0}",
                f"p-1|p0|p+1={t[c - 1]}|{p0}|{t[c + 1]}",
                f"p0|p+1|p+2={p0}|{t[c + 1]}|{t[c + 2]}",
                f"w0|p0={lw}|{p0}",
                f"w-1|p0={w[c - 1]}|{p0}",
                f"w+1|p0={w[c + 1]}|{p0}",
                f"w-1|p-1={w[c - 1]}|{t[c - 1]}",
                f"w+1|p+1={w[c + 1]}|{t[c + 1]}",
                f"w0|p-1={lw}|{t[c - 1]}",
                f"w0|p+1={lw}|{t[c + 1]}",
                f"p0|sh0={p0}|{sh[c]}",
                f"p0|s3={p0}|{lw[-3:]}",
            ]
        feats.append(f)
    return feats


def ner_template(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """NER features (no gazetteer): lowercased words +-2 and the word as written, word bigrams,
    shapes +-2 with bigram/trigram and word/shape conjunctions, prefixes and suffixes up to 4
    letters (also of the neighbours), token length, capitalisation in and out of first position,
    digit and hyphen flags, and POS +-1 (with POS/shape) where a POS column exists."""
    n = len(tokens)
    low = _window([t.lower() for t in tokens])
    sh = _window([word_shape(t) for t in tokens])
    pos = columns.get("pos")
    t = _window(pos) if pos is not None else None
    feats: list[list[str]] = []
    for i in range(n):
        c = i + 2
        word = tokens[i]
        lw = low[c]
        f = [
            "b",
            f"w-2={low[c - 2]}",
            f"w-1={low[c - 1]}",
            f"w0={lw}",
            f"w+1={low[c + 1]}",
            f"w+2={low[c + 2]}",
            f"W0={word}",
            f"w-1|w0={low[c - 1]}|{lw}",
            f"w0|w+1={lw}|{low[c + 1]}",
            f"sh-2={sh[c - 2]}",
            f"sh-1={sh[c - 1]}",
            f"sh0={sh[c]}",
            f"sh+1={sh[c + 1]}",
            f"sh+2={sh[c + 2]}",
            f"sh-1|sh0={sh[c - 1]}|{sh[c]}",
            f"sh0|sh+1={sh[c]}|{sh[c + 1]}",
            f"sh-1|sh0|sh+1={sh[c - 1]}|{sh[c]}|{sh[c + 1]}",
            f"w-1|sh0={low[c - 1]}|{sh[c]}",
            f"sh0|w+1={sh[c]}|{low[c + 1]}",
            f"sh-1|w0={sh[c - 1]}|{lw}",
            f"w0|sh+1={lw}|{sh[c + 1]}",
            f"len={min(len(word), 8)}",
            f"suf3-1={low[c - 1][-3:]}",
            f"pre3-1={low[c - 1][:3]}",
            f"suf3+1={low[c + 1][-3:]}",
        ]
        for k in range(1, min(len(lw), 4) + 1):
            f.append(f"pre{k}={lw[:k]}")
            f.append(f"suf{k}={lw[-k:]}")
        if i == 0:
            f.append("first")
        if word[:1].isupper():
            f.append("cap&first" if i == 0 else "cap&mid")
            f.append("cap")
        if word.isupper():
            f.append("allcap")
        if any(ch.isdigit() for ch in word):
            f.append("digit")
            if word.isdigit():
                f.append("alldigit")
        if "-" in word:
            f.append("hyphen")
        if t is not None:
            f += [
                f"p-1={t[c - 1]}",
                f"p0={t[c]}",
                f"p+1={t[c + 1]}",
                f"p-1|p0={t[c - 1]}|{t[c]}",
                f"p0|p+1={t[c]}|{t[c + 1]}",
                f"p0|sh0={t[c]}|{sh[c]}",
            ]
        feats.append(f)
    return feats


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


@dataclass
class Encoded:
    """A sentence (or a batch of sentences) as integer arrays.

    Token p's feature ids are ``feat_ids[tok_offsets[p]:tok_offsets[p + 1]]``; in a batch,
    sentence b spans tokens ``sent_offsets[b]:sent_offsets[b + 1]``.
    """

    feat_ids: np.ndarray
    tok_offsets: np.ndarray
    sent_offsets: np.ndarray

    @property
    def n_tokens(self) -> int:
        return len(self.tok_offsets) - 1

    @property
    def n_sentences(self) -> int:
        return len(self.sent_offsets) - 1

    def sentence(self, b: int) -> Encoded:
        """The b-th sentence of a batch as its own Encoded (offsets rebased to 0)."""
        t0, t1 = int(self.sent_offsets[b]), int(self.sent_offsets[b + 1])
        f0, f1 = int(self.tok_offsets[t0]), int(self.tok_offsets[t1])
        return Encoded(
            self.feat_ids[f0:f1].copy(),
            self.tok_offsets[t0 : t1 + 1] - f0,
            np.array([0, t1 - t0], dtype=np.int64),
        )


class FeatureIndex:
    """Maps feature strings to dense ids. Grows while not frozen; a frozen index drops unseen
    strings, so prediction never adds weights."""

    def __init__(self, template: str = "chunk", strings: Iterable[str] = ()) -> None:
        self.template = template
        self._fn = get_template(template)
        self._ids: dict[str, int] = {}
        self.frozen = False
        for s in strings:
            self._ids.setdefault(s, len(self._ids))

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
        enc = self.encode(sentences, grow=True)
        keep = np.bincount(enc.feat_ids, minlength=len(self._ids)) >= min_count
        new_id = (np.cumsum(keep) - 1).astype(np.int32)
        kept = (f for f, k in zip(self._ids, keep.tolist(), strict=True) if k)
        self._ids = {f: j for j, f in enumerate(kept)}
        self.frozen = True
        mask = keep[enc.feat_ids]
        kept_before = np.concatenate([[0], np.cumsum(mask)]).astype(np.int64)
        return Encoded(new_id[enc.feat_ids[mask]], kept_before[enc.tok_offsets], enc.sent_offsets)

    def token_features(self, sentence: Sentence) -> list[list[str]]:
        """The template's feature strings of each token (whether or not the index knows them)."""
        return self._fn(sentence.tokens, sentence.columns)

    def encode(self, sentences: Iterable[Sentence], grow: bool | None = None) -> Encoded:
        """Encode sentences as one batch. ``grow`` (default: not frozen) admits new features."""
        grow = (not self.frozen) if grow is None else grow
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
