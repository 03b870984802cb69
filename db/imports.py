"""Transactional imports of corpora in any ``cwal.io`` format (CoNLL, JSONL, raw text, Prodigy ...).

An import is all or nothing: the file is read by the ``cwal.io`` readers inside one write
transaction, and any ``CorpusError`` (with its line number) rolls everything back. The content
hash of each file is recorded, so importing the same bytes into the same project twice is refused.
Tags are checked against the project's tag set and scheme by the readers.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, Engine

from cwal.errors import CorpusError
from cwal.io import Sentence, read_corpus, read_corpus_bytes
from cwal.io.corpus import UNLABELED, resolve_format
from cwal.io.source import Source
from db.engine import write_transaction
from db.models import utcnow
from db.repository.annotations import add_imported_annotations
from db.repository.base import InvalidValueError, require_user
from db.repository.projects import project_settings
from db.repository.sentences import add_sentences, check_split, create_batch, finish_batch

TagsAs = Literal["gold", "annotations"]
_HASH_CHUNK = 1 << 20
DEFAULT_MAX_UPLOAD_MB = 200


def max_upload_bytes() -> int:
    """The upload size limit: ``CWAL_MAX_UPLOAD_MB`` (default 200, as Streamlit's
    ``server.maxUploadSize`` in .streamlit/config.toml) in bytes."""
    raw = os.environ.get("CWAL_MAX_UPLOAD_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_UPLOAD_MB
    except ValueError:
        mb = DEFAULT_MAX_UPLOAD_MB
    return int(mb * 1024 * 1024) if mb > 0 else int(DEFAULT_MAX_UPLOAD_MB * 1024 * 1024)


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


ProgressCallback = Callable[[ImportProgress], None]


@dataclass(frozen=True)
class _Input:
    data: Path | bytes
    name: str
    content_hash: str
    total_lines: int

    def source(self) -> Source:
        return Source(self.data, self.name)


def _scan(chunks: Iterable[bytes]) -> tuple[str, int]:
    """The content hash and the number of lines (LF, CRLF or CR-only ends) of a file's bytes."""
    digest = hashlib.sha256()
    lines = 0
    last = b""
    for chunk in chunks:
        digest.update(chunk)
        lines += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
        if last == b"\r" and chunk[:1] == b"\n":
            lines -= 1  # a CRLF split between two chunks
        last = chunk[-1:] or last
    return digest.hexdigest(), lines + (1 if last and last not in b"\r\n" else 0)


def _from_path(path: str | os.PathLike) -> _Input:
    path = Path(path)
    with open(path, "rb") as handle:
        digest, lines = _scan(iter(lambda: handle.read(_HASH_CHUNK), b""))
    return _Input(path, str(path), digest, lines)


def _from_bytes(data: bytes, name: str) -> _Input:
    digest, lines = _scan([bytes(data)])
    return _Input(bytes(data), name, digest, lines)


def _reader_options(
    fmt: str, settings: dict[str, Any], encoding: str | None, columns: list[str] | None
) -> tuple[list[str] | None, dict[str, Any]]:
    """The ``columns`` argument and keywords of the reader for ``fmt`` under these settings."""
    if fmt in UNLABELED:
        return None, {"encoding": encoding}
    kw: dict[str, Any] = {
        "scheme": settings.get("scheme"),
        "strict": settings.get("strict_scheme", True),
        "tagset": settings.get("tagset"),
    }
    if encoding is not None:
        kw["encoding"] = encoding
    if fmt != "conll":
        return None, kw
    return (columns if columns is not None else settings.get("columns")), kw


def _checked(sentences: Iterator[Sentence], name: str, fmt: str) -> Iterator[Sentence]:
    """The readers' sentences plus the store's own check: a byte-order mark inside the file
    (left by concatenating files) is refused rather than stored inside a token."""
    for sent in sentences:
        for p, token in enumerate(sent.tokens):
            if "\ufeff" in token:
                line = sent.line + p if fmt == "conll" else sent.line
                raise CorpusError(name, line, "byte-order mark (U+FEFF) inside the file")
        yield sent


