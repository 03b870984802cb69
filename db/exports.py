"""Exports of a project in any ``cwal.io`` format, streamed row by row.

What is exported (``what``):

- ``labels``: each sentence's current annotation (the latest submission, or with ``status`` the
  latest skip / either), the filters of :func:`iter_export` applied;
- ``history``: every submitted version of every label, in the order they were made (undone and
  replaced ones too; ``meta`` has each one's annotation id and the one it replaced);
- ``gold``: the tags the imported files brought (the evaluation split and gold pool files);
- ``predictions``: every sentence with the project's live model's tags and per-token confidence.

The rows come from server-side cursors and go straight to the writers, so a large project is
never held in memory. Each sentence keeps the text and offsets it was imported with (span formats
give spans in the original text) and its ``document``. An exported file imported with
``tags_as="annotations"`` gives back the same tokens, columns and tags.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TextIO

from sqlalchemy import Engine

from cwal.io import Sentence
from cwal.io.corpus import write_corpus
from db.repository.base import InvalidValueError
from db.repository.history import annotations_after, iter_latest_annotations
from db.repository.projects import get_project
from db.repository.sentences import StoredSentence, get_sentences, iter_sentences

WHAT = ("labels", "history", "gold", "predictions")


def _sentence(stored: StoredSentence, tags: list[str] | None, extra: dict) -> Sentence:
    meta = {**stored.meta, "sentence_id": stored.id, "document": stored.document, **extra}
    return Sentence(list(stored.tokens), tags, dict(stored.columns), meta, stored.line)


def _provenance(event) -> dict:
    return {
        "annotation_id": event.id,
        "annotator": event.annotator,
        "status": event.status,
        "annotated_at": event.created_at.isoformat(),
    }


def iter_export(
    engine: Engine,
    project_id: int,
    *,
    what: str = "labels",
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    progress=None,
) -> Iterator[Sentence]:
    """Stream the export as ``cwal.io.Sentence`` (``meta`` carries the sentence id, document,
    and for labels the annotation id, annotator, status and time).

    Filters of ``labels``: ``status`` (``submitted``, ``skipped`` or None for either),
    ``annotator_ids`` and the time range ``[since, until)`` of that latest annotation.
    ``progress(n)`` is called with the sentences done so far (predictions only)."""
    if what not in WHAT:
        raise InvalidValueError(f"what must be one of {', '.join(WHAT)}, not {what!r}")
    if what == "gold":
        return (
            _sentence(s, s.gold_tags, {})
            for s in iter_sentences(engine, project_id)
            if s.gold_tags is not None
        )
    if what == "history":
        return _history(engine, project_id)
    if what == "predictions":
        return _predictions(engine, project_id, progress)
    events = iter_latest_annotations(
        engine, project_id, status=status, annotator_ids=annotator_ids, since=since, until=until
    )
    return _labels(engine, project_id, events)


def _labels(engine: Engine, project_id: int, events: Iterable) -> Iterator[Sentence]:
    """Both streams are in document order (batch, position): a merge join, nothing held."""
    stored = iter_sentences(engine, project_id)
    for event in events:
        for sent in stored:
            if sent.id == event.sentence_id:
                yield _sentence(sent, event.tags, _provenance(event))
                break


def _history(engine: Engine, project_id: int, chunk: int = 1000) -> Iterator[Sentence]:
    rows = (e for e in annotations_after(engine, project_id) if e.status != "skipped")
    while batch := list(itertools.islice(rows, chunk)):
        by_id = {s.id: s for s in get_sentences(engine, {e.sentence_id for e in batch})}
        for event in batch:
            if event.status == "undone":
                continue
            extra = {**_provenance(event), "supersedes_id": event.supersedes_id}
            yield _sentence(by_id[event.sentence_id], event.tags, extra)


def _predictions(engine: Engine, project_id: int, progress=None) -> Iterator[Sentence]:
    """Every sentence with the live model's labeling and confidence: the process's session of
    the project is read batch by batch (``analysis.current_reading``; no model is built)."""
    from db.repository.analysis import current_reading  # the model code loads only when needed

    if not current_reading(engine, project_id, [[]])[0].trained:
        raise InvalidValueError("the project's model has not learned from any label yet")
    return _predicted(engine, project_id, progress)


def _predicted(engine: Engine, project_id: int, progress=None) -> Iterator[Sentence]:
    from cwal.live import PoolSentence
    from cwal.predict import BATCH, predict
    from db.repository.analysis import current_reading

    done, stored = 0, iter_sentences(engine, project_id)
    while batch := list(itertools.islice(stored, BATCH)):
        pool = [PoolSentence(s.id, list(s.tokens), dict(s.columns)) for s in batch]
        state = current_reading(engine, project_id, [pool])[0]
        sentences = [_sentence(s, None, {"split": s.split}) for s in batch]
        yield from predict(state.model, sentences, method=state.method, s=state.s, k=state.k,
                           batch_size=len(batch))  # fmt: skip
        done += len(batch)
        if progress is not None:
            progress(done)


def export_annotations(
    engine: Engine,
    project_id: int,
    dest: str | os.PathLike | TextIO,
    format: str = "conll",
    *,
    what: str = "labels",
    columns: Sequence[str] | None = None,
    scheme: str | None = None,
    status: str | None = "submitted",
    annotator_ids: Iterable[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    progress=None,
) -> int:
    """Write the export to ``dest`` (a path or a text file) in ``format`` (any of
    ``cwal.io.corpus.WRITE_FORMATS``; ``columns``: CoNLL roles to write); returns the number of
    sentences written. ``scheme`` reads tags into spans (default: the project's scheme)."""
    sentences = iter_export(
        engine,
        project_id,
        what=what,
        status=status,
        annotator_ids=annotator_ids,
        since=since,
        until=until,
        progress=progress,
    )
    scheme = scheme or get_project(engine, project_id).settings.get("scheme")
    try:
        return write_corpus(sentences, dest, format, scheme=scheme, columns=columns)
    except ValueError as exc:
        raise InvalidValueError(str(exc)) from None
