"""Staged imports of corpora in any ``cwal.io`` format (CoNLL, JSONL, raw text, Prodigy ...).

An import is all or nothing, and it never locks annotators out: the file is read by the
``cwal.io`` readers and its sentences are written into a *staged* batch (``state="importing"``),
short write transactions (time-boxed: about ``batch_ms`` of writing each, at most ``chunk_size``
sentences), so annotators' submits interleave. Staged
sentences are invisible to every query (``db.repository.state.in_project``); one small final
transaction publishes every batch of the import at once. A ``CorpusError`` (with its line
number), a cancelled progress callback or any other error removes the staged rows. A killed
process leaves an unfinished, invisible import: importing the same bytes again resumes it
(``resume=True``), or ``discard_import`` deletes it. The content hash of each file is recorded,
so importing the same bytes into the same project twice is refused. Tags are checked against the
project's tag set and scheme by the readers. Tags imported as annotations are written in the
final transaction (they enter the label log when their sentences become visible).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection, Engine

from cwal.errors import CorpusError
from cwal.io import Sentence, read_corpus
from cwal.io.bundle import expand_bytes
from cwal.io.corpus import resolve_format
from cwal.io.source import Source
from db.engine import read_transaction, write_transaction
from db.import_input import (
    ImportInput,
    check_upload_size,
    checked,
    input_of_bytes,
    input_of_path,
    input_of_source,
    reader_options,
)
from db.import_pacing import (
    BATCH_MS,
    FIRST_CHUNK,
    next_chunk,
    refresh_statistics,
    time_box,
)
from db.models import utcnow
from db.repeats import Repeats
from db.repository.base import InvalidValueError, StoreError, require_user
from db.repository.clusters import learn_pool_clusters
from db.repository.log_writes import add_imported_annotations
from db.repository.projects import project_settings
from db.repository.sentences import (
    add_sentences,
    check_split,
    create_batch,
    discard_import,
    find_batch,
    finish_batch,
    publish_batches,
    staged_sentence_ids,
)

LOG = logging.getLogger(__name__)
TagsAs = Literal["gold", "annotations"]


@dataclass(frozen=True)
class ImportProgress:
    """Where a running import is: sentences stored so far and the line reached in the file."""

    source: str
    sentences: int
    line: int
    total_lines: int

    @property
    def fraction(self) -> float:
        return min(1.0, self.line / self.total_lines) if self.total_lines else 1.0


@dataclass(frozen=True)
class ImportResult:
    batch_id: int
    source_name: str
    format: str
    split: str
    n_sentences: int
    n_tokens: int
    n_annotations: int
    content_hash: str
    repeated: int = 0  # sentences with the tokens of an earlier one in the file (db.repeats)
    repeated_lines: tuple[int, ...] = ()  # where the first of them start
    repeats_skipped: bool = False


ProgressCallback = Callable[[ImportProgress], None]


RUNNING_SECONDS = 60.0
"""An unfinished import written to less than this long ago is taken as still running."""


class ImportRunningError(StoreError):
    """The same file is being imported into the project right now."""


def _open_batch(
    conn: Connection, project_id: int, item: ImportInput, fmt: str, split: str, resume: bool
) -> tuple[int, int]:
    """``(batch id, sentences already staged)``: a new staged batch, or the unfinished import of
    the same bytes to resume (refused while it is still being written)."""
    previous = find_batch(conn, project_id, item.content_hash)
    if previous is None or previous.complete or not resume:
        return create_batch(conn, project_id, item.name, item.content_hash, fmt, split,
                            state="importing"), 0  # fmt: skip
    age = (utcnow() - (previous.updated_at or previous.created_at)).total_seconds()
    if age < RUNNING_SECONDS:
        raise ImportRunningError(
            f"{item.name}: this file is being imported (import #{previous.id}, "
            f"{previous.n_sentences:,} sentences so far); wait for it to finish, or if it stopped, "
            f"try again a minute after its last progress"
        )
    if previous.split != split:
        raise InvalidValueError(
            f"{item.name}: the interrupted import #{previous.id} went to the {previous.split} "
            f"split; resume it with split={previous.split!r} or delete it first"
        )
    return previous.id, previous.n_sentences


def _stage_one(
    engine: Engine,
    project_id: int,
    settings: dict[str, Any],
    item: ImportInput,
    staged: list[int],
    pairs: list[tuple[int, list[str]]],
    *,
    fmt: str | None,
    columns: list[str] | None,
    encoding: str | None,
    split: str,
    tags_as: TagsAs,
    progress: ProgressCallback | None,
    chunk_size: int,
    resume: bool,
    batch_ms: float,
    skip_repeats: bool = False,
) -> ImportResult:
    """Write one file's sentences into a staged batch, ``chunk_size`` sentences per short
    transaction (annotators' writes interleave); they stay invisible until published."""
    fmt = resolve_format(item.source(), fmt)
    roles, kw = reader_options(fmt, settings, encoding, columns)
    with write_transaction(engine) as conn:
        batch_id, done = _open_batch(conn, project_id, item, fmt, split, resume)
        earlier = staged_sentence_ids(conn, batch_id) if done and tags_as == "annotations" else []
    staged.append(batch_id)
    stream = read_corpus(item.source(), fmt, roles, **kw)
    document = os.path.basename(item.name) or item.name
    n_sentences = n_tokens = 0
    chunk: list[Sentence] = []
    batch_ms = time_box(engine, batch_ms)
    limit = min(chunk_size, FIRST_CHUNK) if batch_ms else chunk_size

    def flush() -> None:
        nonlocal n_sentences, limit
        if not chunk:
            return
        stored = chunk
        if tags_as == "annotations":
            stored = [Sentence(s.tokens, None, s.columns, s.meta, s.line) for s in chunk]
        start = time.perf_counter()
        with write_transaction(engine) as conn:
            ids = add_sentences(conn, project_id, batch_id, document, split, n_sentences, stored)
            finish_batch(conn, batch_id, n_sentences + len(chunk))
        if batch_ms:
            limit = next_chunk(len(chunk), time.perf_counter() - start, batch_ms, chunk_size)
        if tags_as == "annotations":
            pairs.extend((sid, list(s.tags)) for sid, s in zip(ids, chunk, strict=True))
        n_sentences += len(chunk)
        if progress is not None:
            progress(ImportProgress(item.name, n_sentences, chunk[-1].line, item.total_lines))
        chunk.clear()

    repeats = Repeats()
    for sent in checked(stream, item.name, fmt):
        if repeats.repeated(sent) and skip_repeats:
            continue
        if tags_as == "annotations" and sent.tags is None:
            raise CorpusError(item.name, sent.line, "no tags to import as annotations")
        n_tokens += len(sent.tokens)
        if n_sentences < done:  # resuming: this sentence is staged already
            if tags_as == "annotations":
                pairs.append((earlier[n_sentences], list(sent.tags)))
            n_sentences += 1
            continue
        chunk.append(sent)
        if len(chunk) >= limit:
            flush()
    flush()
    with write_transaction(engine) as conn:
        finish_batch(conn, batch_id, n_sentences)
    return ImportResult(
        batch_id, item.name, fmt, split, n_sentences, n_tokens,
        n_sentences if tags_as == "annotations" else 0, item.content_hash,
        repeats.count, tuple(repeats.lines), skip_repeats,
    )  # fmt: skip


def _run(
    engine: Engine,
    project_id: int,
    items: list[ImportInput],
    *,
    format: str | None = None,
    columns: list[str] | None = None,
    encoding: str | None = None,
    split: str = "pool",
    tags_as: TagsAs = "gold",
    annotator_id: int | None = None,
    progress: ProgressCallback | None = None,
    chunk_size: int = 500,
    resume: bool = True,
    batch_ms: float = BATCH_MS,
    skip_repeats: bool = False,
) -> list[ImportResult]:
    check_split(split)
    if tags_as not in ("gold", "annotations"):
        raise InvalidValueError(f"tags_as must be 'gold' or 'annotations', not {tags_as!r}")
    if tags_as == "annotations" and annotator_id is None:
        raise InvalidValueError("tags_as='annotations' needs the annotator_id they belong to")
    if chunk_size < 1:
        raise InvalidValueError("chunk_size must be >= 1")
    with read_transaction(engine) as conn:
        settings = project_settings(conn, project_id)
        if annotator_id is not None:
            require_user(conn, annotator_id)
    staged: list[int] = []
    pairs: list[tuple[int, list[str]]] = []
    try:
        results = [
            _stage_one(engine, project_id, settings, item, staged, pairs, fmt=format,
                       columns=columns, encoding=encoding, split=split, tags_as=tags_as,
                       progress=progress, chunk_size=chunk_size, resume=resume,
                       batch_ms=batch_ms, skip_repeats=skip_repeats)
            for item in items
        ]  # fmt: skip
        with write_transaction(engine) as conn:  # the one short transaction that shows them all
            if pairs:
                assert annotator_id is not None
                add_imported_annotations(conn, project_id, annotator_id, pairs, utcnow())
            publish_batches(conn, staged)
    except BaseException:
        _discard(engine, staged)
        raise
    refresh_statistics(engine)
    if split == "pool":  # the moment a project's clusters are learned (db.repository.clusters)
        learn_pool_clusters(engine, project_id, settings)
    return results


def _discard(engine: Engine, batch_ids: list[int]) -> None:
    """Remove the staged batches of a refused or cancelled import (best effort: one that cannot
    be removed now stays listed as an unfinished import, still invisible)."""
    for batch_id in batch_ids:
        try:
            discard_import(engine, batch_id)
        except Exception:  # noqa: BLE001 - the original error is the one to report
            LOG.exception("could not remove the staged import #%s", batch_id)


def import_file(
    engine: Engine, project_id: int, path: str | os.PathLike, **options: Any
) -> ImportResult:
    """Import one corpus file into a project, all or nothing.

    Options: ``format`` (any of ``cwal.io.corpus.FORMATS``; default by extension, else sniffed), ``columns``
    (CoNLL roles; default the project's ``columns`` setting), ``encoding``, ``split`` (``pool``
    or ``eval``), ``tags_as`` (``gold``: the file's tags are gold tags; ``annotations``: they
    become submissions of ``annotator_id``), ``progress`` (called with an ``ImportProgress``
    after every written chunk; raising from it cancels the import), ``chunk_size`` and
    ``batch_ms`` (the largest chunk, and the time box of its transaction), ``resume``
    (default True: an interrupted import of the same bytes is continued, not refused),
    ``skip_repeats`` (default False: a sentence with the tokens of an earlier one in the file is
    imported too; the result counts them and gives the first lines either way).
    Raises ``CorpusError`` (file, line, problem), ``DuplicateImportError`` or
    ``ImportRunningError``; in every case no sentence of the file becomes visible.
    """
    return _run(engine, project_id, [input_of_path(path)], **options)[0]


def import_bytes(
    engine: Engine, project_id: int, data: bytes, name: str, **options: Any
) -> ImportResult:
    """Import uploaded bytes (``name`` picks the format and names the input in errors; a ``.zip``
    imports every member, brat pairs together, all or nothing); the options are those of
    :func:`import_file`."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidValueError("import_bytes takes the file's bytes")
    check_upload_size(len(data), name)
    sources = expand_bytes(bytes(data), name)
    if len(sources) == 1 and sources[0].name == name:
        return _run(engine, project_id, [input_of_bytes(bytes(data), name)], **options)[0]
    results = _run(engine, project_id, [input_of_source(s) for s in sources], **options)
    return ImportResult(  # a zip archive imports as one unit: its members' totals
        results[-1].batch_id,
        name,
        "+".join(dict.fromkeys(r.format for r in results)),
        results[-1].split,
        sum(r.n_sentences for r in results),
        sum(r.n_tokens for r in results),
        sum(r.n_annotations for r in results),
        hashlib.sha256(bytes(data)).hexdigest(),
        sum(r.repeated for r in results),
        next((r.repeated_lines for r in results if r.repeated_lines), ()),
        results[-1].repeats_skipped,
    )


def add_sources(
    engine: Engine, project_id: int, sources: Iterable[Source], **options: Any
) -> list[ImportResult]:
    """Import several inputs (``cwal.io.bundle.expand`` of a folder or zip): either every one
    becomes visible (in one final transaction) or none does. Options as in :func:`import_file`."""
    items = [input_of_source(s) for s in sources]
    if not items:
        raise InvalidValueError("no files to import")
    return _run(engine, project_id, items, **options)


def add_files(
    engine: Engine, project_id: int, paths: Iterable[str | os.PathLike], **options: Any
) -> list[ImportResult]:
    """Import several files into an existing project: either every file becomes visible (in one
    final transaction) or none does. Options as in :func:`import_file`."""
    items = [input_of_path(p) for p in paths]
    if not items:
        raise InvalidValueError("no files to import")
    return _run(engine, project_id, items, **options)