def _import_one(
    conn: Connection,
    project_id: int,
    settings: dict[str, Any],
    item: _Input,
    *,
    fmt: str | None,
    columns: list[str] | None,
    encoding: str | None,
    split: str,
    tags_as: TagsAs,
    annotator_id: int | None,
    progress: ProgressCallback | None,
    chunk_size: int,
) -> ImportResult:
    fmt = resolve_format(item.source(), fmt)
    roles, kw = _reader_options(fmt, settings, encoding, columns)
    batch_id = create_batch(conn, project_id, item.name, item.content_hash, fmt, split)
    if isinstance(item.data, Path):
        stream = read_corpus(item.data, fmt, roles, **kw)
    else:
        stream = read_corpus_bytes(item.data, item.name, fmt, roles, **kw)
    document = os.path.basename(item.name) or item.name
    now = utcnow()
    n_sentences = n_tokens = n_annotations = 0
    chunk: list[Sentence] = []

    def flush() -> None:
        nonlocal n_sentences, n_annotations
        if not chunk:
            return
        if tags_as == "annotations":
            for sent in chunk:
                if sent.tags is None:
                    raise CorpusError(item.name, sent.line, "no tags to import as annotations")
            stored = [Sentence(s.tokens, None, s.columns, s.meta, s.line) for s in chunk]
        else:
            stored = chunk
        ids = add_sentences(conn, project_id, batch_id, document, split, n_sentences, stored)
        if tags_as == "annotations":
            pairs = [(sid, list(s.tags)) for sid, s in zip(ids, chunk, strict=True)]
            add_imported_annotations(conn, project_id, annotator_id, pairs, now)
            n_annotations += len(pairs)
        n_sentences += len(chunk)
        if progress is not None:
            progress(ImportProgress(item.name, n_sentences, chunk[-1].line, item.total_lines))
        chunk.clear()

    for sent in _checked(stream, item.name, fmt):
        chunk.append(sent)
        n_tokens += len(sent.tokens)
        if len(chunk) >= chunk_size:
            flush()
    flush()
    finish_batch(conn, batch_id, n_sentences)
    return ImportResult(
        batch_id, item.name, fmt, split, n_sentences, n_tokens, n_annotations, item.content_hash
    )


def _run(
    engine: Engine,
    project_id: int,
    items: list[_Input],
    *,
    format: str | None = None,
    columns: list[str] | None = None,
    encoding: str | None = None,
    split: str = "pool",
    tags_as: TagsAs = "gold",
    annotator_id: int | None = None,
    progress: ProgressCallback | None = None,
    chunk_size: int = 500,
) -> list[ImportResult]:
    check_split(split)
    if tags_as not in ("gold", "annotations"):
        raise InvalidValueError(f"tags_as must be 'gold' or 'annotations', not {tags_as!r}")
    if tags_as == "annotations" and annotator_id is None:
        raise InvalidValueError("tags_as='annotations' needs the annotator_id they belong to")
    if chunk_size < 1:
        raise InvalidValueError("chunk_size must be >= 1")
    with write_transaction(engine) as conn:
        settings = project_settings(conn, project_id)
        if annotator_id is not None:
            require_user(conn, annotator_id)
        return [
            _import_one(
                conn,
                project_id,
                settings,
                item,
                fmt=format,
                columns=columns,
                encoding=encoding,
                split=split,
                tags_as=tags_as,
                annotator_id=annotator_id,
                progress=progress,
                chunk_size=chunk_size,
            )
            for item in items
        ]


def import_file(
    engine: Engine, project_id: int, path: str | os.PathLike, **options: Any
) -> ImportResult:
    """Import one corpus file into a project, all or nothing.

    Options: ``format`` (any of ``cwal.io.corpus.FORMATS``; default by extension, else sniffed), ``columns``
    (CoNLL roles; default the project's ``columns`` setting), ``encoding``, ``split`` (``pool``
    or ``eval``), ``tags_as`` (``gold``: the file's tags are gold tags; ``annotations``: they
    become submissions of ``annotator_id``), ``progress`` (called with an ``ImportProgress``
    after every ``chunk_size`` sentences; raising from it cancels the import).
    Raises ``CorpusError`` (file, line, problem) or ``DuplicateImportError``; either way the
    database is left unchanged.
    """
    return _run(engine, project_id, [_from_path(path)], **options)[0]


def import_bytes(
    engine: Engine, project_id: int, data: bytes, name: str, **options: Any
) -> ImportResult:
    """Import uploaded bytes (``name`` picks the format and names the input in errors); the
    options are those of :func:`import_file`."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidValueError("import_bytes takes the file's bytes")
    limit = max_upload_bytes()
    if len(data) > limit:
        raise CorpusError(
            name,
            None,
            f"the file has {len(data) / 2**20:.1f} MB, over the upload limit of "
            f"{limit / 2**20:.0f} MB (CWAL_MAX_UPLOAD_MB); split the file or raise the limit",
        )
    return _run(engine, project_id, [_from_bytes(bytes(data), name)], **options)[0]


def _from_source(source: Source) -> _Input:
    if source.path is not None:
        item = _from_path(source.path)
        return _Input(item.data, source.name, item.content_hash, item.total_lines)
    with source.open() as handle:
        return _from_bytes(handle.read(), source.name)


def add_sources(
    engine: Engine, project_id: int, sources: Iterable[Source], **options: Any
) -> list[ImportResult]:
    """Import several inputs (``cwal.io.bundle.expand`` of a folder or zip) in one transaction:
    every one is stored or none is. Options as in :func:`import_file`."""
    items = [_from_source(s) for s in sources]
    if not items:
        raise InvalidValueError("no files to import")
    return _run(engine, project_id, items, **options)


def add_files(
    engine: Engine, project_id: int, paths: Iterable[str | os.PathLike], **options: Any
) -> list[ImportResult]:
    """Import several files into an existing project in one transaction: either every file is
    stored or none is. Options as in :func:`import_file`."""
    items = [_from_path(p) for p in paths]
    if not items:
        raise InvalidValueError("no files to import")
    return _run(engine, project_id, items, **options)
