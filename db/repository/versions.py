"""Overlap versions and their adjudication.

An overlap sentence (``Project.overlap_share`` of the pool, picked by a hash of the sentence id so
every process agrees) is labeled independently by ``overlap_k`` annotators: each submission is
stored as a ``version`` row, which the model never learns. When the k-th version arrives and all
versions agree, their tags become the gold (a ``submitted`` row, adjudication method ``agreed``);
otherwise a reviewer settles it (``adjudicate``): the chosen, merged or edited tags are appended
as the ``submitted`` gold, with who, when and from which versions in ``adjudications``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, Text, func, insert, select, type_coerce

from db.engine import read_transaction, write_transaction
from db.models import Adjudication, Annotation, Project, Sentence, User
from db.repository.base import (
    InvalidValueError,
    NotFoundError,
    check_tags,
    check_time,
    lock_project_annotations,
)
from db.repository.projects import project_settings
from db.repository.state import not_retracted

_HASH_MUL, _HASH_MOD = 2654435761, 1 << 32  # Knuth's multiplicative hash of the sentence id
METHODS = ("accept", "merge", "edit")


def is_overlap(sentence_id: int, share: float) -> bool:
    """True when the sentence belongs to the overlap share (stable across processes)."""
    return (sentence_id * _HASH_MUL) % _HASH_MOD < share * _HASH_MOD


@dataclass(frozen=True)
class Version:
    id: int
    user_id: int
    annotator: str
    tags: list[str]
    created_at: datetime


def live_versions(conn: Connection, sentence_id: int) -> list[Version]:
    """Each annotator's newest non-retracted version of the sentence, oldest first."""
    newest = (
        select(func.max(Annotation.id))
        .where(
            Annotation.sentence_id == sentence_id,
            Annotation.status == "version",
            not_retracted(sentence_id=sentence_id),
        )
        .group_by(Annotation.user_id)
    )
    rows = conn.execute(
        select(Annotation.id, Annotation.user_id, User.name, Annotation.tags, Annotation.created_at)
        .join(User, User.id == Annotation.user_id)
        .where(Annotation.id.in_(newest))
        .order_by(Annotation.id)
    )
    return [Version(*row) for row in rows]


def _current_gold(conn: Connection, sentence_id: int) -> int | None:
    """Id of the sentence's current (newest non-retracted submitted) row, None without gold."""
    return conn.execute(
        select(func.max(Annotation.id)).where(
            Annotation.sentence_id == sentence_id,
            Annotation.status == "submitted",
            not_retracted(sentence_id=sentence_id),
        )
    ).scalar_one()


def wants_version(conn: Connection, sentence_id: int) -> bool:
    """Inside a submit's transaction: True when this submission is an independent version
    (an overlap pool sentence without gold yet)."""
    row = conn.execute(
        select(Sentence.split, Project.overlap_share)
        .join(Project, Project.id == Sentence.project_id)
        .where(Sentence.id == sentence_id)
    ).one()
    if row.split != "pool" or not is_overlap(sentence_id, row.overlap_share):
        return False
    return _current_gold(conn, sentence_id) is None


def _gold(
    conn: Connection,
    project_id: int,
    sentence_id: int,
    user_id: int,
    tags: list[str],
    sources: Sequence[int],
    method: str,
    now: datetime,
) -> int:
    current = _current_gold(conn, sentence_id)
    gold_id = conn.execute(
        insert(Annotation)
        .values(
            project_id=project_id,
            sentence_id=sentence_id,
            user_id=user_id,
            status="submitted",
            tags=tags,
            seconds=None,
            supersedes_id=current,
            created_at=now,
        )
        .returning(Annotation.id)
    ).scalar_one()
    conn.execute(
        insert(Adjudication).values(
            annotation_id=gold_id,
            project_id=project_id,
            sentence_id=sentence_id,
            source_ids=list(sources),
            method=method,
        )
    )
    return gold_id


