"""Prodigy and doccano JSON Lines: one text per line with labeled character spans.

Prodigy (https://prodi.gy/docs/api-interfaces#ner_manual): ``{"text", "tokens": [{"text",
"start", "end", "id", "ws"}], "spans": [{"start", "end", "token_start", "token_end", "label"}],
"answer"}``; ``token_end`` is inclusive. A task without ``tokens`` is tokenized by syntok (cut at
its span boundaries); a ``reject`` or ``ignore`` answer keeps the text unlabeled (its spans are
not labels). Extra token keys (``pos``, ``confidence``) are per-token columns.

doccano sequence labeling (https://doccano.github.io/doccano/tutorial/): ``{"text", "label":
[[start, end, "TYPE"], ...]}``; ``labels`` (older exports) and ``entities`` (``start_offset`` /
``end_offset`` / ``label`` objects, newer exports) read too. The text is tokenized by syntok, cut
at every span boundary so each span is whole tokens.

Every other key is kept in ``meta`` (Prodigy's ``meta`` object is merged into it), and written
back under Prodigy's ``meta`` / doccano's top level.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from cwal.io.conll import TagRules, tagged_reader
from cwal.io.jsonl import json_lines
from cwal.io.raw import tokenize
from cwal.io.sentence import Sentence
from cwal.io.source import PathLike, Source, open_text
from cwal.io.spans import (
    CONFIDENCE,
    OFFSETS,
    TEXT,
    char_spans,
    layout,
    placed,
    tags_from_char_spans,
)

_PRODIGY_KEYS = ("text", "tokens", "spans", "meta")
_DOCCANO_KEYS = ("text", "label", "labels", "entities")
_UNLABELED_ANSWERS = ("reject", "ignore")


@tagged_reader
def read_prodigy(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream Prodigy tasks as sentences (tags under ``scheme``, default IOB2)."""
    for lineno, obj in json_lines(source, encoding, max_line):
        yield _prodigy(source, lineno, obj, scheme or "IOB2", rules)


