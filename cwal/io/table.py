"""CSV and TSV exports: one row per token, safe to open in a spreadsheet.

Columns: ``sentence`` (its index in the export, or its ``sentence_id`` when the export carries
one), ``token`` (position), ``word``, each per-token column, ``tag``. A cell that a spreadsheet
would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return)
is written with a leading apostrophe, as OWASP advises against CSV injection; the apostrophe is
what a spreadsheet shows and hides, so ``-`` reads ``'-``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from cwal.io.sentence import Sentence
from cwal.io.source import PathLike, open_text

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """The text of one cell, an apostrophe in front when it could start a formula."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def write_table(sentences: Iterable[Sentence], dest: PathLike | TextIO, sep: str = ",") -> int:
    """Write one row per token (``sep`` ``","`` for CSV, ``"\\t"`` for TSV) under a header row
    taken from the first sentence; returns the number of sentences written."""
    count = 0
    roles: list[str] | None = None
    with open_text(dest) as out:
        writer = csv.writer(out, delimiter=sep, lineterminator="\n")
        for sent in sentences:
            if roles is None:
                roles = list(sent.columns)
                tag = ["tag"] if sent.tags is not None else []
                writer.writerow(["sentence", "token", "word", *roles, *tag])
            ident = sent.meta.get("sentence_id", count)
            cols = [sent.columns.get(r) or [""] * len(sent) for r in roles]
            tags = sent.tags if sent.tags is not None else None
            for k, tok in enumerate(sent.tokens):
                row = [ident, k, tok, *(c[k] for c in cols)]
                if tags is not None:
                    row.append(tags[k])
                writer.writerow([safe_cell(v) for v in row])
            count += 1
    return count
