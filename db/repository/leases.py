"""Leases: handing sentences out so that two annotators never hold the same one at once.

Guarantees, on both backends:
* ``leases.sentence_id`` is the primary key, so a sentence has at most one lease row; a new lease
  replaces an existing row only when that lease has expired (an upsert guarded by the expiry).
* On PostgreSQL the chosen sentence row is locked ``FOR NO KEY UPDATE SKIP LOCKED``, so
  concurrent ``lease_next`` calls pass over each other's picks instead of waiting; on SQLite the
  whole hand-out runs in one ``BEGIN IMMEDIATE`` write transaction.
* ``lease_next`` returns (and renews) the annotator's own live lease first, so asking again
  (a page reload) gives the same sentence; ``lease_many`` hands out several at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, Integer, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from db.engine import read_transaction, write_transaction
from db.models import Lease, Sentence, UTCDateTime
from db.repository.base import InvalidValueError, check_time
from db.repository.handout import lease_ranked, taking_over
from db.repository.projects import project_settings
from db.repository.state import available

Chooser = Callable[[list[int]], int | None]
_CHUNK = 500
_MAX_RACES = 50


@dataclass(frozen=True)
class LeaseInfo:
    sentence_id: int
    project_id: int
    user_id: int
    leased_at: datetime
    expires_at: datetime


def _check_ttl(ttl: float) -> float:
    if not ttl > 0:
        raise InvalidValueError(f"lease ttl must be > 0 seconds, got {ttl!r}")
    return float(ttl)


# Statements of the hand-out path, built once with bound parameters: on SQLite they run while
# the database write lock is held, so no time is spent there composing SQL.
_P = bindparam("project_id", type_=Integer)
_U = bindparam("user_id", type_=Integer)
_S = bindparam("sentence_id", type_=Integer)
_NOW = bindparam("now", type_=UTCDateTime())
_EXPIRES = bindparam("expires", type_=UTCDateTime())

# Available sentences, locked for this transaction; rows another hand-out holds are skipped.
# (SQLite ignores the locking clause: its write transaction already excludes the others.)
_LOCKABLE = (
    select(Sentence.id)
    .where(available(_P, _U, _NOW))
    .with_for_update(of=Sentence, skip_locked=True, key_share=True)
)
_FIRST_FREE = _LOCKABLE.order_by(Sentence.id).limit(1)
_CLAIM = _LOCKABLE.where(Sentence.id == _S)
_STILL_FREE = select(Sentence.id).where(Sentence.id == _S, available(_P, _U, _NOW))
_OWN = (
    select(Lease.sentence_id)
    .where(Lease.project_id == _P, Lease.user_id == _U, Lease.expires_at > _NOW)
    .order_by(Lease.leased_at)
)
_DROP_OWN = delete(Lease).where(Lease.sentence_id == _S, Lease.user_id == _U)


def _upsert(dialect_insert):
    stmt = dialect_insert(Lease).values(
        sentence_id=_S, project_id=_P, user_id=_U, leased_at=_NOW, expires_at=_EXPIRES
    )
    return taking_over(stmt)


_UPSERT = {"postgresql": _upsert(postgresql.insert), "sqlite": _upsert(sqlite.insert)}


def take_lease(
    conn: Connection, project_id: int, sentence_id: int, user_id: int, now: datetime, ttl: float
) -> bool:
    """Inside a write transaction: lease the sentence to ``user_id`` unless another annotator
    holds a live lease on it (then False). An expired lease or the user's own is replaced."""
    params = {
        "sentence_id": sentence_id,
        "project_id": project_id,
        "user_id": user_id,
        "now": now,
        "expires": now + timedelta(seconds=_check_ttl(ttl)),
    }
    return conn.execute(_UPSERT[conn.dialect.name], params).first() is not None


def _take_locked(
    conn: Connection, project_id: int, sentence_id: int, user_id: int, now: datetime, ttl: float
) -> bool:
    """Lease a sentence whose row this transaction has just locked, if it is still free.

    On PostgreSQL (READ COMMITTED) the locking statement's snapshot may predate another
    hand-out that leased the sentence, committed (releasing the row lock) and was then
    submitted, dropping its lease: that statement still saw the sentence free. A fresh
    statement after the lock sees every such commit, so this recheck closes the race (on
    SQLite, where the write lock already serializes hand-outs, it is one cheap lookup).
    """
    mine = {"project_id": project_id, "user_id": user_id, "now": now, "sentence_id": sentence_id}
    if conn.execute(_STILL_FREE, mine).scalar_one_or_none() is None:
        return False
    return take_lease(conn, project_id, sentence_id, user_id, now, ttl)


