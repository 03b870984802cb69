"""JSON Lines corpora: one object per line, ``{"tokens": [...], "tags": [...]}`` (tags optional).

Any other key whose value is a list of strings as long as ``tokens`` (e.g. ``"pos"``) becomes a
``Sentence.columns`` entry; every other key is kept in ``Sentence.meta``. JSON is UTF-8 by
definition, so bytes that are not UTF-8 are an error (no latin-1 fallback).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from typing import Any, TextIO

from cwal.io import schemes
from cwal.io.conll import TagRules
from cwal.io.sentence import Sentence
from cwal.io.source import (
    MAX_LINE,
    PathLike,
    Source,
    as_source,
    check_tokens,
    iter_lines,
    open_text,
)

RESERVED = ("tokens", "tags")


def read_jsonl(
    path: PathLike | Source,
    *,
    encoding: str = "utf-8",
    scheme: str | schemes.Scheme | None = None,
    strict: bool = True,
    tagset: Collection[str] | None = None,
    max_line: int = MAX_LINE,
) -> Iterator[Sentence]:
    """Stream the sentences of a JSONL file; blank lines are skipped. ``scheme`` / ``strict`` /
    ``tagset`` check tags as in ``read_conll``. A bad line raises ``CorpusError`` with its number."""
    rules = TagRules(scheme, strict, tagset)
    return _read(as_source(path), encoding, rules, max_line)


MAX_DEPTH = 32  # levels of nested lists/objects in one line (a sentence needs 2)


def json_lines(
    source: Source, encoding: str = "utf-8", max_line: int = MAX_LINE
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` for each non-blank line of a JSON Lines file; a line that is not a JSON
    object (or nests deeper than ``MAX_DEPTH``), or a file without any, raises ``CorpusError``
    with the line."""
    lineno = 0
    seen = False
    for lineno, text in iter_lines(source, encoding, max_line):
        if not text.strip():
            continue
        yield lineno, _object(source, lineno, text)
        seen = True
    if not seen:
        if lineno == 0:
            raise source.error(1, "empty file: no sentences")
        raise source.error(lineno, "no sentences (only blank lines)")


def _read(source: Source, encoding: str, rules: TagRules, max_line: int) -> Iterator[Sentence]:
    for lineno, obj in json_lines(source, encoding, max_line):
        yield _sentence(source, lineno, obj, rules)


def _depth(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists/objects deeper than ``limit`` levels."""
    if limit < 0:
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_depth(v, limit - 1) for v in items if isinstance(v, dict | list))


def _object(source: Source, lineno: int, text: str) -> dict[str, Any]:
    too_deep = f"JSON nested deeper than {MAX_DEPTH} levels"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise source.error(lineno, f"bad JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise source.error(lineno, too_deep) from None
    if _depth(obj, MAX_DEPTH):
        raise source.error(lineno, too_deep)
    if not isinstance(obj, dict):
        what = "an array" if isinstance(obj, list) else type(obj).__name__
        raise source.error(lineno, f"expected one JSON object per line, found {what}")
    return obj


def _sentence(source: Source, lineno: int, obj: dict, rules: TagRules) -> Sentence:
    if "tokens" not in obj:
        raise source.error(lineno, 'missing key "tokens"')
    tokens = _strings(source, lineno, obj, "tokens")
    if not tokens:
        raise source.error(lineno, '"tokens" is empty')
    check_tokens(source, lineno, tokens)
    tags = None
    if obj.get("tags") is not None:
        tags = _strings(source, lineno, obj, "tags")
        if len(tags) != len(tokens):
            raise source.error(
                lineno, f'length mismatch: "tags" has {len(tags)} items, "tokens" has {len(tokens)}'
            )
        check_tokens(source, lineno, tags, "tag")
        tags = rules.apply(source, tags, lambda i: (lineno, f" at position {i}"))
    columns: dict[str, list[str]] = {}
    meta: dict[str, Any] = {}
    for key, value in obj.items():
        if key in RESERVED:
            continue
        per_token = (
            isinstance(value, list)
            and len(value) == len(tokens)
            and all(isinstance(v, str) for v in value)
        )
        if per_token:
            check_tokens(source, lineno, value, f"{key!r} value")
        (columns if per_token else meta)[key] = value
    return Sentence(tokens, tags, columns, meta, lineno)


def _strings(source: Source, lineno: int, obj: dict, key: str) -> list[str]:
    value = obj[key]
    if not isinstance(value, list):
        raise source.error(
            lineno, f'"{key}" must be a list of strings, found {type(value).__name__}'
        )
    for p, item in enumerate(value):
        if not isinstance(item, str):
            raise source.error(
                lineno,
                f'"{key}" must be a list of strings; item {p} is {type(item).__name__} {item!r}',
            )
    return value


def write_jsonl(sentences: Iterable[Sentence], dest: PathLike | TextIO) -> int:
    """Write one JSON object per sentence (UTF-8, non-ASCII kept); returns the number written.

    Keys: ``tokens``, ``tags`` (when present), then each ``columns`` entry, then ``meta``. A meta
    value that is a list of strings as long as ``tokens`` reads back as a column.
    """
    count = 0
    with open_text(dest) as out:
        for sent in sentences:
            obj: dict[str, Any] = {"tokens": list(sent.tokens)}
            if sent.tags is not None:
                obj["tags"] = list(sent.tags)
            for part in (sent.columns, sent.meta):
                for key, value in part.items():
                    if key in obj:
                        raise ValueError(f"sentence {count}: key {key!r} is used twice")
                    obj[key] = value
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            count += 1
    return count
