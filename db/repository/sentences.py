"""Sentences and the import batches they arrive in; the unlabeled pool."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from cwal.io import Sentence as IoSentence
from db.engine import read_transaction, write_transaction
from db.models import ImportBatch, Sentence, utcnow
from db.repository.base import (
    DuplicateImportError,
    InvalidValueError,
    NotFoundError,
    check_time,
    is_unique_violation,
)
from db.repository.state import available, in_project

SPLITS = ("pool", "eval")


@dataclass(frozen=True)
class StoredSentence:
    """A sentence as stored: ``gold_tags`` are the file's tags (None for unlabeled text)."""

    id: int
    project_id: int
    batch_id: int
    document: str
    position: int
    line: int
    tokens: list[str]
    columns: dict[str, list[str]]
    gold_tags: list[str] | None
    meta: dict[str, Any]
    split: str

    def to_sentence(self) -> IoSentence:
        """The ``cwal.io.Sentence`` (gold tags as ``tags``) the engine and the writers use."""
        return IoSentence(
            list(self.tokens), self.gold_tags, dict(self.columns), dict(self.meta), self.line
        )


@dataclass(frozen=True)
class BatchInfo:
    id: int
    project_id: int
    source_name: str
    content_hash: str
    format: str
    split: str
    n_sentences: int
    created_at: datetime
    state: str = "done"
    updated_at: datetime | None = None

    @property
    def complete(self) -> bool:
        """False for an import that is running or was interrupted (its sentences are staged)."""
        return self.state == "done"


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise InvalidValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    return split


_BATCH_COLUMNS = (
    ImportBatch.id,
    ImportBatch.project_id,
    ImportBatch.source_name,
    ImportBatch.content_hash,
    ImportBatch.format,
    ImportBatch.split,
    ImportBatch.n_sentences,
    ImportBatch.created_at,
    ImportBatch.state,
    ImportBatch.updated_at,
)


def find_batch(conn: Connection, project_id: int, content_hash: str) -> BatchInfo | None:
    """The batch of this project that imported content with that hash, or None."""
    row = conn.execute(
        select(*_BATCH_COLUMNS).where(
            ImportBatch.project_id == project_id, ImportBatch.content_hash == content_hash
        )
    ).one_or_none()
    return None if row is None else BatchInfo(*row)


def create_batch(
    conn: Connection,
    project_id: int,
    source_name: str,
    content_hash: str,
    fmt: str,
    split: str,
    *,
    state: str = "done",
) -> int:
    """Open an import batch inside the caller's transaction (``state="importing"``: staged until
    :func:`publish_batches`); a duplicate content hash in the project raises
    DuplicateImportError (also when a concurrent import of the same bytes won)."""
    check_split(split)
    previous = find_batch(conn, project_id, content_hash)
    if previous is not None:
        raise DuplicateImportError(source_name, previous.id, previous.source_name)
    try:
        return conn.execute(
            insert(ImportBatch)
            .values(
                project_id=project_id,
                source_name=source_name,
                content_hash=content_hash,
                format=fmt,
                split=split,
                n_sentences=0,
                created_at=utcnow(),
                state=state,
                updated_at=utcnow(),
            )
            .returning(ImportBatch.id)
        ).scalar_one()
    except IntegrityError as exc:
        if is_unique_violation(exc):
            raise DuplicateImportError(source_name, -1, "a concurrent import") from None
        raise


def add_sentences(
    conn: Connection,
    project_id: int,
    batch_id: int,
    document: str,
    split: str,
    first_position: int,
    sentences: Sequence[IoSentence],
) -> list[int]:
    """Insert one chunk of a batch's sentences; returns their ids in order."""
    rows = [
        {
            "project_id": project_id,
            "batch_id": batch_id,
            "document": document,
            "position": first_position + k,
            "line": s.line,
            "tokens": list(s.tokens),
            "columns": dict(s.columns),
            "gold_tags": None if s.tags is None else list(s.tags),
            "meta": dict(s.meta),
            "split": split,
        }
        for k, s in enumerate(sentences)
    ]
    if not rows:
        return []
    result = conn.execute(
        insert(Sentence).returning(Sentence.id, sort_by_parameter_order=True), rows
    )
    return list(result.scalars())