def _claim(
    conn: Connection, project_id: int, user_id: int, sentence_id: int, now: datetime, ttl: float
) -> bool:
    params = {"project_id": project_id, "user_id": user_id, "now": now, "sentence_id": sentence_id}
    locked = conn.execute(_CLAIM, params).scalar_one_or_none()
    return locked is not None and _take_locked(conn, project_id, sentence_id, user_id, now, ttl)


def _available_ids(
    conn: Connection, project_id: int, user_id: int, now: datetime, among: Sequence[int] | None
) -> list[int]:
    query = select(Sentence.id).where(available(project_id, user_id, now))
    if among is not None:
        query = query.where(Sentence.id.in_(list(among)))
    return list(conn.execute(query.order_by(Sentence.id)).scalars())


def _keep_own_leases(
    conn: Connection, project_id: int, user_id: int, now: datetime, ttl: float, limit: int
) -> list[int]:
    """Renew and return up to ``limit`` of the user's live leases in the project whose
    sentences are still available; leases on sentences labeled meanwhile are dropped."""
    params = {"project_id": project_id, "user_id": user_id, "now": now}
    kept: list[int] = []
    for sentence_id in list(conn.execute(_OWN, params).scalars()):
        mine = {**params, "sentence_id": sentence_id}
        if conn.execute(_STILL_FREE, mine).scalar_one_or_none() is None:
            conn.execute(_DROP_OWN, mine)
        elif len(kept) < limit:
            take_lease(conn, project_id, sentence_id, user_id, now, ttl)
            kept.append(sentence_id)
    return kept


def lease_next(
    engine: Engine,
    project_id: int,
    annotator_id: int,
    candidate_ids: Sequence[int] | None = None,
    *,
    chooser: Chooser | None = None,
    ttl: float | None = None,
    now: datetime | None = None,
    busy_ms: int | None = None,
) -> int | None:
    """Atomically lease a sentence to an annotator and return its id (None: nothing available).

    The annotator's own live lease, if any, is renewed and returned. Otherwise the sentence is
    the first available one of ``candidate_ids`` (a ranking, best first), or the one
    ``chooser(available_ids)`` picks, or the lowest available id. ``ttl`` defaults to the
    project's ``lease_ttl_seconds``; an expired lease puts its sentence back in the pool.
    ``busy_ms``: as in ``write_transaction`` (callers that retry pass a short wait).
    """
    now = check_time(now)
    with write_transaction(engine, busy_ms=busy_ms) as conn:
        if ttl is None:
            ttl = project_settings(conn, project_id)["lease_ttl_seconds"]
        ttl = _check_ttl(ttl)
        if candidate_ids is not None:
            ranked = [int(i) for i in candidate_ids]
            got = lease_ranked(conn, project_id, annotator_id, ranked, 1, now, ttl)
            return got[0] if got else None
        own = _keep_own_leases(conn, project_id, annotator_id, now, ttl, limit=1)
        if own:
            return own[0]
        if chooser is not None:
            free_ids = _available_ids(conn, project_id, annotator_id, now, None)
            while free_ids:
                choice = chooser(list(free_ids))
                if choice is None:
                    return None
                if choice not in free_ids:
                    raise InvalidValueError(f"chooser returned {choice!r}, not an available id")
                if _claim(conn, project_id, annotator_id, choice, now, ttl):
                    return choice
                free_ids.remove(choice)
            return None
        params = {"project_id": project_id, "user_id": annotator_id, "now": now}
        for _ in range(_MAX_RACES):
            first = conn.execute(_FIRST_FREE, params).scalar_one_or_none()
            if first is None:
                return None
            if _take_locked(conn, project_id, first, annotator_id, now, ttl):
                return first
        return None


