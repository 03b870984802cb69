"""Document-level features: how the same word is written elsewhere in its document.

A name is usually capitalised wherever it occurs, a common word only at the start of a sentence;
a sentence-initial ``Van`` or a word of an all-caps headline is ambiguous alone and rarely so
across its document (Chieu & Ng 2002's global features; Ratinov & Roth 2009's non-local ones).
For every token with a letter, from the *other* occurrences of its lowercased form in the same
document (label-independent; the tokens alone):

* ``dcase=``: which ways it is written elsewhere -- ``C`` capitalised inside a sentence, ``L``
  lower case, ``U`` all capitals; ``-`` when it occurs elsewhere only at sentence starts, ``0``
  when nowhere else -- alone and joined with the token's own case and whether it starts its
  sentence (``dcase|own=``);
* ``dseq=``: its places in runs of capitalised words elsewhere (``S`` alone, ``B``/``I``/``E``
  first, inside, last of a longer run);
* ``dprev=``: the lowercased word before its first capitalised occurrence inside a sentence in
  the document, when that is another occurrence (``mr.``, ``in``, ``de``: the context of the
  first mention).

A document is a run of consecutive sentences with the same ``meta["document"]`` (the CoNLL
reader numbers the ``-DOCSTART-`` documents; the app's sentences carry their document); text
without document marks falls back to blocks of ``BLOCK`` consecutive sentences, which in
newswire mostly stay within one article.

The features are computed over integer arrays (``slots``: one code per token and slot, the
strings of the codes) and merged into the encoded batch by ``cwal.features.encoded.with_slots``;
``features`` spells them out per token.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cwal.io.sentence import Sentence

BLOCK = 20  # sentences per pseudo-document where the text has no document marks


def groups(sentences: Sequence[Sentence], block: int = BLOCK) -> list[range]:
    """Index ranges of the documents of ``sentences``: runs of the same ``meta["document"]``;
    sentences without one form blocks of ``block`` consecutive sentences (at most)."""
    out: list[range] = []
    start = 0
    n = len(sentences)
    for i in range(1, n + 1):
        if i < n:
            a = sentences[i - 1].meta.get("document")
            b = sentences[i].meta.get("document")
            if a is None and b is None:
                if i - start < block:
                    continue
            elif a == b:
                continue
        out.append(range(start, i))
        start = i
    return out


_C, _L, _U, _O, _START = range(5)  # how a token is written; _START: any case, first in sentence
_LETTERS = "CLU"
_SEEN = [
    "0",
    *("".join(c for b, c in zip((1, 2, 4), _LETTERS, strict=True) if m & b) for m in range(1, 8)),
    "-",
]  # by code: 0 none, 1-7 a C/L/U mask, 8 starts only
_OWN = [c + f for c in _LETTERS for f in ("", "1")]  # by code: case * 2 + first in sentence
_PLACES = "SBIE"
_RUNS = ["".join(q for b, q in zip((1, 2, 4, 8), _PLACES, strict=True) if m & b)
         for m in range(16)]  # fmt: skip

Slot = tuple[str, np.ndarray, list[str]]  # (prefix, code per token or -1, string of each code)


def _case(word: str) -> int:
    if word.isupper() and len(word) > 1:
        return _U
    if word[:1].isupper():
        return _C
    if word[:1].islower():
        return _L
    return _O


def slots(sentences: Sequence[Sentence], block: int = BLOCK) -> list[Slot]:
    """The document features of every token of ``sentences`` as four slots (``dcase``,
    ``dcase|own``, ``dseq``, ``dprev``): a code per token (-1: the token has none) and the
    string of each code. A token's features are its slots' strings in that order."""
    lens = np.fromiter((len(s.tokens) for s in sentences), np.int64, len(sentences))
    n = int(lens.sum())
    ids: dict[str, int] = {}
    word_id = np.fromiter((ids.setdefault(w, len(ids)) for s in sentences for w in s.tokens),
                          np.int64, n)  # fmt: skip
    lowered: dict[str, int] = {}
    lw_of = np.fromiter((lowered.setdefault(w.lower(), len(lowered)) for w in ids),
                        np.int64, len(ids))  # fmt: skip
    case_of = np.fromiter(map(_case, ids), np.int64, len(ids))
    lw, case = lw_of[word_id], case_of[word_id]
    starts = np.cumsum(lens) - lens
    pos = np.arange(n) - np.repeat(starts, lens)
    doc = np.zeros(len(sentences), np.int64)
    for g, r in enumerate(groups(sentences, block)):
        doc[r.start : r.stop] = g
    doc = np.repeat(doc, lens)
    way = np.where(pos == 0, _START, case)
    cap = (pos > 0) & ((case == _C) | (case == _U))
    last = pos == np.repeat(lens, lens) - 1
    prev_cap = np.zeros(n, bool)
    prev_cap[1:] = cap[:-1] & (pos[1:] > 0)
    next_cap = np.zeros(n, bool)
    next_cap[:-1] = cap[1:] & ~last[:-1]
    place = np.where(cap, prev_cap * 2 + next_cap, -1)  # 0 S, 1 B, 3 I, 2 E (below)
    place = np.array([-1, 0, 1, 3, 2])[place + 1]
    _, k = np.unique(doc * (len(lowered) + 1) + lw, return_inverse=True)
    n_k = int(k.max()) + 1 if n else 0
    ways = np.bincount(k * 5 + way, minlength=n_k * 5).reshape(n_k, 5)
    mask = np.zeros(n, np.int64)
    for b, w in zip((1, 2, 4), (_C, _L, _U), strict=True):
        mask += b * ((ways[k, w] - (way == w)) > 0)
    seen = np.where(mask > 0, mask, np.where(ways[k, _START] - (way == _START) > 0, 8, 0))
    has = case != _O
    own = case.clip(0, 2) * 2 + (pos == 0)
    at = place >= 0
    runs = np.bincount(k[at] * 4 + place[at], minlength=n_k * 4).reshape(n_k, 4)
    rmask = np.zeros(n, np.int64)
    for q in range(4):
        rmask += (1 << q) * ((runs[k, q] - (place == q)) > 0)
    capped = np.flatnonzero(cap)
    first = np.full(n_k, -1, np.int64)
    uniq, where = np.unique(k[capped], return_index=True)
    first[uniq] = capped[where]
    mention = first[k]
    prev = np.where(has & (mention >= 0) & (mention != np.arange(n)), mention - 1, -1)
    words = list(lowered)
    return [
        ("dcase", np.where(has, seen, -1), _SEEN),
        ("dcase|own", np.where(has, seen * 6 + own, -1), [f"{a}|{b}" for a in _SEEN for b in _OWN]),
        ("dseq", np.where(has & (rmask > 0), rmask, -1), _RUNS),
        ("dprev", np.where(prev >= 0, lw[prev], -1), words),
    ]


def features(sentences: Sequence[Sentence], block: int = BLOCK) -> list[list[list[str]]]:
    """The document features of every token of ``sentences`` (per sentence, per token)."""
    found = slots(sentences, block)
    flat = [
        [f"{prefix}={strings[c]}" for prefix, codes, strings in found if (c := codes[p]) >= 0]
        for p in range(sum(len(s.tokens) for s in sentences))
    ]
    out, at = [], 0
    for s in sentences:
        out.append(flat[at : at + len(s.tokens)])
        at += len(s.tokens)
    return out
