"""CoNLL-U (https://universaldependencies.org/format.html), parsed by the ``conllu`` package.

Words are the tokens (multiword-token ranges ``1-2`` and empty nodes ``8.1`` are skipped); the
tag is the ``NER`` attribute of MISC (``NE`` and ``Entity`` read too), UPOS and XPOS become the
``pos`` and ``xpos`` columns, and ``# text`` with ``SpaceAfter=No`` give the sentence's text and
token offsets. Written files carry ``# sent_id``, ``# text``, UPOS, XPOS, ``NER=`` and ``SpaceAfter=No``
in MISC, and the per-token ``confidence`` as ``Confidence=``; the other columns are ``_``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from cwal.io.conll import TagRules, tagged_reader
from cwal.io.sentence import Sentence
from cwal.io.source import (
    PathLike,
    Source,
    check_tokens,
    iter_lines,
    open_text,
)
from cwal.io.spans import CONFIDENCE, OFFSETS, TEXT, align, layout

NER_KEYS = ("NER", "NE", "Entity")


@tagged_reader
def read_conllu(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file (tags None when no word has an NER attribute)."""
    block: list[str] = []
    start = 0
    seen = False
    lineno = 0
    for lineno, text in iter_lines(source, encoding, max_line):
        if text.strip():
            if not block:
                start = lineno
            block.append(text)
            continue
        if block:
            yield _sentence(source, start, block, rules)
            seen, block = True, []
    if block:
        yield _sentence(source, start, block, rules)
        seen = True
    if not seen:
        raise source.error(max(lineno, 1), "no sentences in the CoNLL-U file")


def _sentence(source: Source, start: int, block: list[str], rules: TagRules) -> Sentence:
    import conllu

    try:
        (parsed,) = conllu.parse("\n".join(block) + "\n\n")
    except (conllu.exceptions.ParseException, ValueError) as exc:
        line = start + next((k for k, b in enumerate(block) if str(exc)[:20] in b), 0)
        raise source.error(line, f"bad CoNLL-U: {exc}") from None
    words = [(k, w) for k, w in enumerate(parsed) if isinstance(w["id"], int)]
    comments = sum(1 for b in block if b.startswith("#"))
    lines = {k: start + comments + k for k, _ in words}
    tokens = [w["form"] for _, w in words]
    if not tokens:
        raise source.error(start, "a sentence without words")
    for k, w in words:
        check_tokens(source, lines[k], [w["form"]])
    misc = [w["misc"] or {} for _, w in words]
    found = [next((m[key] for key in NER_KEYS if key in m), None) for m in misc]
    tags = None
    if any(t is not None for t in found):
        tags = [t or "O" for t in found]
        tags = rules.apply(source, tags, lambda i: (lines[words[i][0]], ""))
    columns: dict[str, list[str]] = {}
    for key, role in (("upos", "pos"), ("xpos", "xpos")):
        values = [w[key] for _, w in words]
        if any(v not in (None, "_") for v in values):
            columns[role] = [v or "_" for v in values]
    meta: dict[str, Any] = {k: v for k, v in parsed.metadata.items() if k != "text"}
    text = parsed.metadata.get("text")
    offsets = align(text, tokens) if text else None
    if offsets is None and any(m.get("SpaceAfter") == "No" for m in misc):
        text, offsets = _joined(tokens, misc)
    if offsets is not None:
        meta[TEXT], meta[OFFSETS] = text, [list(o) for o in offsets]
    return Sentence(tokens, tags, columns, meta, start)


def _joined(tokens: list[str], misc: list[dict]) -> tuple[str, list[tuple[int, int]]]:
    text, offsets = "", []
    for tok, m in zip(tokens, misc, strict=True):
        offsets.append((len(text), len(text) + len(tok)))
        text += tok + ("" if m.get("SpaceAfter") == "No" else " ")
    return text.rstrip(" "), offsets


def write_conllu(sentences: Iterable[Sentence], dest: PathLike | TextIO) -> int:
    """Write sentences as CoNLL-U (see the module docstring); returns the number written."""
    import conllu

    count = 0
    with open_text(dest) as out:
        for sent in sentences:
            text, offsets = layout(sent)
            pos, xpos = sent.columns.get("pos"), sent.columns.get("xpos")
            conf = sent.columns.get(CONFIDENCE)
            words = []
            for k, tok in enumerate(sent.tokens):
                misc: dict[str, str] = {}
                if sent.tags is not None:
                    misc["NER"] = sent.tags[k]
                if conf is not None:
                    misc["Confidence"] = conf[k]
                if k + 1 < len(offsets) and offsets[k + 1][0] == offsets[k][1]:
                    misc["SpaceAfter"] = "No"
                words.append({"id": k + 1, "form": tok, "lemma": "_",
                              "upos": pos[k] if pos else "_", "xpos": xpos[k] if xpos else None, "feats": None,
                              "head": None, "deprel": "_", "deps": None, "misc": misc or None})  # fmt: skip
            ident = sent.meta.get("sent_id", sent.meta.get("sentence_id", count + 1))
            metadata = {"sent_id": str(ident), "text": text.replace("\n", " ")}
            out.write(conllu.TokenList(words, metadata=metadata).serialize())
            count += 1
    return count