def settle_if_agreed(
    conn: Connection, project_id: int, sentence_id: int, user_id: int, now: datetime
) -> int | None:
    """After a version: when ``overlap_k`` annotators gave versions and all are equal, store
    them as the gold (method ``agreed``, credited to ``user_id``, the last one); its id."""
    k = conn.execute(select(Project.overlap_k).where(Project.id == project_id)).scalar_one()
    versions = live_versions(conn, sentence_id)
    if len(versions) < k or any(v.tags != versions[0].tags for v in versions):
        return None
    sources = [v.id for v in versions]
    return _gold(conn, project_id, sentence_id, user_id, versions[0].tags, sources, "agreed", now)


def adjudicate(
    engine: Engine,
    sentence_id: int,
    reviewer_id: int,
    tags: Sequence[str],
    source_ids: Sequence[int],
    method: str,
    *,
    now: datetime | None = None,
) -> int:
    """Store the reviewer's decision as the sentence's gold (a ``submitted`` row the model learns;
    it supersedes any earlier gold) and where it came from; returns the gold row's id.

    ``source_ids`` are the versions it settles (all must be live versions of this sentence);
    ``method`` is ``accept`` (one version as it is), ``merge`` or ``edit``."""
    if method not in METHODS:
        raise InvalidValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    now = check_time(now)
    with write_transaction(engine) as conn:
        row = conn.execute(
            select(Sentence.project_id, Sentence.tokens).where(Sentence.id == sentence_id)
        ).one_or_none()
        if row is None:
            raise NotFoundError(f"no sentence with id {sentence_id}")
        settings = project_settings(conn, row.project_id)
        checked = check_tags(tags, len(row.tokens), settings)
        lock_project_annotations(conn, row.project_id)
        live = {v.id: v for v in live_versions(conn, sentence_id)}
        unknown = [i for i in source_ids if i not in live]
        if unknown or not source_ids:
            raise InvalidValueError(f"not live versions of sentence {sentence_id}: {unknown}")
        if method == "accept" and all(live[i].tags != checked for i in source_ids):
            raise InvalidValueError("accept takes one version's tags unchanged")
        return _gold(conn, row.project_id, sentence_id, reviewer_id, checked, source_ids, method,
                     now)  # fmt: skip


@dataclass(frozen=True)
class Disagreement:
    sentence_id: int
    tokens: list[str]
    versions: list[Version]
    differing_tokens: int  # tokens on which not every version has the same tag
    gold: list[str] | None


def overlap_versions(
    engine: Engine, project_id: int, sentence_ids: Sequence[int] | None = None
) -> dict[int, dict[int, Version]]:
    """Every overlap sentence's live versions (of ``sentence_ids`` only, when given):
    ``{sentence_id: {user_id: newest version}}``."""
    retracted = not_retracted(project_id)
    query = (
        select(
            Annotation.id,
            Annotation.sentence_id,
            Annotation.user_id,
            User.name,
            Annotation.tags,
            Annotation.created_at,
        )  # fmt: skip
        .join(User, User.id == Annotation.user_id)
        .where(Annotation.project_id == project_id, Annotation.status == "version", retracted)
        .order_by(Annotation.id)
    )
    out: dict[int, dict[int, Version]] = {}
    chunks = [None] if sentence_ids is None else [
        list(sentence_ids[i : i + 5000]) for i in range(0, len(sentence_ids), 5000)
    ]  # fmt: skip
    with engine.connect() as conn:
        for chunk in chunks:
            q = query if chunk is None else query.where(Annotation.sentence_id.in_(chunk))
            for vid, sid, uid, name, tags, at in conn.execution_options(yield_per=5000).execute(q):
                out.setdefault(sid, {})[uid] = Version(vid, uid, name, tags, at)
    return out


