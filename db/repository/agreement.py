"""The Agreement page's data, kept up to date from the annotation log instead of re-read whole.

Annotation ids of a project commit in increasing order (``lock_project_annotations``), so the
newest id is a watermark: the overlap sentences that changed since a read are those with a row
above it (a new version, an undo, a gold). A label change rewrites stored tags in place without
a new row; its ``label_changes`` row says so, and the next read is a full one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine, Text, func, select, type_coerce

from cwal.measures.agreement import SentenceCounts, counts_table
from db.engine import read_transaction
from db.models import Annotation, LabelChange, User
from db.repository.state import not_retracted


@dataclass(frozen=True)
class OverlapChanges:
    last_id: int  # the project's newest annotation id when read (0: none)
    label_mark: int  # its newest label change id (0: none)
    items: dict[int, dict[str, list[str]] | None]  # sentence -> {annotator: tags}, None: none


def _marks(engine: Engine, project_id: int) -> tuple[int, int]:
    with read_transaction(engine) as conn:
        last = conn.execute(
            select(func.max(Annotation.id)).where(Annotation.project_id == project_id)
        ).scalar_one()
        mark = conn.execute(
            select(func.max(LabelChange.id)).where(LabelChange.project_id == project_id)
        ).scalar_one()
    return last or 0, mark or 0


def _live_versions(
    engine: Engine, project_id: int, sentence_ids: Sequence[int] | None = None
) -> dict[int, dict[str, list[str]]]:
    """``{sentence: {annotator name: tags}}`` of every annotator's newest live version (of
    ``sentence_ids`` only, when given), as ``versions.overlap_versions`` finds them: only what
    agreement needs, the tags' JSON texts decoded in one parse."""
    query = (
        select(Annotation.sentence_id, User.name, type_coerce(Annotation.tags, Text))
        .join(User, User.id == Annotation.user_id)
        .where(
            Annotation.project_id == project_id,
            Annotation.status == "version",
            not_retracted(project_id),
        )
        .order_by(Annotation.id)
    )
    chunks = [None] if sentence_ids is None else [
        list(sentence_ids[i : i + 5000]) for i in range(0, len(sentence_ids), 5000)
    ]  # fmt: skip
    rows = []
    with read_transaction(engine) as conn:
        for chunk in chunks:
            q = query if chunk is None else query.where(Annotation.sentence_id.in_(chunk))
            rows += conn.execute(q).all()
    rows = [r for r in rows if r[2] is not None]
    tags = json.loads("[" + ",".join(r[2] for r in rows) + "]")
    out: dict[int, dict[str, list[str]]] = {}
    for (sid, name, _), t in zip(rows, tags, strict=True):
        out.setdefault(sid, {})[name] = t  # in id order: the newest version stays
    return out


def overlap_changes(engine: Engine, project_id: int, after_id: int | None) -> OverlapChanges:
    """The live versions (each annotator's newest, by name) of the sentences with an annotation
    row after ``after_id`` and up to the returned ``last_id`` (every version when None); a
    sentence left with no version maps to None. Read again when a label change commits
    meanwhile, so the items are all in one label configuration."""
    while True:
        last, mark = _marks(engine, project_id)
        if after_id is None:
            found = _live_versions(engine, project_id)
            changed = list(found)
        else:
            with read_transaction(engine) as conn:
                changed = list(
                    conn.execute(
                        select(Annotation.sentence_id)
                        .where(
                            Annotation.project_id == project_id,
                            Annotation.id > after_id,
                            Annotation.id <= last,
                        )
                        .distinct()
                    ).scalars()
                )
            found = _live_versions(engine, project_id, changed) if changed else {}
        if _marks(engine, project_id)[1] == mark:
            break
    items = {sid: found.get(sid) for sid in sorted(changed)}
    return OverlapChanges(last, mark, items)


class LiveAgreement:
    """A project's agreement table, updated from the log's new rows on each :meth:`table`
    (thread-safe): only the sentences changed since the last call are read and recounted
    (every one on the first call, after a label change, or when the log went back, as after a
    restore); the bootstrap intervals are recomputed from the per-sentence counts."""

    def __init__(self, engine: Engine, project_id: int, scheme: str = "IOB2") -> None:
        self.engine, self.project_id, self.scheme = engine, project_id, scheme
        self._lock = threading.Lock()
        self._counts: SentenceCounts | None = None
        self._last = self._mark = -1
        self._table: pd.DataFrame | None = None
        self._replicates = 0  # those of ``_table``
        self.recounted = 0  # rows recounted by the newest call that changed anything

    @property
    def counts(self) -> SentenceCounts | None:
        """The per-sentence counts as of the newest :meth:`table` (None before the first)."""
        return self._counts

    def table(self, replicates: int = 1000) -> pd.DataFrame:
        """The agreement table as of the newest annotation (``cwal.measures.agreement``)."""
        with self._lock:
            counts = self._counts
            changes = overlap_changes(
                self.engine, self.project_id, None if counts is None else self._last
            )
            if counts is not None and (
                changes.label_mark != self._mark or changes.last_id < self._last
            ):
                counts = None
                changes = overlap_changes(self.engine, self.project_id, None)
            same = counts is not None and changes.last_id == self._last
            if same and self._table is not None and self._replicates == replicates:
                return self._table
            if counts is None:
                counts = SentenceCounts(self.scheme)
            self.recounted = counts.update(changes.items)
            self._counts, self._last, self._mark = counts, changes.last_id, changes.label_mark
            self._table = counts_table(counts, replicates=replicates)
            self._replicates = replicates
            return self._table
