"""The append-only annotation log's writes on the annotators' path: submit and skip (undo and
imported submissions live in ``log_writes``, reads in ``history``).

Rows are never updated or deleted. A submission supersedes the sentence's previous current
annotation (``supersedes_id`` records which); an ``undone`` row retracts an earlier submission or
skip. Every write commits before the function returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Float,
    Integer,
    Text,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal,
    select,
    type_coerce,
)

from db.engine import write_transaction
from db.models import Annotation, JSONText, Lease, Project, Sentence, User, UTCDateTime
from db.repository.base import (
    ANNOTATION_LOCK_NS,
    BUSY_TRY_MS,
    InvalidValueError,
    NotFoundError,
    check_seconds,
    check_tags,
    check_time,
    retry_busy,
)
from db.repository.projects import DEFAULT_SETTINGS
from db.repository.state import not_retracted
from db.repository.versions import is_overlap, live_versions, settle_if_agreed, wants_version

STATUSES = ("submitted", "skipped", "undone", "version")


# The submit / skip path is built once with bound parameters (SQLite runs it under the write
# lock, so no time goes into composing SQL there).
_S = bindparam("sentence_id", type_=Integer)
_U = bindparam("user_id", type_=Integer)
_CONTEXT = (
    select(
        Sentence.project_id,
        Sentence.tokens,
        Sentence.split,
        Project.settings,
        Project.overlap_share,
        select(User.id).where(User.id == _U).scalar_subquery().label("user_ok"),
    )
    .join(Project, Project.id == Sentence.project_id)
    .where(Sentence.id == _S)
)
_CURRENT_ID = (
    select(func.max(Annotation.id))
    .where(
        Annotation.sentence_id == _S,
        Annotation.status == "submitted",
        not_retracted(sentence_id=_S),
    )
    .scalar_subquery()
)
# A late submission: the submitter holds no lease on the sentence (it expired and was taken or
# freed) and its current label is another annotator's; its user and the lease holder come with
# the context, in the same round trip.
_CONTEXT = _CONTEXT.add_columns(
    select(Lease.user_id).where(Lease.sentence_id == _S).scalar_subquery().label("lease_user"),
    select(Annotation.user_id)
    .where(Annotation.id == _CURRENT_ID)
    .scalar_subquery()
    .label("label_user"),
)
_ROW = {
    "project_id": bindparam("project_id", type_=Integer),
    "sentence_id": _S,
    "user_id": _U,
    "tags": bindparam("tags", type_=JSONText()),
    "seconds": bindparam("seconds", type_=Float),
    "created_at": bindparam("now", type_=UTCDateTime()),
}
_SUBMIT = (
    insert(Annotation)
    .values(**_ROW, status="submitted", supersedes_id=_CURRENT_ID)
    .returning(Annotation.id)
)
_SKIP = insert(Annotation).values(**_ROW, status="skipped").returning(Annotation.id)
_RELEASE = delete(Lease).where(Lease.sentence_id == _S, Lease.user_id == _U)
# PostgreSQL's first round trip releases the lease (and says whether the submitter held it),
# takes the project's annotation lock (see base.py) and reads the context -- as of the
# statement's start, maybe before a label rename that commits while it waits for the lock. So
# the common submit (lease held, no overlap sentence) checks its tags on that context and its
# insert (``_GUARDED``, after the lock) adds the row only if the settings are still the ones
# read; else it reads the context again under the lock. The lock covers the insert and the
# commit only (was: context, insert, commit; bench/service.py). SQLite's write lock serializes.
_RELEASED = _RELEASE.returning(Lease.sentence_id).cte("released")
_RELEASE_LOCK_CONTEXT = _CONTEXT.add_columns(
    func.pg_advisory_xact_lock(ANNOTATION_LOCK_NS, Sentence.project_id).label("locked"),
    select(func.count()).select_from(_RELEASED).scalar_subquery().label("held"),
    type_coerce(Project.settings, Text).label("settings_text"),
).add_cte(_RELEASED)
_UNCHANGED = exists().where(
    Project.id == bindparam("project_id", type_=Integer),
    type_coerce(Project.settings, Text) == bindparam("settings_text", type_=Text),
    Project.overlap_share == bindparam("overlap_share", type_=Float),
)
_GUARDED = (
    insert(Annotation)
    .from_select(
        [*_ROW, "status", "supersedes_id"],
        select(*(v.label(k) for k, v in _ROW.items()), literal("submitted"), _CURRENT_ID).where(
            _UNCHANGED
        ),
    )
    .returning(Annotation.id)
)


@dataclass(frozen=True)
class _Context:
    project_id: int
    n_tokens: int
    settings: dict[str, Any]
    maybe_version: bool  # an overlap pool sentence: the submission may be a version
    late: bool = False  # no lease of the submitter's, and the current label is someone else's


def _context(
    conn: Connection, sentence_id: int, user_id: int, held: bool | None = None
) -> _Context:
    """The sentence's project, length and settings, in one round trip that also checks the
    user exists (read under the project's annotation lock: a label change may alter the
    settings). ``held``: whether the user held the sentence's lease, when it was released
    already (else read here)."""
    row = conn.execute(_CONTEXT, {"sentence_id": sentence_id, "user_id": user_id}).one_or_none()
    if row is None:
        raise NotFoundError(f"no sentence with id {sentence_id}")
    return _context_of(row, sentence_id, user_id, held)


def _context_of(row: Any, sentence_id: int, user_id: int, held: bool | None) -> _Context:
    if row.user_ok is None:
        raise NotFoundError(f"no user with id {user_id}")
    overlap = row.split == "pool" and is_overlap(sentence_id, row.overlap_share)
    if held is None:
        held = row.lease_user == user_id
    late = not held and row.label_user not in (None, user_id)
    settings = {**DEFAULT_SETTINGS, **row.settings}
    return _Context(row.project_id, len(row.tokens), settings, overlap, late)


def _insert(conn: Connection, **values: Any) -> int:
    return conn.execute(insert(Annotation).values(**values).returning(Annotation.id)).scalar_one()


def _record(
    engine: Engine,
    statement: Any,
    sentence_id: int,
    annotator_id: int,
    tags: Sequence[str] | None,
    seconds: float | None,
    now: datetime | None,
    extra: dict[str, Any] | None = None,
) -> int:
    params = {"sentence_id": sentence_id, "user_id": annotator_id,
              "seconds": check_seconds(seconds), "now": check_time(now), **(extra or {})}  # fmt: skip
    what = "label" if statement is _SUBMIT else "skip"
    return retry_busy(lambda: _write(engine, statement, tags, params), what)


def _write(engine: Engine, statement: Any, tags: Sequence[str] | None, given: dict) -> int:
    """One try of a submit or skip (``given``: sentence_id, user_id, seconds, now); three round
    trips on PostgreSQL for the common submit (lease + lock + context, insert, commit). The
    tags are checked against the settings they are stored under, and whether the sentence is a
    version or a late answer is decided on the log as it will be when the row commits."""
    sentence_id, annotator_id, now = given["sentence_id"], given["user_id"], given["now"]
    params = {k: v for k, v in given.items() if k != "late_as_version"}
    with write_transaction(engine, busy_ms=BUSY_TRY_MS) as conn:
        postgres = conn.dialect.name == "postgresql"
        held = None
        if postgres:
            first = conn.execute(_RELEASE_LOCK_CONTEXT, params).one_or_none()
            if first is None:
                raise NotFoundError(f"no sentence with id {sentence_id}")
            held = first.held > 0
            done = _fast(conn, statement, tags, params, first)
            if done is not None:
                return done
        ctx = _context(conn, sentence_id, annotator_id, held)
        project_id = ctx.project_id
        checked = None if tags is None else check_tags(tags, ctx.n_tokens, ctx.settings)
        params.update(project_id=project_id, tags=checked)
        if statement is _SUBMIT and ctx.maybe_version and wants_version(conn, sentence_id):
            annotation_id = _insert(conn, **_version_row(params))
            if not postgres:
                conn.execute(_RELEASE, params)
            settle_if_agreed(conn, project_id, sentence_id, annotator_id, now)
            return annotation_id
        if statement is _SUBMIT and ctx.late and given.get("late_as_version", False):
            kept = keep_late(conn, project_id, sentence_id, annotator_id, params)
            if kept is not None:
                return kept
        if not postgres:
            conn.execute(_RELEASE, params)
        annotation_id = conn.execute(statement, params).scalar_one()
    return annotation_id


def _fast(
    conn: Connection, statement: Any, tags: Sequence[str] | None, params: dict, row: Any
) -> int | None:
    """PostgreSQL, under the lock: the write on the context read with it (``row``), when that
    decides it; None when the context must be read again (see ``_RELEASE_LOCK_CONTEXT``)."""
    ctx = _context_of(row, params["sentence_id"], params["user_id"], row.held > 0)
    values = {**params, "project_id": ctx.project_id}
    if statement is _SKIP:  # nothing read decides a skip
        return conn.execute(_SKIP, {**values, "tags": None}).scalar_one()
    if ctx.late or ctx.maybe_version or not row.held:
        return None
    try:
        values["tags"] = check_tags(tags or [], ctx.n_tokens, ctx.settings)
    except InvalidValueError:
        return None  # judged again on the settings as they are now
    extra = {"settings_text": row.settings_text, "overlap_share": row.overlap_share}
    return conn.execute(_GUARDED, {**values, **extra}).scalar_one_or_none()


def keep_late(
    conn: Connection, project_id: int, sentence_id: int, user_id: int, params: dict[str, Any]
) -> int | None:
    """Under the annotation lock: when the sentence's current label is still another
    annotator's, keep a late submission as a ``version`` beside a version copy of that label (for
    adjudication; the label stays the one the model learned) and return the version's id."""
    current = conn.execute(
        select(Annotation.user_id, Annotation.tags).where(Annotation.id == _CURRENT_ID), params
    ).one_or_none()
    if current is None or current.user_id == user_id:
        return None
    if not any(v.user_id == current.user_id for v in live_versions(conn, sentence_id)):
        _insert(conn, **_version_row({**params, "user_id": current.user_id,
                                      "tags": current.tags, "seconds": None}))  # fmt: skip
    return _insert(conn, **_version_row(params))


