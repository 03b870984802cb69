"""One entry point for every corpus format: by name, by file extension, or by sniffing."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, TextIO

from cwal.io.brat import read_brat, write_brat
from cwal.io.conll import DOCSTART, read_conll, write_conll
from cwal.io.conllu_file import read_conllu, write_conllu
from cwal.io.jsonl import read_jsonl, write_jsonl
from cwal.io.labelstudio import read_labelstudio, write_labelstudio
from cwal.io.raw import looks_raw, read_raw
from cwal.io.sentence import Sentence
from cwal.io.source import MAX_LINE, PathLike, Source, as_source, raw_lines, split_fields
from cwal.io.spacy_file import read_docbin, read_spacy_json, write_docbin, write_spacy_json
from cwal.io.spanjsonl import read_doccano, read_prodigy, write_doccano, write_prodigy
from cwal.io.table import write_table
from cwal.io.text import read_text, write_text

FORMATS = ("conll", "jsonl", "text", "raw", "prodigy", "doccano", "conllu", "labelstudio", "brat",
           "spacy", "spacy-json")  # fmt: skip
FORMAT_NAMES = {
    "conll": "CoNLL columns",
    "jsonl": "JSONL token lists",
    "text": "tokenized text, a sentence a line",
    "raw": "raw text (cwal splits it)",
    "prodigy": "Prodigy JSONL",
    "doccano": "doccano JSONL",
    "conllu": "CoNLL-U, NER in MISC",
    "labelstudio": "Label Studio JSON",
    "brat": "brat standoff .txt + .ann",
    "spacy": "spaCy DocBin .spacy (needs spaCy)",
    "spacy-json": "spaCy JSON training format",
    "csv": "CSV, a token a row",
    "tsv": "TSV, a token a row",
}
UNLABELED = ("text", "raw")  # formats without tags: their readers take no tag rules
JSON_FAMILY = ("jsonl", "prodigy", "doccano", "labelstudio", "spacy-json")
_FORMAT_ALIASES = {"ndjson": "jsonl", "txt": "text", "plain": "text", "tokens": "text",
                   "label-studio": "labelstudio", "ls": "labelstudio"}  # fmt: skip
EXTENSIONS = {
    **dict.fromkeys((".jsonl", ".json", ".ndjson"), "json"),  # which JSON format: sniffed
    ".conllu": "conllu",
    ".ann": "brat",
    ".spacy": "spacy",
    **dict.fromkeys(
        (".conll", ".conllx", ".iob", ".iob1", ".iob2", ".bio", ".bioes", ".iobes", ".tsv",
         ".col", ".train", ".test", ".testa", ".testb", ".dev", ".valid"),
        "conll",
    ),
}  # fmt: skip
SNIFF_LINES = 200
_CONLLU_COMMENT = re.compile(r"# (sent_id|text|newdoc|newpar|global\.columns) ?=?")
_CONLLU_WORD = re.compile(r"^\d+(-\d+|\.\d+)?\t[^\t]+(\t[^\t]*){8}$")
MAX_COLUMNS = 10


def json_format(obj: object) -> str:
    """Which JSON Lines format one parsed line is: ``jsonl`` (token lists), ``prodigy`` (text
    with token objects or spans, or bare text to tokenize) or ``doccano`` (text with labels)."""
    if not isinstance(obj, dict):
        return "jsonl"
    tokens = obj.get("tokens")
    if isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens):
        return "jsonl"
    if "text" in obj and any(k in obj for k in ("label", "labels", "entities")):
        return "doccano"
    if "text" in obj:
        return "prodigy"
    return "jsonl"


def detect_format(source: PathLike | Source) -> str:
    """Guess the format of a file from its first lines.

    The rule: a first non-blank line starting with ``[`` (or a lone ``{``) is Label Studio JSON;
    one starting with ``{`` is JSON Lines, the format by its keys (``json_format``); a CoNLL-U
    comment (``# sent_id =``, ``# text =``) or a 10-field tab-separated word line is ``conllu``;
    else ``conll`` when a line starts with ``-DOCSTART-``, or when the first 200 non-blank lines (at least two) all have
    the same number k <= 10 of space/tab-separated fields and either k == 1 (one token per line)
    or a blank line separates two of them (blank-line separated sentences); else ``raw`` when
    the lines read as running text (``cwal.io.raw.looks_raw``), else ``text``.
    """
    src = as_source(source)
    counts: set[int] = set()
    n_rows = 0
    blank_between = False
    pending_blank = False
    lines: list[str] = []
    with src.open() as handle:
        for raw in raw_lines(handle, MAX_LINE):
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
            fields = split_fields(text)
            if not fields:
                pending_blank = n_rows > 0
                continue
            if n_rows == 0 and text.lstrip().startswith("["):
                return _json_array(src)
            if n_rows == 0 and text.startswith("# ") and _CONLLU_COMMENT.match(text):
                return "conllu"
            if n_rows == 0 and _CONLLU_WORD.match(text):
                return "conllu"
            if n_rows == 0 and text.lstrip().startswith("{"):
                try:
                    return json_format(json.loads(text))
                except ValueError:  # a pretty-printed object: one Label Studio task
                    return "labelstudio" if text.strip() == "{" else "jsonl"
            if fields[0] == DOCSTART:
                return "conll"
            n_rows += 1
            blank_between = blank_between or pending_blank
            pending_blank = False
            counts.add(len(fields))
            lines.append(text)
            if n_rows >= SNIFF_LINES:
                break
    if n_rows >= 2 and len(counts) == 1:
        k = counts.pop()
        if k <= MAX_COLUMNS and (k == 1 or blank_between):
            return "conll"
    return "raw" if looks_raw(lines) else "text"


def _json_array(src: Source) -> str:
    """``spacy-json`` when the array's first document has ``paragraphs``, else ``labelstudio``."""
    with src.open() as handle:
        head = handle.read(1 << 16).decode("utf-8", errors="replace")
    return "spacy-json" if '"paragraphs"' in head else "labelstudio"


def _has_companion(src: Source) -> bool:
    """True for a ``.txt`` that comes with a brat ``.ann`` (beside it, or in the same zip)."""
    if src.companion is not None:
        return True
    return src.path is not None and os.path.exists(os.path.splitext(src.path)[0] + ".ann")


def format_of(name: str) -> str | None:
    """The format a file name's extension implies (``json`` for the JSON family, sniffed among
    them; ``.txt`` and unknown ones: None, sniffed)."""
    return EXTENSIONS.get(os.path.splitext(str(name))[1].lower())


def resolve_format(src: Source, fmt: str | None) -> str:
    """The format to read ``src`` with: ``fmt`` when given (a name or alias), else by extension,
    else sniffed (``detect_format``)."""
    if fmt:
        return normalize(fmt)
    if src.name.lower().endswith(".txt") and _has_companion(src):
        return "brat"
    found = format_of(src.name)
    if found == "json":
        detected = detect_format(src)
        return detected if detected in JSON_FAMILY else "jsonl"
    return found or detect_format(src)


def normalize(fmt: str) -> str:
    """The canonical name of a format or alias; ValueError for an unknown one."""
    key = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if key not in FORMATS:
        raise ValueError(f"unknown corpus format {fmt!r}; known: {', '.join(FORMATS)}")
    return key


_READERS: dict[str, Callable[..., Iterator[Sentence]]] = {
    "jsonl": read_jsonl,
    "text": read_text,
    "raw": read_raw,
    "prodigy": read_prodigy,
    "doccano": read_doccano,
    "conllu": read_conllu,
    "labelstudio": read_labelstudio,
    "brat": read_brat,
    "spacy": read_docbin,
    "spacy-json": read_spacy_json,
}


def _dispatch(
    src: Source, fmt: str | None, columns: str | Sequence[str] | None, kw: dict[str, Any]
) -> Iterator[Sentence]:
    fmt = resolve_format(src, fmt)
    if fmt == "conll":
        return read_conll(src, columns, **kw)
    if columns is not None:
        raise ValueError(f"columns= applies to CoNLL files, not {fmt}")
    return _READERS[fmt](src, **kw)


def read_corpus(
    path: PathLike,
    format: str | None = None,
    columns: str | Sequence[str] | None = None,
    **kw: Any,
) -> Iterator[Sentence]:
    """Stream the sentences of a corpus file in any format.

    ``format`` is one of ``FORMATS``; when None it follows the extension (``EXTENSIONS``), and
    ``.txt``, ``.json`` or an unknown extension is sniffed (``detect_format``).
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


WRITE_FORMATS = ("conll", "jsonl", "text", "prodigy", "doccano", "conllu", "labelstudio",
                 "spacy-json", "csv", "tsv", "brat", "spacy")  # fmt: skip
PATH_ONLY = ("brat", "spacy")  # written to a path: a folder or .zip of pairs, a binary file


def write_corpus(
    sentences: Iterable[Sentence],
    dest: PathLike | TextIO,
    format: str,
    *,
    scheme: str | None = None,
    columns: str | Sequence[str] | None = None,
) -> int:
    """Write sentences in any of ``WRITE_FORMATS``, streaming; returns the number written.

    ``scheme`` reads the tags into spans for the span formats (default: lenient, any scheme);
    ``columns`` picks the CoNLL roles to write."""
    fmt = "csv" if format.lower() == "csv" else "tsv" if format.lower() == "tsv" else format
    fmt = fmt if fmt in ("csv", "tsv") else normalize(fmt)
    if columns is not None and fmt != "conll":
        raise ValueError(f"columns= applies to CoNLL files, not {fmt}")
    if fmt == "conll":
        return write_conll(sentences, dest, columns)
    if fmt in ("csv", "tsv"):
        return write_table(sentences, dest, "," if fmt == "csv" else "\t")
    if fmt == "prodigy":
        return write_prodigy(sentences, dest, scheme)
    if fmt == "doccano":
        return write_doccano(sentences, dest, scheme)
    if fmt == "conllu":
        return write_conllu(sentences, dest)
    if fmt == "labelstudio":
        return write_labelstudio(sentences, dest, scheme)
    if fmt == "spacy-json":
        return write_spacy_json(sentences, dest, scheme)
    if fmt in PATH_ONLY and hasattr(dest, "write"):
        raise ValueError(f"{fmt} is written to a path (a folder or file), not a text stream")
    if fmt == "brat":
        return write_brat(sentences, dest, scheme)
    if fmt == "spacy":
        return write_docbin(sentences, dest, scheme)
    if fmt == "jsonl":
        return write_jsonl(sentences, dest)
    if fmt == "text":
        return write_text(sentences, dest)
    raise ValueError(f"cannot write {fmt}; writable formats: {', '.join(WRITE_FORMATS)}")
