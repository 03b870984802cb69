"""Exports of each sentence's latest annotation as CoNLL or JSONL, streamed row by row.

The rows come from a server-side cursor and go straight to the ``cwal.io`` writers, so a large
project is never held in memory. An exported file imported with ``tags_as="annotations"`` gives
back the same tokens, columns and tags.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Literal, TextIO

from sqlalchemy import Engine

from cwal.io import Sentence, write_conll, write_jsonl
from db.repository.base import InvalidValueError
from db.repository.history import iter_latest_annotations

ExportFormat = Literal["conll", "jsonl"]


def iter_export(
    engine: Engine,
    project_id: int,
    *,
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Iterator[Sentence]:
    """Stream the latest annotation of each sentence as ``cwal.io.Sentence`` in document order
    (``meta`` carries sentence id, annotation id, annotator, status and time).

    Filters: ``status`` (``submitted``, ``skipped`` or None for either), ``annotator_ids`` and
    the time range ``[since, until)`` of that latest annotation.
    """
    for event in iter_latest_annotations(
        engine,
        project_id,
        status=status,
        annotator_ids=annotator_ids,
        since=since,
        until=until,
    ):
        yield event.to_sentence()


def export_annotations(
    engine: Engine,
    project_id: int,
    dest: str | os.PathLike | TextIO,
    format: ExportFormat = "conll",
    *,
    columns: Sequence[str] | None = None,
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> int:
    """Write the latest annotation of each sentence to ``dest`` (a path or a text file) as
    ``conll`` (``columns``: roles to write, default word, the stored columns, tag) or ``jsonl``;
    returns the number of sentences written. Filters as in :func:`iter_export`."""
    sentences = iter_export(
        engine,
        project_id,
        status=status,
        annotator_ids=annotator_ids,
        since=since,
        until=until,
    )
    if format == "conll":
        return write_conll(sentences, dest, columns)
    if format == "jsonl":
        if columns is not None:
            raise InvalidValueError("columns= applies to CoNLL exports")
        return write_jsonl(sentences, dest)
    raise InvalidValueError(f"export format must be conll or jsonl, not {format!r}")