def _version_row(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "project_id": params["project_id"],
        "sentence_id": params["sentence_id"],
        "user_id": params["user_id"],
        "status": "version",
        "tags": params["tags"],
        "seconds": params["seconds"],
        "supersedes_id": None,
        "created_at": params["now"],
    }


def submit_annotation(
    engine: Engine,
    sentence_id: int,
    annotator_id: int,
    tags: Sequence[str],
    *,
    seconds: float | None = None,
    now: datetime | None = None,
    late_as_version: bool = False,
) -> int:
    """Store an annotator's tags for a sentence and release their lease on it; returns the new
    annotation id once committed. The tags are checked against the project's tag set and
    (when ``strict_scheme``) its scheme. A submission supersedes the sentence's previous current
    annotation, if any. On an overlap sentence without gold it is stored as an independent
    ``version`` instead (see ``versions``). With ``late_as_version`` (what annotators' submits
    from the live service use), a late one -- the submitter holds no lease on the sentence (it
    expired, and was taken or freed) and the sentence carries another annotator's label -- is
    kept as a ``version`` beside a version copy of that label, for adjudication, instead of
    superseding it; without it (a lead's fix on Review, scripts) it supersedes."""
    if tags is None:
        raise InvalidValueError("a submission needs tags (use skip() to pass on a sentence)")
    params = {"late_as_version": late_as_version}
    return _record(engine, _SUBMIT, sentence_id, annotator_id, tags, seconds, now, params)


def skip(
    engine: Engine,
    sentence_id: int,
    annotator_id: int,
    *,
    seconds: float | None = None,
    now: datetime | None = None,
) -> int:
    """Record that an annotator skipped a sentence (it is not offered to them again) and release
    their lease; returns the skip's id."""
    return _record(engine, _SKIP, sentence_id, annotator_id, None, seconds, now)
