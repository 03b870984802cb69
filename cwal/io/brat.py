"""brat standoff (https://brat.nlplab.org/standoff.html): a document's ``.txt`` and its ``.ann``.

Text-bound annotations ``T1<TAB>TYPE START END<TAB>TEXT`` are the entities (a discontinuous one,
``START END;START END``, covers its first start to its last end); relations, events, attributes
and notes are not tags and are left out. The text is split into sentences and tokens by syntok,
tokens cut at entity boundaries, sentences also cut at line breaks; a sentence break inside an
entity joins the two sentences.
Offsets are those of the ``.txt`` file, in code points, as brat counts them. Overlapping
entities cannot be one tag sequence: they are refused, naming the ``.ann`` line.

Written documents put one sentence a line in ``NAME.txt`` and its entities in ``NAME.ann``, one
pair per document (``meta["doc"]`` or ``meta["document"]``), into a folder or a ``.zip``.
"""

from __future__ import annotations

import bisect
import os
import re
import zipfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from cwal.io.conll import TagRules
from cwal.io.raw import split
from cwal.io.sentence import Sentence
from cwal.io.source import PathLike, Source, as_source, decide_encoding
from cwal.io.spans import char_spans, layout, placed, tags_from_char_spans

_ENTITY = re.compile(r"^(T\d+)\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t(.*)$")


def _pair(source: Source) -> tuple[Source, Source]:
    """The ``.txt`` and ``.ann`` sources of a document given either one."""
    if source.companion is not None:
        return source, source.companion
    if source.path is None:
        raise source.error(None, "a brat document needs its .txt and .ann together (upload a zip)")
    stem, ext = os.path.splitext(source.path)
    txt, ann = (stem + ".txt", source.path) if ext == ".ann" else (source.path, stem + ".ann")
    for path in (txt, ann):
        if not os.path.exists(path):
            raise source.error(None, f"the brat pair is incomplete: {path} is missing")
    return Source(txt), Source(ann)


def _read_text(source: Source, encoding: str | None) -> str:
    codec = decide_encoding(source, encoding)
    with source.open() as handle:
        return handle.read().decode(codec).removeprefix("\ufeff")


def read_brat(
    path: PathLike | Source,
    *,
    encoding: str | None = None,
    scheme: str | None = None,
    strict: bool = True,
    tagset: Collection[str] | None = None,
    max_line: int = 0,
) -> Iterator[Sentence]:
    """Stream the sentences of one brat document (``path``: its .txt or .ann)."""
    txt, ann = _pair(as_source(path))
    text = _read_text(txt, encoding)
    spans: list[tuple[int, int, str, int]] = []
    for lineno, line in enumerate(_read_text(ann, encoding).splitlines(), 1):
        if not line.startswith("T"):
            continue
        m = _ENTITY.match(line)
        if m is None:
            raise ann.error(
                lineno, "malformed text-bound annotation (ID<TAB>TYPE START END<TAB>TEXT)"
            )
        pairs = [tuple(map(int, p.split())) for p in m.group(3).split(";")]
        start, end = pairs[0][0], pairs[-1][1]
        if not 0 <= start < end <= len(text):
            raise ann.error(lineno, f"{m.group(1)}: offsets {start}-{end} are outside the text")
        if " ".join(text[a:b] for a, b in pairs) != m.group(4):
            raise ann.error(
                lineno, f"{m.group(1)}: the text at {start}-{end} is not {m.group(4)!r}"
            )
        spans.append((start, end, m.group(2), lineno))
    spans.sort()
    for a, b in zip(spans, spans[1:], strict=False):
        if b[0] < a[1]:
            raise ann.error(b[3], f"entity at {b[0]}-{b[1]} overlaps the one at {a[0]}-{a[1]}")
    return _sentences(txt, ann, text, spans, scheme or "IOB2", TagRules(scheme, strict, tagset))


