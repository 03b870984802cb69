"""spaCy's formats: the binary ``.spacy`` DocBin (https://spacy.io/api/docbin; needs spaCy, an
optional extra: ``pip install spacy``) and the JSON training format that ``spacy convert`` reads
(https://spacy.io/api/data-formats#json-input; plain JSON, no spaCy needed).

A Doc's sentences (or the whole Doc when it has no sentence boundaries) become sentences; its
entities (``doc.ents``) the tags; whitespace tokens are layout and dropped. Written DocBins hold
one Doc per sentence with its text, spaces, entities and sentence start, and cwal's ``meta`` in
``user_data``. The JSON format's ``ner`` tags are BILUO; they are read into ``scheme`` (IOB2
by default) and written as BILUO.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from cwal.errors import MissingExtraError
from cwal.io import schemes
from cwal.io.conll import TagRules, tagged_reader
from cwal.io.labelstudio import json_tasks, write_json_array
from cwal.io.sentence import Sentence
from cwal.io.source import PathLike, Source, check_tokens
from cwal.io.spans import OFFSETS, TEXT, align, chunk_spans, layout, placed

META_KEY = "cwal_meta"


def _spacy() -> Any:
    try:
        import spacy
    except ImportError:
        raise MissingExtraError(
            "the .spacy format needs spaCy, an optional extra: pip install spacy"
        ) from None
    return spacy


@tagged_reader
def read_docbin(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream the sentences of a ``.spacy`` file (``line`` is the Doc's number, from 1)."""
    spacy = _spacy()
    from spacy.tokens import DocBin

    with source.open() as handle:
        data = handle.read()
    try:
        docs = list(DocBin(store_user_data=True).from_bytes(data).get_docs(spacy.vocab.Vocab()))
    except Exception as exc:  # noqa: BLE001  (msgpack / zlib / spaCy errors: not a DocBin)
        raise source.error(None, f"not a spaCy DocBin: {exc}") from None
    for n, doc in enumerate(docs, 1):
        meta = dict(doc.user_data.get(META_KEY) or {})
        labeled = doc.has_annotation("ENT_IOB")
        units = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
        for unit in units:
            pieces = [(t.text, t.idx, t.idx + len(t.text)) for t in unit]
            tags = [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "O" for t in unit]
            tags = _to_scheme(tags, "IOB2", scheme) if labeled else None
            sent, problem = placed(doc.text, pieces, tags, meta if len(units) == 1 else {}, n)
            if sent is None:
                raise source.error(n, f"Doc {n}: {problem}")
            if sent.tags is not None:
                sent.tags = rules.apply(source, sent.tags, lambda i, n=n: (n, f" at token {i}"))
            yield sent


def _to_scheme(tags: list[str], src: str, dst: str | None) -> list[str]:
    return schemes.convert(tags, src, dst) if dst and dst.upper() != src else tags


def write_docbin(sentences: Iterable[Sentence], dest: PathLike, scheme: str | None = None) -> int:
    """Write a ``.spacy`` DocBin, one Doc per sentence; returns the number written."""
    spacy = _spacy()
    from spacy.tokens import Doc, DocBin, Span

    vocab = spacy.vocab.Vocab()
    out = DocBin(store_user_data=True)
    count = 0
    for sent in sentences:
        text, offsets = layout(sent)
        spaces = [b < len(text) and (k + 1 == len(offsets) or offsets[k + 1][0] > b)
                  for k, (_, b) in enumerate(offsets)]  # fmt: skip
        doc = Doc(vocab, words=list(sent.tokens), spaces=spaces,
                  sent_starts=[True] + [False] * (len(sent) - 1))  # fmt: skip
        if sent.tags is not None:
            doc.ents = [Span(doc, a, b, label=typ) for typ, a, b in chunk_spans(sent.tags, scheme)]
        doc.user_data[META_KEY] = {k: v for k, v in sent.meta.items() if k not in (TEXT, OFFSETS)}
        out.add(doc)
        count += 1
    with open(dest, "wb") as handle:
        handle.write(out.to_bytes())
    return count


@tagged_reader
def read_spacy_json(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream the sentences of spaCy's JSON training format (``line``: the document's line)."""
    for line, doc in json_tasks(source, encoding, max_line):
        for para in doc.get("paragraphs") or []:
            raw = para.get("raw") if isinstance(para.get("raw"), str) else None
            pos = 0
            for s in para.get("sentences") or []:
                toks = [t for t in s.get("tokens") or [] if isinstance(t, dict)]
                words = [str(t.get("orth", "")) for t in toks]
                check_tokens(source, line, words)
                if not words:
                    continue
                ner = [str(t.get("ner", "-")) for t in toks]
                tags = None
                if any(n not in ("-", "") for n in ner):  # "-": not annotated
                    biluo = ["O" if n in ("-", "") else n for n in ner]
                    tags = rules.apply(source, _to_scheme(biluo, "BILOU", scheme or "IOB2"),
                                       lambda i, line=line: (line, f" at token {i}"))  # fmt: skip
                pieces = None
                offsets = align(raw, words, pos) if raw is not None else None
                if offsets is not None:
                    pos = offsets[-1][1]
                    pieces = [(w, a, b) for w, (a, b) in zip(words, offsets, strict=True)]
                columns = {}
                if any(t.get("tag") not in (None, "-", "") for t in toks):
                    columns["pos"] = [str(t.get("tag") or "_") for t in toks]
                if pieces is not None:
                    sent, problem = placed(raw, pieces, tags, {"doc_id": doc.get("id")}, line)
                    if sent is None:
                        raise source.error(line, problem or "no tokens")
                    sent.columns = columns
                else:
                    sent = Sentence(words, tags, columns, {"doc_id": doc.get("id")}, line)
                yield sent


def write_spacy_json(
    sentences: Iterable[Sentence], dest: PathLike | TextIO, scheme: str | None = None
) -> int:
    """Write spaCy's JSON training format, one document per sentence, streamed."""

    def document(sent: Sentence, index: int) -> dict[str, Any]:
        text, _ = layout(sent)
        ner = ["O"] * len(sent)
        if sent.tags is not None:
            ner = schemes.from_spans(chunk_spans(sent.tags, scheme), len(sent), "BILOU")
        pos = sent.columns.get("pos")
        tokens = [{"id": k, "orth": tok, "tag": pos[k] if pos else "-", "ner": ner[k]}
                  for k, tok in enumerate(sent.tokens)]  # fmt: skip
        return {"id": index, "paragraphs": [{"raw": text, "sentences": [{"tokens": tokens}]}]}

    return write_json_array(sentences, dest, document)