def finish_batch(conn: Connection, batch_id: int, n_sentences: int) -> None:
    """Record the number of sentences a batch brought (so far, while it is staged)."""
    conn.execute(
        update(ImportBatch)
        .where(ImportBatch.id == batch_id)
        .values(n_sentences=n_sentences, updated_at=utcnow())
    )


def staged_sentence_ids(conn: Connection, batch_id: int) -> list[int]:
    """Ids of a batch's sentences in file order (to resume an import of annotations)."""
    query = select(Sentence.id).where(Sentence.batch_id == batch_id).order_by(Sentence.position)
    return list(conn.execute(query).scalars())


def publish_batches(conn: Connection, batch_ids: Sequence[int]) -> None:
    """Make staged batches visible, all at once (one small update in the caller's transaction)."""
    conn.execute(
        update(ImportBatch).where(ImportBatch.id.in_(list(batch_ids))).values(state="done")
    )


def incomplete_imports(engine: Engine, project_id: int) -> list[BatchInfo]:
    """The project's imports that are running or were interrupted (their sentences invisible);
    each can be resumed by importing the same file again, or deleted (:func:`discard_import`)."""
    return [b for b in list_import_batches(engine, project_id) if not b.complete]


def discard_import(engine: Engine, batch_id: int, chunk: int = 2000) -> int:
    """Delete an unfinished import and its staged sentences in short transactions (a finished
    import is refused: its sentences may carry labels); returns the sentences deleted."""
    with read_transaction(engine) as conn:
        state = conn.execute(
            select(ImportBatch.state).where(ImportBatch.id == batch_id)
        ).scalar_one_or_none()
    if state is None:
        raise NotFoundError(f"no import with id {batch_id}")
    if state == "done":
        raise InvalidValueError(f"import #{batch_id} is finished; only unfinished ones are deleted")
    deleted = 0
    while True:
        with write_transaction(engine) as conn:
            ids = select(Sentence.id).where(Sentence.batch_id == batch_id).limit(chunk)
            n = conn.execute(
                delete(Sentence).where(Sentence.id.in_(ids.scalar_subquery()))
            ).rowcount
            if not n:
                conn.execute(
                    delete(ImportBatch).where(
                        ImportBatch.id == batch_id, ImportBatch.state != "done"
                    )
                )
                return deleted
        deleted += n


def list_import_batches(engine: Engine, project_id: int) -> list[BatchInfo]:
    """The imports of a project in order (unfinished ones included: see ``complete``)."""
    with read_transaction(engine) as conn:
        rows = conn.execute(
            select(*_BATCH_COLUMNS)
            .where(ImportBatch.project_id == project_id)
            .order_by(ImportBatch.id)
        ).all()
    return [BatchInfo(*row) for row in rows]


_SENTENCE_COLUMNS = (
    Sentence.id,
    Sentence.project_id,
    Sentence.batch_id,
    Sentence.document,
    Sentence.position,
    Sentence.line,
    Sentence.tokens,
    Sentence.columns,
    Sentence.gold_tags,
    Sentence.meta,
    Sentence.split,
)


def get_sentence(engine: Engine, sentence_id: int) -> StoredSentence:
    """One sentence by id (NotFoundError otherwise)."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(*_SENTENCE_COLUMNS).where(Sentence.id == sentence_id)
        ).one_or_none()
    if row is None:
        raise NotFoundError(f"no sentence with id {sentence_id}")
    return StoredSentence(*row)


def document_context(
    engine: Engine, sentence_id: int, n: int = 1
) -> tuple[list[list[str]], list[list[str]]]:
    """The tokens of up to ``n`` sentences before and after ``sentence_id`` in its document (the
    same import and document, by position): what the editor shows around the sentence."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(Sentence.batch_id, Sentence.document, Sentence.position).where(
                Sentence.id == sentence_id
            )
        ).one_or_none()
        if row is None:
            raise NotFoundError(f"no sentence with id {sentence_id}")
        batch, document, at = row
        query = (
            select(Sentence.position, Sentence.tokens)
            .where(
                Sentence.batch_id == batch,
                Sentence.document == document,
                Sentence.position.between(at - n, at + n),
                Sentence.position != at,
            )
            .order_by(Sentence.position)
        )
        found = [(int(pos), list(tokens)) for pos, tokens in conn.execute(query)]
    return [t for pos, t in found if pos < at], [t for pos, t in found if pos > at]


