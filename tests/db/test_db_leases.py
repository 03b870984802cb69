"""Leases hand each sentence to one annotator at a time, and expire back into the pool."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from db.imports import import_file
from db.repository import (
    InvalidValueError,
    active_leases,
    current_lease,
    expire_leases,
    lease_many,
    lease_next,
    list_sentences,
    release_lease,
    renew_lease,
    sentence_ids,
    skip,
    submit_annotation,
    undo_last,
    unlabeled_pool_ids,
    update_project_settings,
)

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
TAGS = ["B-NP", "I-NP", "B-VP"]


@pytest.fixture
def ids(engine, project, corpus, tmp_path) -> list[int]:
    """Six pool sentences (and two eval sentences that must never be leased)."""
    import_file(engine, project, corpus(6))
    eval_file = tmp_path / "eval.conll"
    eval_file.write_text("e1 DT B-NP\n\ne2 DT B-NP\n\n")
    import_file(engine, project, eval_file, split="eval")
    return [s.id for s in list_sentences(engine, project, "pool")]


def test_two_annotators_get_different_sentences(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], now=T0)
    b = lease_next(engine, project, people["bob"], now=T0)
    assert a == ids[0] and b == ids[1]
    assert {(x.sentence_id, x.user_id) for x in active_leases(engine, project, now=T0)} == {
        (a, people["ann"]),
        (b, people["bob"]),
    }


def test_own_live_lease_is_returned_and_renewed(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], ttl=60, now=T0)
    again = lease_next(engine, project, people["ann"], ttl=60, now=T0 + timedelta(seconds=50))
    assert again == a
    lease = current_lease(engine, project, people["ann"], now=T0 + timedelta(seconds=100))
    assert lease is not None and lease.expires_at == T0 + timedelta(seconds=110)


def test_submission_releases_and_next_lease_moves_on(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], now=T0)
    submit_annotation(engine, a, people["ann"], TAGS, now=T0)
    assert current_lease(engine, project, people["ann"], now=T0) is None
    assert lease_next(engine, project, people["ann"], now=T0) == ids[1]
    assert a not in unlabeled_pool_ids(engine, project, now=T0)


def test_expired_lease_returns_the_sentence_to_the_pool(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], [ids[3]], ttl=60, now=T0)
    assert a == ids[3]
    soon, later = T0 + timedelta(seconds=59), T0 + timedelta(seconds=61)
    assert lease_next(engine, project, people["bob"], [ids[3]], now=soon) is None
    assert ids[3] not in unlabeled_pool_ids(engine, project, people["bob"], now=soon)
    assert ids[3] in unlabeled_pool_ids(engine, project, people["bob"], now=later)
    assert lease_next(engine, project, people["bob"], [ids[3]], now=later) == ids[3]
    assert [x.user_id for x in active_leases(engine, project, now=later)] == [people["bob"]]
    # ann's late submission is still stored (never lose an annotation), bob's lease stays
    submit_annotation(engine, a, people["ann"], TAGS, now=later)
    assert [x.user_id for x in active_leases(engine, project, now=later)] == [people["bob"]]


def test_default_ttl_comes_from_project_settings(engine, project, people, ids):
    update_project_settings(engine, project, {"lease_ttl_seconds": 30})
    lease_next(engine, project, people["ann"], now=T0)
    lease = current_lease(engine, project, people["ann"], now=T0)
    assert lease.expires_at == T0 + timedelta(seconds=30)


def test_candidates_are_taken_in_rank_order(engine, project, people, ids):
    ranking = [ids[4], ids[2], ids[0]]
    assert lease_next(engine, project, people["ann"], ranking, now=T0) == ids[4]
    assert lease_next(engine, project, people["bob"], ranking, now=T0) == ids[2]
    assert lease_next(engine, project, people["lea"], [ids[4], 10**9], now=T0) is None


def test_chooser_picks_among_available_ids(engine, project, people, ids):
    seen = []

    def last(available: list[int]) -> int:
        seen.append(list(available))
        return available[-1]

    lease_next(engine, project, people["ann"], [ids[5]], now=T0)
    assert lease_next(engine, project, people["bob"], chooser=last, now=T0) == ids[4]
    assert seen == [ids[:5]]  # ann's live lease is hidden, eval sentences never offered
    with pytest.raises(InvalidValueError):
        lease_next(engine, project, people["lea"], chooser=lambda _: ids[5], now=T0)


def test_release_renew_and_expire(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], ttl=10, now=T0)
    assert not release_lease(engine, a, people["bob"])
    assert renew_lease(engine, a, people["ann"], ttl=100, now=T0)
    assert current_lease(engine, project, people["ann"], now=T0 + timedelta(seconds=50))
    assert release_lease(engine, a, people["ann"])
    assert not renew_lease(engine, a, people["ann"], ttl=100, now=T0)
    b = lease_next(engine, project, people["bob"], ttl=10, now=T0)
    assert b == a  # released: first in the pool again
    assert expire_leases(engine, project, now=T0 + timedelta(seconds=5)) == 0
    assert expire_leases(engine, project, now=T0 + timedelta(seconds=11)) == 1
    assert active_leases(engine, project, now=T0) == []


def test_skip_hides_the_sentence_from_the_skipper_only(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], now=T0)
    skip(engine, a, people["ann"], seconds=3.0, now=T0)
    assert current_lease(engine, project, people["ann"], now=T0) is None
    assert a not in unlabeled_pool_ids(engine, project, people["ann"], now=T0)
    assert lease_next(engine, project, people["ann"], now=T0) == ids[1]
    assert lease_next(engine, project, people["bob"], now=T0) == a


def test_undo_leases_the_sentence_back(engine, project, people, ids):
    a = lease_next(engine, project, people["ann"], now=T0)
    submit_annotation(engine, a, people["ann"], TAGS, now=T0)
    b = lease_next(engine, project, people["ann"], now=T0)
    result = undo_last(engine, project, people["ann"], lease_ttl=60, now=T0)
    assert (result.sentence_id, result.leased) == (a, True)
    assert lease_next(engine, project, people["ann"], now=T0) == a
    assert b in unlabeled_pool_ids(engine, project, people["bob"], now=T0)  # b was given back


def test_exhausted_pool_gives_none(engine, project, people, ids):
    for sentence_id in ids:
        assert lease_next(engine, project, people["ann"], now=T0) == sentence_id
        submit_annotation(engine, sentence_id, people["ann"], TAGS, now=T0)
    assert lease_next(engine, project, people["bob"], now=T0) is None
    assert unlabeled_pool_ids(engine, project, now=T0) == []


def test_bad_ttl_and_naive_times_are_refused(engine, project, people, ids):
    with pytest.raises(InvalidValueError):
        lease_next(engine, project, people["ann"], ttl=0)
    with pytest.raises(InvalidValueError):
        lease_next(engine, project, people["ann"], now=datetime(2030, 1, 1))


def test_lease_many_hands_out_disjoint_pages(engine, project, people, ids):
    assert sentence_ids(engine, project, "pool") == ids
    assert len(sentence_ids(engine, project)) == 8
    first = lease_many(engine, project, people["ann"], 2, now=T0)
    assert first == ids[:2]
    assert lease_many(engine, project, people["ann"], 3, now=T0)[:2] == first  # own kept first
    page = lease_many(engine, project, people["bob"], 3, [ids[5], ids[0], ids[4]], now=T0)
    assert page == [ids[5], ids[4]]  # ids[0] is ann's
    rest = lease_many(engine, project, people["lea"], 10, now=T0)
    held = [x.sentence_id for x in active_leases(engine, project, now=T0)]
    assert sorted(held) == ids and not set(rest) & set(page)
    with pytest.raises(InvalidValueError):
        lease_many(engine, project, people["lea"], 0)


def test_a_locked_pick_is_rechecked_before_it_is_leased(engine, project, people, ids):
    """The race behind a PostgreSQL hand-out: its locking statement's snapshot can predate a
    lease and submission by someone else, so the pick it returns may already be labeled or
    held. The lease step looks again and refuses such a pick; a free one is leased."""
    from db.engine import write_transaction
    from db.repository.leases import _take_locked

    labeled, held, free = ids[0], ids[1], ids[2]
    assert lease_next(engine, project, people["ann"], now=T0) == labeled
    submit_annotation(engine, labeled, people["ann"], TAGS, now=T0)
    assert lease_next(engine, project, people["ann"], ttl=60, now=T0) == held
    with write_transaction(engine) as conn:
        assert not _take_locked(conn, project, labeled, people["bob"], T0, 60)
        assert not _take_locked(conn, project, held, people["bob"], T0, 60)
        assert _take_locked(conn, project, free, people["bob"], T0, 60)
    holders = {x.sentence_id: x.user_id for x in active_leases(engine, project, now=T0)}
    assert holders == {held: people["ann"], free: people["bob"]}


def test_the_ranked_take_rechecks_each_pick(engine, project, people, ids):
    """The ranked hand-out's lease statement (db/repository/handout.py) runs after the picking
    one, with a fresh snapshot: a pick labeled or leased by someone else meanwhile is refused,
    a free one leased (the same race as above, for the three-statement hand-out)."""
    from db.engine import write_transaction
    from db.repository.handout import _RANKED

    labeled, held, free = ids[0], ids[1], ids[2]
    assert lease_next(engine, project, people["ann"], now=T0) == labeled
    submit_annotation(engine, labeled, people["ann"], TAGS, now=T0)
    assert lease_next(engine, project, people["ann"], ttl=60, now=T0) == held
    params = {"project_id": project, "user_id": people["bob"], "now": T0,
              "expires": T0 + timedelta(seconds=60), "picked": [labeled, held, free]}  # fmt: skip
    with write_transaction(engine) as conn:
        take = _RANKED[conn.dialect.name][2]
        assert list(conn.execute(take, params).scalars()) == [free]
    holders = {x.sentence_id: x.user_id for x in active_leases(engine, project, now=T0)}
    assert holders == {held: people["ann"], free: people["bob"]}


def test_a_long_ranking_is_searched_past_its_top(engine, project, people, corpus):
    """The hand-out looks at the top of a ranking first; when every sentence there is taken it
    goes on down the whole ranking, in its order."""
    import_file(engine, project, corpus(100))
    pool = sentence_ids(engine, project, "pool")
    ranking = pool[::-1]  # best first: the highest ids
    top = ranking[:90]  # all but the last ten of the ranking are labeled or leased
    for sid in top[1::2]:
        submit_annotation(engine, sid, people["lea"], TAGS, now=T0)
    assert lease_many(engine, project, people["ann"], 45, top, ttl=3600, now=T0) == top[::2]
    got = lease_many(engine, project, people["bob"], 3, ranking, now=T0)
    assert got == ranking[90:93]
    again = lease_many(engine, project, people["bob"], 3, ranking, now=T0)
    assert sorted(again) == sorted(got)  # their own leases first (leased together: by id)


def test_the_ranked_hand_out_drops_own_leases_labeled_meanwhile(engine, project, people, ids):
    """A lease of theirs on a sentence someone else labeled is dropped, not handed out again;
    a sentence whose label was undone and leased back to them is theirs first."""
    ranking = ids[::-1]
    (held,) = lease_many(engine, project, people["ann"], 1, ranking, ttl=3600, now=T0)
    submit_annotation(engine, held, people["lea"], TAGS, now=T0)  # a lead's fix, say
    (moved,) = lease_many(engine, project, people["ann"], 1, ranking, ttl=3600, now=T0)
    assert (held, moved) == (ranking[0], ranking[1])
    assert {x.sentence_id for x in active_leases(engine, project, now=T0)} == {moved}
    submit_annotation(engine, moved, people["ann"], TAGS, now=T0)
    assert undo_last(engine, project, people["ann"], lease_ttl=60, now=T0).leased
    assert lease_many(engine, project, people["ann"], 2, ranking, now=T0) == [moved, ranking[2]]
