"""The model views the store builds from ``cwal.reports`` (``db.repository.analysis``) and the
memo that caches them (``cwal.reports.memo``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def demo_store(tmp_path: Path):
    from db import open_database
    from db import repository as repo
    from db.repository import analysis
    from db.service import install_demo

    engine = open_database(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    project = install_demo(engine)
    user = repo.add_user(engine, "lena", "a long password", role="lead")
    yield engine, project, user
    analysis.clear_cache()
    engine.dispose()


def test_store_queries_and_views(demo_store) -> None:
    from db import repository as repo
    from db.repository import analysis, learning_curve

    engine, project, user = demo_store
    pool = repo.sentence_ids(engine, project, "pool")
    first, second = repo.get_sentences(engine, pool[:2])
    tags1 = ["B-PER"] + ["O"] * (len(first.tokens) - 1)
    a1 = repo.submit_annotation(engine, first.id, user, tags1)
    a2 = repo.submit_annotation(engine, second.id, user, ["O"] * len(second.tokens))
    a3 = repo.submit_annotation(engine, first.id, user, ["O"] * len(first.tokens))
    assert analysis.current_label(engine, first.id) == ["O"] * len(first.tokens)
    repo.undo_last(engine, project, user)
    assert analysis.current_label(engine, first.id) == tags1
    assert analysis.current_label(engine, pool[2]) is None

    log = analysis.label_log(engine, project)
    assert log["id"].tolist()[:3] == [a1, a2, a3]
    assert log["status"].tolist() == ["submitted", "submitted", "submitted", "undone"]
    assert log["supersedes_id"].tolist()[2:] == [a1, a3]
    assert log["n_tokens"].tolist()[:2] == [len(first.tokens), len(second.tokens)]
    assert analysis.unlabeled_pool_ids(engine, project) == pool[2:]

    view = analysis.model_view(engine, project)
    assert view.state.version == 4 and view.state.trained
    assert view.labeled_sentences == 2 and set(view.annotators) == {first.id, second.id}
    assert view.pool_sentences == len(pool) - 2
    assert set(view.pool["sentence_id"]) <= set(pool[2:])
    assert 0.0 < view.pool_estimate <= 1.0 and view.eval_scores is not None
    assert analysis.model_view(engine, project) is view  # cached while nothing changed
    pool_only = analysis.pool_view(engine, project)  # the part the dashboard reads
    assert not hasattr(pool_only, "labeled") and pool_only.pool is view.pool
    assert pool_only.eval_scores == view.eval_scores
    points = learning_curve.curve_points(engine, project)
    assert points["words"].tolist() == [len(first.tokens) + len(second.tokens)]
    assert points["pool_estimate"].tolist() == [view.pool_estimate]
    repo.submit_annotation(
        engine, pool[2], user, ["O"] * len(repo.get_sentence(engine, pool[2]).tokens)
    )
    # a page that accepts a lag gets the previous view at once; the new one lands in the background
    assert analysis.model_view(engine, project, max_lag=analysis.PAGE_LAG) is view
    analysis.wait_fresh(engine, project, 60)
    assert not analysis.refreshing(engine, project)
    fresh = analysis.model_view(engine, project, max_lag=analysis.PAGE_LAG)
    assert fresh is not view and fresh.state.version == 5 and fresh.labeled_sentences == 3
    assert analysis.model_view(engine, project) is fresh


def test_views_are_recomputed_after_a_settings_change(demo_store) -> None:
    from db import repository as repo
    from db.repository import analysis

    engine, project, user = demo_store
    first = repo.get_sentence(engine, repo.sentence_ids(engine, project, "pool")[0])
    repo.submit_annotation(engine, first.id, user, ["O"] * len(first.tokens))
    view = analysis.pool_view(engine, project)
    assert analysis.pool_view(engine, project, max_lag=analysis.PAGE_LAG) is view
    repo.update_project_settings(engine, project, {"strategy_params": {"candidates": 50}})
    # same labels, other settings: never served the old view, not even to a page that may lag
    assert analysis.pool_view(engine, project, max_lag=analysis.PAGE_LAG) is not view
    assert not analysis.refreshing(engine, project)


def test_prefetched_model_view_is_computed_once(demo_store, monkeypatch) -> None:
    from db import repository as repo
    from db.repository import analysis

    engine, project, user = demo_store
    first = repo.get_sentence(engine, repo.sentence_ids(engine, project, "pool")[0])
    repo.submit_annotation(engine, first.id, user, ["O"] * len(first.tokens))
    pool = analysis.pool_view(engine, project)
    assert analysis.prefetch_model_view(engine, project)
    analysis.wait_fresh(engine, project, 60)
    assert not analysis.prefetch_model_view(engine, project)  # cached: nothing to start
    monkeypatch.setattr(analysis, "_view", lambda *a: pytest.fail("computed again"))
    view = analysis.model_view(engine, project)
    assert view.pool is pool.pool and view.labeled_sentences == 1
    assert set(view.labeled["sentence_id"]) == {first.id} and view.annotators == {first.id: "lena"}


def test_memo_keeps_the_most_recent_views() -> None:
    from cwal.reports.memo import Memo

    memo, made = Memo(2), []

    def make(key: str):
        return lambda: made.append(key) or key.upper()

    assert [memo.get(k, make(k)) for k in ("a", "b", "a", "c", "a", "b")] == list("ABACAB")
    assert made == ["a", "b", "c", "b"]  # "b" was the least recently used when "c" came


def test_memo_serves_a_recent_view_while_the_current_one_is_computed() -> None:
    import threading

    from cwal.reports.memo import Memo

    memo = Memo(8)
    assert memo.get_recent("f", 1, ("k", 1), lambda: "v1", max_lag=5) == "v1"  # nothing older
    gate = threading.Event()

    def slow() -> str:
        gate.wait(5)
        return "v3"

    assert memo.get_recent("f", 3, ("k", 3), slow, max_lag=5) == "v1"  # stale, refreshing
    assert memo.refreshing("f")
    gate.set()
    memo.wait("f", 5)
    assert not memo.refreshing("f")
    assert memo.get_recent("f", 3, ("k", 3), lambda: "never", max_lag=5) == "v3"
    assert memo.get_recent("f", 9, ("k", 9), lambda: "v9", max_lag=5) == "v9"  # too old: now
    assert memo.get_recent("f", 10, ("k", 10), lambda: "v10", max_lag=0) == "v10"  # fresh only


def test_memo_background_failure_is_retried_in_the_foreground() -> None:
    from cwal.reports.memo import Memo

    memo = Memo(8)
    memo.get("x", lambda: 1, family="f", rank=1)

    def boom() -> int:
        raise RuntimeError("broken")

    assert memo.get_recent("f", 2, "y", boom, max_lag=3) == 1
    memo.wait("f", 5)
    with pytest.raises(RuntimeError, match="broken"):
        memo.get_recent("f", 2, "y", boom, max_lag=0)


def test_memo_prefetch_is_waited_for_and_its_failure_retried() -> None:
    import threading

    from cwal.reports.memo import Memo

    memo, calls, gate = Memo(4), [], threading.Event()

    def slow() -> str:
        calls.append(1)
        gate.wait(5)
        return "v"

    assert memo.prefetch("k", slow, "f", 1)
    assert not memo.prefetch("k", slow, "f", 1)  # already being computed
    threading.Timer(0.1, gate.set).start()
    assert memo.get("k", lambda: "other") == "v" and calls == [1]  # waited for the prefetch
    memo.wait("f", 5)
    assert not memo.prefetch("k", slow, "f", 1) and calls == [1]  # cached
    assert memo.get_recent("f", 2, "k2", lambda: "v2", max_lag=3) == "v"  # the family's newest

    def boom() -> str:
        raise RuntimeError("broken")

    assert memo.prefetch("b", boom, "g")
    memo.wait("g", 5)
    with pytest.raises(RuntimeError, match="broken"):
        memo.get("b", boom)


def test_memo_computes_a_key_once_when_threads_ask_together() -> None:
    import threading
    import time

    from cwal.reports.memo import Memo

    memo, calls = Memo(4), []

    def make() -> int:
        calls.append(1)
        time.sleep(0.2)
        return 7

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(memo.get("k", make))) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [7, 7] and len(calls) == 1