def get_sentences(engine: Engine, ids: Iterable[int]) -> list[StoredSentence]:
    """Sentences by id, in the order of ``ids`` (unknown ids raise NotFoundError)."""
    wanted = list(ids)
    found: dict[int, StoredSentence] = {}
    with read_transaction(engine) as conn:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            for row in conn.execute(select(*_SENTENCE_COLUMNS).where(Sentence.id.in_(chunk))):
                found[row.id] = StoredSentence(*row)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFoundError(f"no sentences with ids {missing[:10]}")
    return [found[i] for i in wanted]


def iter_sentences(
    engine: Engine, project_id: int, split: str | None = None, batch_size: int = 1000
) -> Iterator[StoredSentence]:
    """Stream a project's sentences in import order (all, or one split), without loading all."""
    query = select(*_SENTENCE_COLUMNS).where(in_project(project_id))
    if split is not None:
        query = query.where(Sentence.split == check_split(split))
    query = query.order_by(Sentence.batch_id, Sentence.position)
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch_size).execute(query)
        for row in result:
            yield StoredSentence(*row)


def list_sentences(
    engine: Engine, project_id: int, split: str | None = None
) -> list[StoredSentence]:
    """A project's sentences (all, or the ``pool`` / ``eval`` split) with their gold tags."""
    return list(iter_sentences(engine, project_id, split))


def count_sentences(engine: Engine, project_id: int, split: str | None = None) -> int:
    """How many sentences a project (or one of its splits) holds."""
    query = select(func.count()).select_from(Sentence).where(in_project(project_id))
    if split is not None:
        query = query.where(Sentence.split == check_split(split))
    with read_transaction(engine) as conn:
        return conn.execute(query).scalar_one()


def sentence_ids(engine: Engine, project_id: int, split: str | None = None) -> list[int]:
    """Ids of a project's sentences (all, or one split), in id order."""
    query = select(Sentence.id).where(in_project(project_id))
    if split is not None:
        query = query.where(Sentence.split == check_split(split))
    with read_transaction(engine) as conn:
        return list(conn.execute(query.order_by(Sentence.id)).scalars().all())


def sentences_signature(engine: Engine, project_id: int) -> tuple[int, int, int]:
    """What changes whenever the project's visible sentences do, in one cheap round trip: the
    number of its sentences (staged ones too: a direct insert or a discarded import changes
    it), their highest id, and the number of its finished imports (a finished import makes its
    staged sentences visible). Sentences never change project or split."""
    ours = Sentence.project_id == project_id
    query = select(
        select(func.count()).select_from(Sentence).where(ours).scalar_subquery(),
        select(func.coalesce(func.max(Sentence.id), 0)).where(ours).scalar_subquery(),
        select(func.count())
        .select_from(ImportBatch)
        .where(ImportBatch.project_id == project_id, ImportBatch.state == "done")
        .scalar_subquery(),
    )
    with read_transaction(engine) as conn:
        n, top, done = conn.execute(query).one()
    return int(n), int(top), int(done)


def unlabeled_pool_ids(
    engine: Engine, project_id: int, annotator_id: int | None = None, now: datetime | None = None
) -> list[int]:
    """Ids of pool sentences that are unlabeled and not under another annotator's live lease
    (and, for ``annotator_id``, not skipped by that annotator), in id order."""
    now = check_time(now)
    query = (
        select(Sentence.id).where(available(project_id, annotator_id, now)).order_by(Sentence.id)
    )
    with read_transaction(engine) as conn:
        return list(conn.execute(query).scalars())
