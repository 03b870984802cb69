"""One entry point for every corpus format: by name, by file extension, or by sniffing."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from cwal.io.conll import DOCSTART, read_conll
from cwal.io.jsonl import read_jsonl
from cwal.io.sentence import Sentence
from cwal.io.source import MAX_LINE, PathLike, Source, as_source, raw_lines, split_fields
from cwal.io.text import read_text

FORMATS = ("conll", "jsonl", "text")
_FORMAT_ALIASES = {"json": "jsonl", "ndjson": "jsonl", "txt": "text", "plain": "text"}
EXTENSIONS = {
    **dict.fromkeys((".jsonl", ".json", ".ndjson"), "jsonl"),
    **dict.fromkeys(
        (".conll", ".conllx", ".iob", ".iob1", ".iob2", ".bio", ".bioes", ".iobes", ".tsv",
         ".col", ".train", ".test", ".testa", ".testb", ".dev", ".valid"),
        "conll",
    ),
}  # fmt: skip
SNIFF_LINES = 200
MAX_COLUMNS = 10


def detect_format(source: PathLike | Source) -> str:
    """Guess the format of a file from its first lines.

    The rule: ``jsonl`` when the first non-blank line starts with ``{``; else ``conll`` when a
    line starts with ``-DOCSTART-``, or when the first 200 non-blank lines (at least two) all have
    the same number k <= 10 of space/tab-separated fields and either k == 1 (one token per line)
    or a blank line separates two of them (blank-line separated sentences); else ``text``.
    """
    src = as_source(source)
    counts: set[int] = set()
    n_rows = 0
    blank_between = False
    pending_blank = False
    with src.open() as handle:
        for raw in raw_lines(handle, MAX_LINE):
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
            fields = split_fields(text)
            if not fields:
                pending_blank = n_rows > 0
                continue
            if n_rows == 0 and text.lstrip().startswith("{"):
                return "jsonl"
            if fields[0] == DOCSTART:
                return "conll"
            n_rows += 1
            blank_between = blank_between or pending_blank
            pending_blank = False
            counts.add(len(fields))
            if n_rows >= SNIFF_LINES or len(counts) > 1:
                break
    if n_rows >= 2 and len(counts) == 1:
        k = counts.pop()
        if k <= MAX_COLUMNS and (k == 1 or blank_between):
            return "conll"
    return "text"


def format_of(name: str) -> str | None:
    """The format a file name's extension implies (``.txt`` and unknown ones: None, sniff)."""
    return EXTENSIONS.get(os.path.splitext(str(name))[1].lower())


def _normalize(fmt: str) -> str:
    key = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if key not in FORMATS:
        raise ValueError(f"unknown corpus format {fmt!r}; known: {', '.join(FORMATS)}")
    return key


def _dispatch(
    src: Source, fmt: str | None, columns: str | Sequence[str] | None, kw: dict[str, Any]
) -> Iterator[Sentence]:
    fmt = _normalize(fmt) if fmt else (format_of(src.name) or detect_format(src))
    if fmt == "conll":
        return read_conll(src, columns, **kw)
    if columns is not None:
        raise ValueError(f"columns= applies to CoNLL files, not {fmt}")
    return read_jsonl(src, **kw) if fmt == "jsonl" else read_text(src, **kw)


def read_corpus(
    path: PathLike,
    format: str | None = None,
    columns: str | Sequence[str] | None = None,
    **kw: Any,
) -> Iterator[Sentence]:
    """Stream the sentences of a corpus file in any format.

    ``format`` is ``conll``, ``jsonl`` or ``text``; when None it follows the extension
    (``EXTENSIONS``), and ``.txt`` or an unknown extension is sniffed (``detect_format``).
    ``columns`` goes to ``read_conll``; other keywords to the chosen reader.
    """
    return _dispatch(as_source(path), format, columns, kw)


def read_corpus_bytes(
    data: bytes | bytearray | BinaryIO,
    name: str,
    format: str | None = None,
    columns: str | Sequence[str] | None = None,
    **kw: Any,
) -> Iterator[Sentence]:
    """``read_corpus`` over uploaded bytes or a binary file object; ``name`` (the uploaded file
    name) picks the format by extension and names the input in errors."""
    return _dispatch(Source(data, name), format, columns, kw)
