"""Plain tokenized text: one sentence per line, tokens separated by spaces or tabs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

from cwal.io.sentence import Sentence
from cwal.io.source import (
    MAX_LINE,
    PathLike,
    Source,
    as_source,
    check_tokens,
    iter_lines,
    open_text,
    split_fields,
    writable_field,
)


def read_text(
    path: PathLike | Source, encoding: str | None = None, *, max_line: int = MAX_LINE
) -> Iterator[Sentence]:
    """Stream unlabeled sentences (``tags`` None), one per non-blank line."""
    return _read(as_source(path), encoding, max_line)


def _read(source: Source, encoding: str | None, max_line: int) -> Iterator[Sentence]:
    lineno = 0
    seen = False
    for lineno, text in iter_lines(source, encoding, max_line):
        tokens = split_fields(text)
        if not tokens:
            continue
        check_tokens(source, lineno, tokens)
        yield Sentence(tokens, line=lineno)
        seen = True
    if not seen:
        if lineno == 0:
            raise source.error(1, "empty file: no sentences")
        raise source.error(lineno, "no sentences (only blank lines)")


def write_text(sentences: Iterable[Sentence], dest: PathLike | TextIO) -> int:
    """Write each sentence's tokens on one line, space-separated; returns the number written."""
    count = 0
    with open_text(dest) as out:
        for sent in sentences:
            if not all(writable_field(t) for t in sent.tokens):
                raise ValueError(f"sentence {count}: a token is empty or holds a space or tab")
            out.write(" ".join(sent.tokens) + "\n")
            count += 1
    return count
