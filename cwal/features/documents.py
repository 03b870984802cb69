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
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _case(word: str) -> str:
    if word.isupper() and len(word) > 1:
        return "U"
    if word[:1].isupper():
        return "C"
    if word[:1].islower():
        return "L"
    return "O"


def _runs(cases: list[str]) -> list[str]:
    """The place of each token in runs of capitalised (``C``/``U``) tokens, ``""`` outside (a
    sentence's first word is in none: sentence case makes it capitalised anyway)."""
    out = [""] * len(cases)
    i, n = 1, len(cases)
    while i < n:
        if cases[i] not in ("C", "U"):
            i += 1
            continue
        j = i
        while j + 1 < n and cases[j + 1] in ("C", "U"):
            j += 1
        if i == j:
            out[i] = "S"
        else:
            out[i], out[j] = "B", "E"
            for k in range(i + 1, j):
                out[k] = "I"
        i = j + 1
    return out


def features(sentences: Sequence[Sentence], block: int = BLOCK) -> list[list[list[str]]]:
    """The document features of every token of ``sentences`` (per sentence, per token)."""
    out: list[list[list[str]]] = []
    for doc in groups(sentences, block):
        out += _document([sentences[i].tokens for i in doc])
    return out


def _document(sents: list[Sequence[str]]) -> list[list[list[str]]]:
    lowered = [[w.lower() for w in s] for s in sents]
    cases = [[_case(w) for w in s] for s in sents]
    places = [_runs(c) for c in cases]
    # per word: count of each way of writing it (C/L/U mid-sentence, "-" at a start) and of each
    # run place; the first capitalised mid-sentence occurrence's (sentence, token) and previous word
    ways: dict[str, dict[str, int]] = {}
    seqs: dict[str, dict[str, int]] = {}
    first: dict[str, tuple[int, int, str]] = {}
    for b, (lw_s, c_s, p_s) in enumerate(zip(lowered, cases, places, strict=True)):
        for i, (lw, c, p) in enumerate(zip(lw_s, c_s, p_s, strict=True)):
            way = "-" if i == 0 else c
            d = ways.setdefault(lw, {})
            d[way] = d.get(way, 0) + 1
            if p:
                d = seqs.setdefault(lw, {})
                d[p] = d.get(p, 0) + 1
            if i > 0 and c in ("C", "U") and lw not in first:
                first[lw] = (b, i, lw_s[i - 1])
    out: list[list[list[str]]] = []
    for b, (lw_s, c_s, p_s) in enumerate(zip(lowered, cases, places, strict=True)):
        feats: list[list[str]] = []
        for i, (lw, c, p) in enumerate(zip(lw_s, c_s, p_s, strict=True)):
            if c == "O":
                feats.append([])
                continue
            own = "-" if i == 0 else c
            d = ways[lw]
            seen = "".join(w for w in "CLU" if d.get(w, 0) - (own == w) > 0)
            if not seen:
                seen = "-" if d.get("-", 0) - (own == "-") > 0 else "0"
            f = [f"dcase={seen}", f"dcase|own={seen}|{c}{'1' if i == 0 else ''}"]
            s = seqs.get(lw)
            if s:
                others = "".join(q for q in "SBIE" if s.get(q, 0) - (p == q) > 0)
                if others:
                    f.append(f"dseq={others}")
            at = first.get(lw)
            if at is not None and (at[0], at[1]) != (b, i):
                f.append(f"dprev={at[2]}")
            feats.append(f)
        out.append(feats)
    return out
