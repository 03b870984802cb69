"""What annotators see: cold start, leases, the chosen strategy, consolidation, two servers."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from sqlalchemy import func, select

import cwal.live.ranking as ranking_module
from cwal.learners import SequenceLearner
from cwal.live.consolidation import retrain_seed, training_set
from db.models import Annotation
from db.repository import get_checkpoint, list_checkpoints
from db.store import SqlStore

from .conftest import SETTINGS
from .helpers import annotate, assert_same_model, online_reference


def _submissions(project) -> Counter:
    with project.engine.connect() as conn:
        rows = conn.execute(
            select(Annotation.sentence_id, func.count())
            .where(Annotation.project_id == project.id, Annotation.status == "submitted")
            .group_by(Annotation.sentence_id)
        ).all()
    return Counter({sid: n for sid, n in rows})


def test_cold_start_serves_the_seed_strategy_then_the_project_one(make_project) -> None:
    p = make_project(strategy_params={"seed_strategy": "shortest", "k": 10, "candidates": 500})
    live = p.session()
    (first,) = live.next(p.users["ann"])
    assert first.predicted is None and first.confidence is None
    assert first.strategy == "shortest" and first.model_version == 0
    assert p.lengths[first.sentence_id] == min(p.lengths.values())  # pool < candidates: all seen
    live.submit(first.sentence_id, p.gold[first.sentence_id], p.users["ann"])
    (second,) = live.next(p.users["ann"])
    assert second.strategy == "kd-pc" and second.scored_version == second.model_version == 1
    assert second.predicted == live.model.predict_one(second.tokens)
    assert len(second.confidence) == len(second.tokens)
    assert all(0.0 <= c <= 1.0 for c in second.confidence)
    assert second.confidence[second.least_confident] == min(second.confidence)


def test_random_seed_strategy_hands_out_distinct_sentences(make_project) -> None:
    p = make_project()
    live = p.session()
    got = [live.next(p.users[u])[0] for u in ("ann", "bob", "cat")]
    assert len({s.sentence_id for s in got}) == 3
    assert all(s.strategy == "random" and s.predicted is None for s in got)
    assert live.next(p.users["ann"])[0].sentence_id == got[0].sentence_id  # a reload: same lease


def test_a_lease_expires(make_project) -> None:
    p = make_project(lease_ttl_seconds=1)
    live = p.session()
    (held,) = live.next(p.users["ann"])
    (other,) = live.next(p.users["bob"])
    assert other.sentence_id != held.sentence_id  # leased to ann: never served to bob
    assert live.queue.current.ranked[0] == held.sentence_id
    time.sleep(1.3)
    (taken,) = live.next(p.users["cat"])
    assert taken.sentence_id == held.sentence_id  # the expired lease freed the best sentence


def test_skip_releases_the_lease_and_is_recorded(make_project) -> None:
    p = make_project()
    live = p.session()
    (sug,) = live.next(p.users["ann"])
    live.skip(sug.sentence_id, p.users["ann"])
    assert live.next(p.users["bob"])[0].sentence_id == sug.sentence_id  # free again
    assert live.next(p.users["ann"])[0].sentence_id != sug.sentence_id  # not offered to ann again
    assert live.status()["model_version"] == 0  # a skip teaches the model nothing


@pytest.mark.parametrize(
    "strategy",
    [
        "kd-pc",
        "kd-fixed",
        "random",
        "min-conf-margin",
        "errors-per-word",
        "errors-per-word+diverse",
    ],
)
def test_the_strategy_in_the_settings_is_the_one_used(make_project, monkeypatch, strategy) -> None:
    p = make_project(strategy=strategy)
    live = p.session()
    annotate(live, p, "ann", 3)
    ranked_by: list[str] = []
    real = ranking_module.rank_candidates

    def spy(rows, cands, name, s, **kw):
        ranked_by.append(name)
        return real(rows, cands, name, s, **kw)

    monkeypatch.setattr(ranking_module, "rank_candidates", spy)
    live.submit(*_next_gold(live, p, "ann"))
    (sug,) = live.next(p.users["bob"])
    live.wait_idle()
    assert sug.strategy == strategy == live.status()["strategy"]
    ranked = live.queue.current
    assert ranked.strategy == strategy
    assert ranked_by and set(ranked_by) == {strategy}
    assert ranked.score[ranked.ranked[0]] == min(ranked.score.values())
    assert sug.predicted is not None and sug.confidence is not None  # always KD-PC pre-fill


def _next_gold(live, p, user):
    (sug,) = live.next(p.users[user])
    return sug.sentence_id, p.gold[sug.sentence_id], p.users[user]


def test_consolidation_under_concurrent_submissions_loses_no_update(
    make_project, monkeypatch
) -> None:
    p = make_project(n=150, consolidation_interval=6)
    live = p.session()
    fit = SequenceLearner.fit

    def slow_fit(self, *args, **kwargs):
        time.sleep(0.5)  # submissions keep arriving while the retrain runs
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(SequenceLearner, "fit", slow_fit)
    users = ["ann", "bob", "cat"]
    threads = [threading.Thread(target=annotate, args=(live, p, u, 10)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    live.wait_idle()
    monkeypatch.undo()
    status = live.status()
    assert status["model_version"] == status["labeled_sentences"] == 30
    assert any(c["replayed_after"] > 0 for c in live.consolidations)  # applied before a swap
    cp = list_checkpoints(p.engine, p.id)[-1]
    assert status["checkpoint_id"] == cp.id
    # independent truth: the checkpoint is a retrain on exactly the labels up to its id ...
    rows = SqlStore(p.engine).current_annotations(p.id, cp.last_annotation_id)
    retrained = live.spec.fresh().fit(
        training_set(rows), epochs=cp.info["epochs"], seed=retrain_seed(p.id, cp.last_annotation_id)
    )
    stored = SequenceLearner.from_bytes(get_checkpoint(p.engine, cp.id).state)
    assert_same_model(stored, retrained)
    # ... and the live model is that checkpoint plus every later label, none lost
    later = [r for r in SqlStore(p.engine).log_after(p.id, cp.last_annotation_id)]
    for r in later:
        stored.learn_one(r.tokens, r.tags)
    assert_same_model(live.model, stored)
    assert sum(_submissions(p).values()) == 30


def test_two_sessions_on_one_database_stay_consistent(make_project) -> None:
    p = make_project(n=150)
    a, b = p.session(), p.session()
    plan = [(a, "ann"), (a, "bob"), (b, "cat"), (b, "dan")]
    threads = [threading.Thread(target=annotate, args=(s, p, u, 6)) for s, u in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = _submissions(p)
    assert sum(counts.values()) == 24 and max(counts.values()) == 1  # never the same sentence
    a.sync()
    b.sync()
    assert a.status()["model_version"] == b.status()["model_version"] == 24
    with p.engine.connect() as conn:
        order = conn.execute(
            select(Annotation.sentence_id)
            .where(Annotation.project_id == p.id, Annotation.status == "submitted")
            .order_by(Annotation.id)
        ).scalars()
        reference = online_reference(p, list(order), SETTINGS["tagset"])
    assert_same_model(a.model, reference)  # both applied every label, in id order
    assert_same_model(b.model, reference)


def test_live_session_keeps_one_session_per_project(make_project) -> None:
    from db.store import live_session

    p, q = make_project(name="one"), make_project(name="two")
    first = live_session(p.engine, p.id)
    assert live_session(p.engine, p.id) is first  # the process's one session of the project
    other = live_session(p.engine, q.id)
    assert other is not first and other.project_id == q.id
    (sug,) = first.next(p.users["ann"])
    assert sug.sentence_id in p.gold
