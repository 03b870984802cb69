"""Tokens placed in text: character offsets, and tags <-> labeled character spans.

Span formats (raw text, Prodigy, doccano, Label Studio, brat, spaCy, CoNLL-U) keep the text a
sentence came from: ``meta["text"]`` and ``meta["offsets"]``, the ``[start, end)`` of each token
in that text, counted in code points (Python string indices, as Prodigy, doccano, Label Studio and
spaCy count; line ends are LF). A sentence without them (from CoNLL or token JSONL) is laid out as
its tokens joined by single spaces, so every sentence can be written in every format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cwal.io import schemes
from cwal.io.sentence import Sentence
from cwal.io.source import token_problem

TEXT = "text"
OFFSETS = "offsets"
CONFIDENCE = "confidence"  # a per-token column of predictions, "0.9731" strings

Offsets = list[tuple[int, int]]
CharSpan = tuple[int, int, str]  # start, end (exclusive), label


def layout(sent: Sentence) -> tuple[str, Offsets]:
    """The sentence's text and each token's ``(start, end)`` in it."""
    text = sent.meta.get(TEXT)
    offsets = sent.meta.get(OFFSETS)
    if isinstance(text, str) and isinstance(offsets, list) and len(offsets) == len(sent.tokens):
        return text, [(int(s), int(e)) for s, e in offsets]
    out: Offsets = []
    pos = 0
    for tok in sent.tokens:
        out.append((pos, pos + len(tok)))
        pos += len(tok) + 1
    return " ".join(sent.tokens), out


def align(text: str, tokens: Sequence[str], start: int = 0) -> Offsets | None:
    """The offsets of ``tokens`` found in order in ``text`` with only whitespace between them
    (None when they are not its words): how CoNLL-U or spaCy JSON recover a sentence's text."""
    out: Offsets = []
    pos = start
    for tok in tokens:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not text.startswith(tok, pos):
            return None
        out.append((pos, pos + len(tok)))
        pos += len(tok)
    return out


def chunk_spans(tags: Sequence[str], scheme: str | None = None) -> list[schemes.Span]:
    """The ``(type, first, end)`` token chunks of ``tags``: under ``scheme`` when given, else read
    leniently (a prefix opens or closes a chunk if it does in any scheme, as conlleval reads)."""
    if scheme is not None:
        return schemes.spans(tags, scheme)
    return schemes.lenient_spans(tags)


def char_spans(sent: Sentence, scheme: str | None = None) -> list[tuple[int, int, str, int, int]]:
    """``(start, end, label, first_token, end_token)`` of each chunk of a tagged sentence, in
    its laid-out text (empty when the sentence has no tags)."""
    if sent.tags is None:
        return []
    _, offsets = layout(sent)
    return [
        (offsets[a][0], offsets[b - 1][1], typ, a, b)
        for typ, a, b in chunk_spans(sent.tags, scheme)
    ]


def tags_from_char_spans(
    spans: Sequence[CharSpan], offsets: Offsets, text: str, scheme: str = "IOB2"
) -> list[str]:
    """The tags of tokens at ``offsets`` that hold the character ``spans`` under ``scheme``.

    A span must start at a token's start and end at a token's end (leading or trailing spaces of
    the span are ignored); otherwise, or for overlapping spans, ValueError says which span."""
    starts = {s: i for i, (s, _) in enumerate(offsets)}
    ends = {e: i for i, (_, e) in enumerate(offsets)}
    chunks: list[schemes.Span] = []
    for start, end, label in sorted(spans, key=lambda s: (s[0], s[1])):
        s0, e0 = start, end
        while s0 < e0 and text[s0 : s0 + 1].isspace():
            s0 += 1
        while e0 > s0 and text[e0 - 1 : e0].isspace():
            e0 -= 1
        shown = f"span {start}-{end} {label!r} ({text[start:end]!r})"
        if s0 not in starts or e0 not in ends or ends[e0] < starts[s0]:
            raise ValueError(f"{shown} does not start and end at token boundaries")
        a, b = starts[s0], ends[e0] + 1
        if chunks and chunks[-1][2] > a:
            raise ValueError(f"{shown} overlaps the span before it")
        chunks.append((label, a, b))
    return schemes.from_spans(chunks, len(offsets), scheme)


def placed(
    text: str,
    pieces: Sequence[tuple[str, int, int]],
    tags: Sequence[str] | None,
    meta: dict[str, Any] | None = None,
    line: int = 0,
) -> tuple[Sentence | None, str | None]:
    """A sentence from tokens placed in ``text`` (``(token, start, end)``), or the problem.

    Whitespace-only tokens (spaCy and Prodigy keep ``"\\n\\n"`` as a token) are layout, not
    words: they are dropped when untagged. Offsets are stored relative to the sentence's text."""
    tokens: list[str] = []
    offsets: Offsets = []
    kept: list[str] = []
    for k, (tok, s, e) in enumerate(pieces):
        if tok.strip() == "":
            if tags is not None and tags[k] != schemes.OUTSIDE:
                return None, f"whitespace token {tok!r} at position {k} has the tag {tags[k]!r}"
            continue
        problem = token_problem(tok)
        if problem is not None:
            return None, f"{problem} at position {k}"
        tokens.append(tok)
        offsets.append((s, e))
        if tags is not None:
            kept.append(tags[k])
    if not tokens:
        return None, "no tokens"
    base = offsets[0][0]
    sub = text[base : offsets[-1][1]]
    meta = {**(meta or {}), TEXT: sub, OFFSETS: [[s - base, e - base] for s, e in offsets]}
    if base:
        meta.setdefault("start", base)
    return Sentence(tokens, kept if tags is not None else None, {}, meta, line), None