@tagged_reader
def read_doccano(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream doccano sequence-labeling records as sentences (tags under ``scheme``)."""
    for lineno, obj in json_lines(source, encoding, max_line):
        text = _text(source, lineno, obj)
        spans = _doccano_spans(source, lineno, obj)
        meta = {k: v for k, v in obj.items() if k not in _DOCCANO_KEYS}
        yield labeled_sentence(source, lineno, text, None, spans, meta, scheme or "IOB2", rules)


def _text(source: Source, lineno: int, obj: dict) -> str:
    text = obj.get("text")
    if not isinstance(text, str):
        raise source.error(lineno, 'missing key "text" (a string)')
    return text


def _doccano_spans(source: Source, lineno: int, obj: dict) -> list[tuple[int, int, str]]:
    items = obj.get("entities", obj.get("label", obj.get("labels", [])))
    if isinstance(items, list):  # newer exports: {"start_offset", "end_offset", "label"} objects
        items = [
            [e.get("start_offset"), e.get("end_offset"), e.get("label")]
            if isinstance(e, dict)
            else e
            for e in items
        ]
    if not isinstance(items, list):
        raise source.error(lineno, '"label" must be a list of [start, end, "TYPE"]')
    out = []
    for k, item in enumerate(items):
        ok = isinstance(item, list) and len(item) == 3
        ok = ok and all(isinstance(v, int) for v in item[:2]) and isinstance(item[2], str)
        if not ok:
            raise source.error(lineno, f"label {k} must be [start, end, 'TYPE'], found {item!r}")
        out.append((item[0], item[1], item[2]))
    return out


def labeled_sentence(
    source: Source,
    lineno: int,
    text: str,
    pieces: list[tuple[str, int, int]] | None,
    spans: list[tuple[int, int, str]] | None,
    meta: dict[str, Any],
    scheme: str,
    rules: TagRules,
    columns: dict[str, list[str]] | None = None,
) -> Sentence:
    """A sentence of ``text`` (tokenized when ``pieces`` is None) labeled with char ``spans``."""
    for start, end, label in spans or ():
        if not 0 <= start < end <= len(text):
            raise source.error(lineno, f"span {start}-{end} {label!r} is outside the text")
    if pieces is None:
        pieces = tokenize(text, [x for s, e, _ in spans or () for x in (s, e)])
    tags = None
    if spans is not None:
        try:
            tags = tags_from_char_spans(spans, [(s, e) for _, s, e in pieces], text, scheme)
        except ValueError as exc:
            raise source.error(lineno, str(exc)) from None
    sent, problem = placed(text, pieces, tags, meta, lineno)
    if sent is None:
        raise source.error(lineno, problem or "no tokens")
    if columns:
        keep = [k for k, (tok, _, _) in enumerate(pieces) if tok.strip()]
        sent.columns = {key: [vals[k] for k in keep] for key, vals in columns.items()}
    if sent.tags is not None:
        sent.tags = rules.apply(source, sent.tags, lambda i: (lineno, f" at token {i}"))
    return sent


def _prodigy(source: Source, lineno: int, obj: dict, scheme: str, rules: TagRules) -> Sentence:
    text = _text(source, lineno, obj)
    meta = {k: v for k, v in obj.items() if k not in _PRODIGY_KEYS}
    if isinstance(obj.get("meta"), dict):
        meta = {**obj["meta"], **meta}
    pieces = None
    columns: dict[str, list[str]] = {}
    if obj.get("tokens") is not None:
        pieces, columns = _prodigy_tokens(source, lineno, text, obj["tokens"])
    spans = None
    if obj.get("spans") is not None and obj.get("answer") not in _UNLABELED_ANSWERS:
        spans = []
        if not isinstance(obj["spans"], list):
            raise source.error(lineno, '"spans" must be a list')
        for k, span in enumerate(obj["spans"]):
            ok = isinstance(span, dict) and isinstance(span.get("label"), str)
            if not ok or not all(isinstance(span.get(key), int) for key in ("start", "end")):
                raise source.error(lineno, f"span {k} needs integer start, end and a label")
            spans.append((span["start"], span["end"], span["label"]))
    return labeled_sentence(source, lineno, text, pieces, spans, meta, scheme, rules, columns)


def _prodigy_tokens(
    source: Source, lineno: int, text: str, tokens: Any
) -> tuple[list[tuple[str, int, int]], dict[str, list[str]]]:
    if not isinstance(tokens, list):
        raise source.error(lineno, '"tokens" must be a list of objects')
    pieces = []
    extra: dict[str, list[str]] = {}
    for k, tok in enumerate(tokens):
        ok = isinstance(tok, dict) and isinstance(tok.get("text"), str)
        if not ok or not all(isinstance(tok.get(key), int) for key in ("start", "end")):
            raise source.error(lineno, f"token {k} needs text, start and end")
        if text[tok["start"] : tok["end"]] != tok["text"]:
            raise source.error(
                lineno, f"token {k} {tok['text']!r} is not the text at {tok['start']}-{tok['end']}"
            )
        pieces.append((tok["text"], tok["start"], tok["end"]))
        for key, value in tok.items():
            if key not in ("text", "start", "end", "id", "ws", "disabled"):
                extra.setdefault(key, []).append(str(value))
    columns = {key: vals for key, vals in extra.items() if len(vals) == len(pieces)}
    return pieces, columns


def _meta_out(sent: Sentence) -> dict[str, Any]:
    return {k: v for k, v in sent.meta.items() if k not in (TEXT, OFFSETS)}


def prodigy_task(sent: Sentence, scheme: str | None = None) -> dict[str, Any]:
    """The Prodigy task of one sentence (also the shape Label Studio and brat are built from)."""
    text, offsets = layout(sent)
    tokens = []
    for k, (tok, (s, e)) in enumerate(zip(sent.tokens, offsets, strict=True)):
        item: dict[str, Any] = {"text": tok, "start": s, "end": e, "id": k}
        item["ws"] = k + 1 < len(offsets) and offsets[k + 1][0] > e
        for key, values in sent.columns.items():
            item[key] = float(values[k]) if key == CONFIDENCE else values[k]
        tokens.append(item)
    task: dict[str, Any] = {"text": text, "tokens": tokens}
    if sent.tags is not None:
        task["spans"] = [
            {"start": s, "end": e, "token_start": a, "token_end": b - 1, "label": label}
            for s, e, label, a, b in char_spans(sent, scheme)
        ]
        task["answer"] = "accept"
    meta = _meta_out(sent)
    if meta:
        task["meta"] = meta
    return task


def write_prodigy(
    sentences: Iterable[Sentence], dest: PathLike | TextIO, scheme: str | None = None
) -> int:
    """Write Prodigy tasks, one per line; returns the number written. ``scheme`` reads the tags
    (default: lenient, any scheme)."""
    return _write(sentences, dest, lambda s: prodigy_task(s, scheme))


def write_doccano(
    sentences: Iterable[Sentence], dest: PathLike | TextIO, scheme: str | None = None
) -> int:
    """Write doccano sequence-labeling records (``text``, ``label``, then the meta keys)."""

    def record(sent: Sentence) -> dict[str, Any]:
        text, _ = layout(sent)
        spans = [[s, e, label] for s, e, label, _, _ in char_spans(sent, scheme)]
        return {"text": text, "label": spans, **_meta_out(sent)}

    return _write(sentences, dest, record)


def _write(sentences: Iterable[Sentence], dest: PathLike | TextIO, make: Any) -> int:
    count = 0
    with open_text(dest) as out:
        for sent in sentences:
            out.write(json.dumps(make(sent), ensure_ascii=False) + "\n")
            count += 1
    return count