def lease_many(
    engine: Engine,
    project_id: int,
    annotator_id: int,
    n: int,
    candidate_ids: Sequence[int] | None = None,
    *,
    ttl: float | None = None,
    now: datetime | None = None,
    busy_ms: int | None = None,
) -> list[int]:
    """Atomically lease up to ``n`` sentences to an annotator (a page, or a prefetch): their
    live leases first (renewed), then the first available of ``candidate_ids`` or of the pool
    in id order. Same guarantees (and ``busy_ms``) as :func:`lease_next`; may return fewer (or
    none)."""
    if n < 1:
        raise InvalidValueError(f"n must be >= 1, got {n!r}")
    now = check_time(now)
    with write_transaction(engine, busy_ms=busy_ms) as conn:
        if ttl is None:
            ttl = project_settings(conn, project_id)["lease_ttl_seconds"]
        ttl = _check_ttl(ttl)
        if candidate_ids is not None:
            ranked = [int(i) for i in candidate_ids]
            return lease_ranked(conn, project_id, annotator_id, ranked, n, now, ttl)
        taken = _keep_own_leases(conn, project_id, annotator_id, now, ttl, limit=n)
        params = {"project_id": project_id, "user_id": annotator_id, "now": now}
        for _ in range(_MAX_RACES):
            if len(taken) >= n:
                break
            query = _LOCKABLE.where(Sentence.id.not_in(taken)).order_by(Sentence.id)
            batch = list(conn.execute(query.limit(n - len(taken)), params).scalars())
            if not batch:
                break
            taken += [i for i in batch if _take_locked(conn, project_id, i, annotator_id, now, ttl)]
        return taken


def release_lease(engine: Engine, sentence_id: int, annotator_id: int) -> bool:
    """Give a sentence back to the pool; False when the annotator held no lease on it."""
    with write_transaction(engine) as conn:
        query = delete(Lease).where(Lease.sentence_id == sentence_id, Lease.user_id == annotator_id)
        return conn.execute(query).rowcount == 1


def release_leases(engine: Engine, annotator_id: int) -> int:
    """Give every sentence the annotator holds back to the pool (sign-out); how many."""
    with write_transaction(engine) as conn:
        return conn.execute(delete(Lease).where(Lease.user_id == annotator_id)).rowcount


def renew_lease(
    engine: Engine,
    sentence_id: int,
    annotator_id: int,
    ttl: float,
    now: datetime | None = None,
) -> bool:
    """Extend the annotator's lease to ``now + ttl``; False when it is no longer theirs."""
    now = check_time(now)
    expires = now + timedelta(seconds=_check_ttl(ttl))
    with write_transaction(engine) as conn:
        query = (
            update(Lease)
            .where(Lease.sentence_id == sentence_id, Lease.user_id == annotator_id)
            .values(expires_at=expires)
        )
        return conn.execute(query).rowcount == 1


_COLUMNS = (Lease.sentence_id, Lease.project_id, Lease.user_id, Lease.leased_at, Lease.expires_at)


def current_lease(
    engine: Engine, project_id: int, annotator_id: int, now: datetime | None = None
) -> LeaseInfo | None:
    """The annotator's live lease in the project, or None."""
    now = check_time(now)
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(*_COLUMNS)
            .where(
                Lease.project_id == project_id,
                Lease.user_id == annotator_id,
                Lease.expires_at > now,
            )
            .order_by(Lease.leased_at)
            .limit(1)
        ).one_or_none()
    return None if row is None else LeaseInfo(*row)


def active_leases(engine: Engine, project_id: int, now: datetime | None = None) -> list[LeaseInfo]:
    """All live leases of a project, by sentence."""
    now = check_time(now)
    with read_transaction(engine) as conn:
        rows = conn.execute(
            select(*_COLUMNS)
            .where(Lease.project_id == project_id, Lease.expires_at > now)
            .order_by(Lease.sentence_id)
        ).all()
    return [LeaseInfo(*row) for row in rows]


def expire_leases(
    engine: Engine, project_id: int | None = None, now: datetime | None = None
) -> int:
    """Delete expired lease rows (housekeeping: an expired lease already frees its sentence)."""
    now = check_time(now)
    with write_transaction(engine) as conn:
        query = delete(Lease).where(Lease.expires_at <= now)
        if project_id is not None:
            query = query.where(Lease.project_id == project_id)
        return conn.execute(query).rowcount
