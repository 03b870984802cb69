"""The ranked hand-out: up to ``n`` sentences leased in three statements, whatever the ranking's
length (``leases.lease_many`` and ``lease_next`` with candidates; the live service's ``next``).

1. drop the annotator's leases on sentences labeled meanwhile (an index lookup per lease);
2. pick the first ``n`` free sentences, their own live leases first (oldest first) then the
   ranking's order, locking them (PostgreSQL: ``FOR NO KEY UPDATE SKIP LOCKED``, so concurrent
   hand-outs pass over each other's picks);
3. lease the picks that a fresh statement still sees free (on PostgreSQL its snapshot sees every
   hand-out and submit committed before the lock was taken, closing the race that
   ``leases._take_locked`` describes), an upsert guarded by the expiry, RETURNING them.

A pick lost in between is replaced by the next free one. The ranking travels as one bound array
(PostgreSQL ``unnest ... WITH ORDINALITY``, SQLite ``json_each``): the statements are built once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import (
    ARRAY,
    JSON,
    Connection,
    Integer,
    bindparam,
    delete,
    func,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite

from db.models import Annotation, Lease, Sentence, UTCDateTime
from db.repository.state import available

_P = bindparam("project_id", type_=Integer)
_U = bindparam("user_id", type_=Integer)
_NOW = bindparam("now", type_=UTCDateTime())
_EXPIRES = bindparam("expires", type_=UTCDateTime())
_MAX_RACES = 50
_WINDOW = 64


def _id_list(dialect: str, name: str):
    """A bound list of ids as rows (id, ord): ``ord`` its 1-based position."""
    if dialect == "postgresql":
        param = bindparam(name, type_=ARRAY(Integer))
        rows = func.unnest(param).table_valued("id", with_ordinality="ord").render_derived()
        return select(rows.c.id.label("id"), rows.c.ord.label("ord")).subquery()
    rows = func.json_each(bindparam(name, type_=JSON)).table_valued("value", "key")
    return select(rows.c.value.label("id"), (rows.c.key + 1).label("ord")).subquery()


def _ranked_statements(dialect: str, insert_fn):
    free = available(_P, _U, _NOW)
    # per own lease (usually none): an index lookup of the sentence's labels
    undo = Annotation.__table__.alias("undo_row")
    retracted = (
        select(undo.c.supersedes_id)
        .where(undo.c.sentence_id == Lease.sentence_id, undo.c.status == "undone")
        .correlate_except(undo)
    )
    labeled = (
        select(Annotation.id)
        .where(
            Annotation.sentence_id == Lease.sentence_id,
            Annotation.status == "submitted",
            Annotation.id.not_in(retracted.where(undo.c.supersedes_id.is_not(None))),
        )
        .exists()
    )
    drop = delete(Lease).where(Lease.project_id == _P, Lease.user_id == _U, labeled)
    own = select(
        Lease.sentence_id.label("id"),
        (func.row_number().over(order_by=(Lease.leased_at, Lease.sentence_id)) - 2**30).label(
            "ord"
        ),
    ).where(Lease.project_id == _P, Lease.user_id == _U, Lease.expires_at > _NOW)
    ranked = _id_list(dialect, "ranked")
    cand = union_all(own, select(ranked.c.id, ranked.c.ord)).subquery()
    best = select(cand.c.id, func.min(cand.c.ord).label("ord")).group_by(cand.c.id).subquery()
    pick = (
        select(Sentence.id)
        .join(best, best.c.id == Sentence.id)
        .where(free)
        .order_by(best.c.ord)
        .limit(bindparam("n", type_=Integer))
        .with_for_update(of=Sentence, skip_locked=True, key_share=True)
    )
    picked = _id_list(dialect, "picked")
    rows = select(Sentence.id, _P, _U, _NOW, _EXPIRES).where(
        Sentence.id.in_(select(picked.c.id)), free
    )
    stmt = insert_fn(Lease).from_select(
        ["sentence_id", "project_id", "user_id", "leased_at", "expires_at"], rows
    )
    return drop, pick, taking_over(stmt)


def taking_over(stmt):
    """``stmt``, an insert into leases, that also takes over a sentence whose lease expired or is
    already the user's (bind parameters ``now``, ``user_id``); it returns the ids it leased."""
    return stmt.on_conflict_do_update(
        index_elements=[Lease.sentence_id],
        set_={
            "project_id": stmt.excluded.project_id,
            "user_id": stmt.excluded.user_id,
            "leased_at": stmt.excluded.leased_at,
            "expires_at": stmt.excluded.expires_at,
        },
        where=or_(Lease.expires_at <= _NOW, Lease.user_id == _U),
    ).returning(Lease.sentence_id)


_RANKED = {
    "postgresql": _ranked_statements("postgresql", postgresql.insert),
    "sqlite": _ranked_statements("sqlite", sqlite.insert),
}


def lease_ranked(
    conn: Connection,
    project_id: int,
    user_id: int,
    ranked: list[int],
    n: int,
    now: datetime,
    ttl: float,
) -> list[int]:
    """Inside a write transaction: up to ``n`` sentences leased to ``user_id``, their own live
    leases first, then the first free ones of ``ranked`` (three statements; a pick taken by
    someone else between the two last ones is replaced by the next free one)."""
    drop, pick, take = _RANKED[conn.dialect.name]
    params = {"project_id": project_id, "user_id": user_id, "now": now,
              "expires": now + timedelta(seconds=ttl)}  # fmt: skip
    conn.execute(drop, params)
    taken: list[int] = []
    lost: set[int] = set()
    window = _WINDOW + 4 * n  # the top of the ranking first: the pick's cost grows with its length
    for _ in range(_MAX_RACES):
        rest = [i for i in ranked if i not in lost and i not in taken]
        picks = _pick_free(conn, pick, params, rest[:window], n, taken)
        if len(picks) < n - len(taken) and len(rest) > window:
            picks = _pick_free(conn, pick, params, rest, n, taken)
        if not picks:
            break
        got = set(conn.execute(take, {**params, "picked": picks}).scalars())
        taken += [i for i in picks if i in got]
        lost.update(i for i in picks if i not in got)
        if len(taken) >= n or len(got) == len(picks):
            break
    return taken


def _pick_free(conn: Connection, pick, params: dict, ranked: list[int], n: int, taken: list[int]):
    """The free picks among the user's own leases and ``ranked`` not taken yet (own leases, the
    ones taken so far included, come first: ``n`` rows are asked for)."""
    rows = conn.execute(pick, {**params, "ranked": ranked, "n": n}).scalars()
    return [i for i in rows if i not in taken]
