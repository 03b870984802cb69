"""A plain reference for the feature templates: each feature spelled out per token from the
template's definition, with no caches (the straightforward implementation the cached templates in
``cwal/features.py`` replaced). ``tests/test_features_speed_equality.py`` checks that the templates
equal it string for string; ``bench/features.py`` times the templates against it.
"""

from __future__ import annotations

from collections.abc import Sequence

PAD_LEFT = ("<s-2>", "<s-1>")
PAD_RIGHT = ("</s+1>", "</s+2>")


def reference_shape(word: str) -> str:
    """Each character as X (upper), x (lower), d (digit) or itself; runs collapsed to one."""
    classes = [
        "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c for c in word
    ]
    return "".join(c for i, c in enumerate(classes) if i == 0 or classes[i - 1] != c)


def _window(seq: Sequence[str]) -> list[str]:
    return [*PAD_LEFT, *seq, *PAD_RIGHT]


OFFSETS = {-2: "-2", -1: "-1", 0: "0", 1: "+1", 2: "+2"}


def reference_chunk(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """The chunk template, one token at a time."""
    w = _window([t.lower() for t in tokens])
    sh = _window([reference_shape(t) for t in tokens])
    t = _window(columns["pos"]) if "pos" in columns else None
    out = []
    for c in range(2, len(tokens) + 2):
        f = ["b"]
        f += [f"w{o}={w[c + k]}" for k, o in OFFSETS.items()]
        f += [f"w-2|w-1={w[c - 2]}|{w[c - 1]}", f"w-1|w0={w[c - 1]}|{w[c]}"]
        f += [f"w0|w+1={w[c]}|{w[c + 1]}", f"w+1|w+2={w[c + 1]}|{w[c + 2]}"]
        f += [f"sh0={sh[c]}", f"sh-1|sh0={sh[c - 1]}|{sh[c]}", f"sh0|sh+1={sh[c]}|{sh[c + 1]}"]
        f += [f"s2={w[c][-2:]}", f"s3={w[c][-3:]}", f"s4={w[c][-4:]}", f"pre3={w[c][:3]}"]
        if t is not None:
            f += [f"p{o}={t[c + k]}" for k, o in OFFSETS.items()]
            f += [f"p-2|p-1={t[c - 2]}|{t[c - 1]}", f"p-1|p0={t[c - 1]}|{t[c]}"]
            f += [f"p0|p+1={t[c]}|{t[c + 1]}", f"p+1|p+2={t[c + 1]}|{t[c + 2]}"]
            f += [f"p-2|p-1|p0={t[c - 2]}|{t[c - 1]}|{t[c]}"]
            f += [f"p-1|p0|p+1={t[c - 1]}|{t[c]}|{t[c + 1]}"]
            f += [f"p0|p+1|p+2={t[c]}|{t[c + 1]}|{t[c + 2]}"]
            f += [f"w0|p0={w[c]}|{t[c]}", f"w-1|p0={w[c - 1]}|{t[c]}"]
            f += [f"w+1|p0={w[c + 1]}|{t[c]}", f"w-1|p-1={w[c - 1]}|{t[c - 1]}"]
            f += [f"w+1|p+1={w[c + 1]}|{t[c + 1]}", f"w0|p-1={w[c]}|{t[c - 1]}"]
            f += [
                f"w0|p+1={w[c]}|{t[c + 1]}",
                f"p0|sh0={t[c]}|{sh[c]}",
                f"p0|s3={t[c]}|{w[c][-3:]}",
            ]
        out.append(f)
    return out


def reference_ner(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
    """The ner template, one token at a time."""
    w = _window([t.lower() for t in tokens])
    sh = _window([reference_shape(t) for t in tokens])
    t = _window(columns["pos"]) if "pos" in columns else None
    out = []
    for i, word in enumerate(tokens):
        c = i + 2
        f = ["b"]
        f += [f"w{o}={w[c + k]}" for k, o in OFFSETS.items()]
        f += [f"W0={word}", f"w-1|w0={w[c - 1]}|{w[c]}", f"w0|w+1={w[c]}|{w[c + 1]}"]
        f += [f"sh{o}={sh[c + k]}" for k, o in OFFSETS.items()]
        f += [f"sh-1|sh0={sh[c - 1]}|{sh[c]}", f"sh0|sh+1={sh[c]}|{sh[c + 1]}"]
        f += [f"sh-1|sh0|sh+1={sh[c - 1]}|{sh[c]}|{sh[c + 1]}"]
        f += [f"w-1|sh0={w[c - 1]}|{sh[c]}", f"sh0|w+1={sh[c]}|{w[c + 1]}"]
        f += [f"sh-1|w0={sh[c - 1]}|{w[c]}", f"w0|sh+1={w[c]}|{sh[c + 1]}"]
        f += [f"len={min(len(word), 8)}", f"suf3-1={w[c - 1][-3:]}", f"pre3-1={w[c - 1][:3]}"]
        f += [f"suf3+1={w[c + 1][-3:]}"]
        for k in range(1, min(len(w[c]), 4) + 1):
            f += [f"pre{k}={w[c][:k]}", f"suf{k}={w[c][-k:]}"]
        if i == 0:
            f.append("first")
        if word[:1].isupper():
            f += ["cap&first" if i == 0 else "cap&mid", "cap"]
        if word.isupper():
            f.append("allcap")
        if any(ch.isdigit() for ch in word):
            f.append("digit")
            if word.isdigit():
                f.append("alldigit")
        if "-" in word:
            f.append("hyphen")
        if t is not None:
            f += [f"p-1={t[c - 1]}", f"p0={t[c]}", f"p+1={t[c + 1]}"]
            f += [f"p-1|p0={t[c - 1]}|{t[c]}", f"p0|p+1={t[c]}|{t[c + 1]}"]
            f += [f"p0|sh0={t[c]}|{sh[c]}"]
        out.append(f)
    return out


REFERENCE = {"chunk": reference_chunk, "ner": reference_ner}


def appended_ids(
    own: Sequence[Sequence[str]], extra: Sequence[Sequence[str]]
) -> tuple[list[list[int]], list[str]]:
    """The ids an index gives each token's own strings followed by its extra strings, numbered by
    first appearance over the batch with every token's own strings first; and the strings in id
    order."""
    ids: dict[str, int] = {}
    for tok in [*own, *extra]:
        for f in tok:
            ids.setdefault(f, len(ids))
    rows = [[ids[f] for f in [*a, *b]] for a, b in zip(own, extra, strict=True)]
    return rows, list(ids)


def encoded_rows(enc) -> list[list[int]]:
    """An ``Encoded`` batch's feature ids, one list per token."""
    return [
        enc.feat_ids[enc.tok_offsets[p] : enc.tok_offsets[p + 1]].tolist()
        for p in range(enc.n_tokens)
    ]