def _differing_sentences(engine: Engine, project_id: int, include_settled: bool) -> list[int]:
    """Ids of the overlap sentences whose annotators' newest live versions are not all the
    same, found in one query (the tags compared as stored text, so nothing is decoded)."""
    newest = (
        select(func.max(Annotation.id).label("id"))
        .where(
            Annotation.project_id == project_id,
            Annotation.status == "version",
            not_retracted(project_id),
        )
        .group_by(Annotation.sentence_id, Annotation.user_id)
        .subquery()
    )
    text = type_coerce(Annotation.tags, Text)
    query = (
        select(Annotation.sentence_id)
        .join(newest, newest.c.id == Annotation.id)
        .group_by(Annotation.sentence_id)
        .having(func.count(func.distinct(text)) > 1)
    )
    if not include_settled:
        settled = select(Adjudication.sentence_id).where(Adjudication.project_id == project_id)
        query = query.where(Annotation.sentence_id.not_in(settled))
    with read_transaction(engine) as conn:
        return list(conn.execute(query).scalars())


def adjudicated_ids(engine: Engine, project_id: int) -> dict[int, int]:
    """``{sentence_id: newest adjudication's gold annotation id}`` of the project."""
    query = (
        select(Adjudication.sentence_id, func.max(Adjudication.annotation_id))
        .where(Adjudication.project_id == project_id)
        .group_by(Adjudication.sentence_id)
    )
    with read_transaction(engine) as conn:
        return {int(s): int(a) for s, a in conn.execute(query)}


def disagreements(
    engine: Engine, project_id: int, *, include_settled: bool = False, limit: int = 200
) -> list[Disagreement]:
    """Overlap sentences whose versions differ, worst first (most differing tokens), without a
    settled gold unless ``include_settled``; at most ``limit``."""
    candidates = _differing_sentences(engine, project_id, include_settled)
    versions = overlap_versions(engine, project_id, candidates)
    settled = adjudicated_ids(engine, project_id)
    found: list[tuple[int, int]] = []
    for sid, by_user in versions.items():
        if len(by_user) < 2 or (sid in settled and not include_settled):
            continue
        tag_lists = [v.tags for v in by_user.values()]
        differing = sum(len(set(col)) > 1 for col in zip(*tag_lists, strict=True))
        if differing:
            found.append((differing, sid))
    found.sort(key=lambda x: (-x[0], x[1]))
    found = found[:limit]
    ids = [sid for _, sid in found]
    with read_transaction(engine) as conn:
        tokens = dict(
            conn.execute(select(Sentence.id, Sentence.tokens).where(Sentence.id.in_(ids))).all()
        )
        golds = dict(
            conn.execute(
                select(Annotation.sentence_id, Annotation.tags).where(
                    Annotation.id.in_([settled[s] for s in ids if s in settled])
                )
            ).all()
        )
    return [
        Disagreement(sid, tokens[sid], list(versions[sid].values()), n, golds.get(sid))
        for n, sid in found
    ]


def set_overlap(engine: Engine, project_id: int, share: float, k: int = 2) -> None:
    """Set the share (0..1) of pool sentences labeled by ``k`` (>= 2) annotators independently."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise InvalidValueError("overlap: k must be an integer >= 2 annotators")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise InvalidValueError("overlap: the share must be a number from 0 to 1")
    with write_transaction(engine) as conn:
        done = conn.execute(
            Project.__table__.update()
            .where(Project.id == project_id)
            .values(overlap_share=float(share), overlap_k=k)
        ).rowcount
    if not done:
        raise NotFoundError(f"no project with id {project_id}")


def get_overlap(engine: Engine, project_id: int) -> tuple[float, int]:
    """``(share, k)`` of the project's overlap."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(Project.overlap_share, Project.overlap_k).where(Project.id == project_id)
        ).one_or_none()
    if row is None:
        raise NotFoundError(f"no project with id {project_id}")
    return float(row.overlap_share), int(row.overlap_k)


def overlap_items(engine: Engine, project_id: int) -> list[dict[str, list[str]]]:
    """The agreement data: for each sentence with versions by two or more annotators,
    ``{annotator name: tags}`` (each annotator's newest live version), in sentence id order."""
    found = overlap_versions(engine, project_id)
    return [
        {v.annotator: v.tags for v in found[sid].values()}
        for sid in sorted(found)
        if len(found[sid]) >= 2
    ]
