"""Raw text documents: split into sentences and tokens by syntok, every token keeping its place.

Each sentence's ``meta`` holds its ``text``, the token ``offsets`` in it, ``start`` (the character
offset of the sentence in the document, line ends counted as one LF character whatever the file
used) and ``doc`` (the document id, the file's name). Paragraphs (blank-line separated) are read
one block at a time, so a large document streams.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Iterator

from cwal.io.sentence import Sentence
from cwal.io.source import MAX_LINE, PathLike, Source, as_source, iter_lines, token_problem
from cwal.io.spans import placed

BLOCK_CHARS = 1 << 16  # a paragraph block is tokenized once it reaches this size
_ATTACHED = re.compile(r"\w[,;:]$|\w[.!?][\"'”’)]?$")


def read_raw(
    path: PathLike | Source,
    encoding: str | None = None,
    *,
    document: str | None = None,
    max_line: int = MAX_LINE,
) -> Iterator[Sentence]:
    """Stream the sentences of a raw text document (unlabeled; ``tags`` None).

    ``document`` is the id kept in ``meta["doc"]`` (default: the file's base name). A token
    ``cwal.io.source.token_problem`` refuses (a control character) raises ``CorpusError`` with
    its line."""
    source = as_source(path)
    doc = document or os.path.basename(source.name) or source.name
    return _read(source, encoding, doc, max_line)


def _read(source: Source, encoding: str | None, doc: str, max_line: int) -> Iterator[Sentence]:
    from syntok import segmenter

    lines: list[str] = []
    first_line = 1
    block_start = 0  # offset of the block in the document
    size = 0
    offset = 0
    seen = False
    lineno = 0

    def flush() -> Iterator[Sentence]:
        text = "\n".join(lines)
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        for paragraph in segmenter.analyze(text):
            for tokens in paragraph:
                pieces = [(text[t.offset : t.offset + len(t.value)], t.offset) for t in tokens]
                pieces = [(tok, s, s + len(tok)) for tok, s in pieces if tok]
                if not pieces:
                    continue
                for tok, s, _ in pieces:
                    problem = token_problem(tok)
                    if problem is not None:
                        line = first_line + bisect.bisect_right(starts, s) - 1
                        raise source.error(line, f"raw text: {problem}")
                line = first_line + bisect.bisect_right(starts, pieces[0][1]) - 1
                sent, _ = placed(text, pieces, None, {"doc": doc}, line)
                if sent is not None:
                    sent.meta["start"] = block_start + pieces[0][1]
                    yield sent

    for lineno, text in iter_lines(source, encoding, max_line):
        if not lines:
            first_line, block_start = lineno, offset
        lines.append(text)
        size += len(text) + 1
        offset += len(text) + 1
        if not text.strip() and size >= BLOCK_CHARS:
            for sent in flush():
                seen = True
                yield sent
            lines, size = [], 0
    if lines:
        for sent in flush():
            seen = True
            yield sent
    if not seen:
        raise source.error(max(lineno, 1), "no text (the document is empty or blank)")


def looks_raw(lines: list[str]) -> bool:
    """True when text lines look like running text rather than space-separated tokens: at least
    a third of them have punctuation attached to a word (``said,``  ``York.``), which a tokenizer
    would have split off."""
    rows = [line.split() for line in lines if line.strip()]
    if not rows:
        return False
    attached = sum(1 for row in rows if any(_ATTACHED.search(tok) for tok in row))
    return attached * 3 >= len(rows)


def tokenize(text: str, cuts: Iterable[int] = ()) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` of ``text`` as one unit (syntok's tokens over all its sentences),
    each token also cut at the offsets in ``cuts`` (span boundaries a labeled text must keep)."""
    return [piece for sentence in split(text, cuts) for piece in sentence]


def split(text: str, cuts: Iterable[int] = ()) -> list[list[tuple[str, int, int]]]:
    """The sentences of ``text`` as lists of ``(token, start, end)`` (syntok), each token also
    cut at the offsets in ``cuts``."""
    from syntok import segmenter

    cut = sorted(set(cuts))
    out: list[list[tuple[str, int, int]]] = []
    for paragraph in segmenter.analyze(text):
        for sentence in paragraph:
            pieces = []
            for token in sentence:
                start, end = token.offset, token.offset + len(token.value)
                inner = cut[bisect.bisect_right(cut, start) : bisect.bisect_left(cut, end)]
                for a, b in zip([start, *inner], [*inner, end], strict=True):
                    piece = text[a:b]
                    if piece.strip():
                        pieces.append((piece, a, b))
            if pieces:
                out.append(pieces)
    return out