def _sentences(
    txt: Source, ann: Source, text: str, spans: list, scheme: str, rules: TagRules
) -> Iterator[Sentence]:
    doc = os.path.basename(txt.name)
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    groups: list[list[tuple[str, int, int]]] = []
    for sentence in _by_line(text, split(text, [x for s, e, _, _ in spans for x in (s, e)])):
        starts_inside = groups and any(s < sentence[0][1] < e for s, e, _, _ in spans)
        if starts_inside:
            groups[-1].extend(sentence)
        else:
            groups.append(sentence)
    k = 0
    for pieces in groups:
        first, last = pieces[0][1], pieces[-1][2]
        mine = []
        while k < len(spans) and spans[k][0] < last:
            mine.append(spans[k][:3])
            k += 1
        tags = tags_from_char_spans(mine, [(s, e) for _, s, e in pieces], text, scheme)
        line = bisect.bisect_right(line_starts, first)
        sent, problem = placed(text, pieces, tags, {"doc": doc}, line)
        if sent is None:
            raise txt.error(line, problem or "no tokens")
        sent.meta["start"] = first
        sent.tags = rules.apply(txt, sent.tags, lambda i, line=line: (line, f" at token {i}"))
        yield sent


def _by_line(text: str, sentences: list[list]) -> Iterator[list]:
    """Sentences also cut at line breaks (brat files often hold a sentence a line)."""
    for sentence in sentences:
        part = [sentence[0]]
        for prev, piece in zip(sentence, sentence[1:], strict=False):
            gap = text[prev[2] : piece[1]]
            if "\n" in gap or "\r" in gap:
                yield part
                part = []
            part.append(piece)
        yield part


def _documents(sentences: Iterable[Sentence]) -> Iterator[tuple[str, list[Sentence]]]:
    name, group = None, []
    for sent in sentences:
        doc = str(sent.meta.get("doc") or sent.meta.get("document") or "document")
        if group and doc != name:
            yield name, group
            group = []
        name = doc
        group.append(sent)
    if group:
        yield name, group


def brat_document(sentences: list[Sentence], scheme: str | None = None) -> tuple[str, str]:
    """The ``.txt`` and ``.ann`` contents of one document: a sentence a line."""
    text_parts, ann_lines, base = [], [], 0
    for sent in sentences:
        text, _ = layout(sent)
        text = text.replace("\r", " ").replace("\n", " ")
        for s, e, label, _, _ in char_spans(sent, scheme):
            ann_lines.append(f"T{len(ann_lines) + 1}\t{label} {base + s} {base + e}\t{text[s:e]}")
        text_parts.append(text)
        base += len(text) + 1
    return "\n".join(text_parts) + "\n", "".join(line + "\n" for line in ann_lines)


def write_brat(sentences: Iterable[Sentence], dest: PathLike, scheme: str | None = None) -> int:
    """Write each document's ``.txt`` / ``.ann`` pair into the folder ``dest`` (created), or into
    a zip archive when ``dest`` ends in ``.zip``; returns the number of sentences written."""
    dest = Path(dest)
    count = 0
    used: set[str] = set()
    archive = zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) if dest.suffix == ".zip" else None
    if archive is None:
        dest.mkdir(parents=True, exist_ok=True)
    try:
        for name, group in _documents(sentences):
            stem = _stem(name, used)
            txt, ann = brat_document(group, scheme)
            for ext, content in ((".txt", txt), (".ann", ann)):
                if archive is not None:
                    archive.writestr(stem + ext, content.encode("utf-8"))
                else:
                    (dest / (stem + ext)).write_text(content, encoding="utf-8", newline="\n")
            count += len(group)
    finally:
        if archive is not None:
            archive.close()
    return count


def _stem(name: str, used: set[str]) -> str:
    stem = re.sub(r"[^\w.-]+", "_", os.path.splitext(os.path.basename(name))[0]) or "document"
    base, n = stem, 1
    while stem in used:
        n += 1
        stem = f"{base}-{n}"
    used.add(stem)
    return stem
