"""The process warm-up (``ui.warmup``): started once per process from the app's first run, it
computes the lead views of projects with a consolidated model without waiting for page runs;
background refreshes, background feature extraction and the live session's idle work yield to the
page runs in progress."""

from __future__ import annotations

import threading
import time

import pytest

from cwal.reports.memo import Foreground, Memo
from db.repository import analysis, views, warm
from db.repository.views import FOREGROUND
from db.store import standalone_model
from tests.app.conftest import app
from tests.app.test_lead_pages import PAGES, build_big, run_lead
from ui import warmup


@pytest.fixture(autouse=True)
def _fresh():
    warmup._warm_up.clear()
    analysis.clear_cache()
    yield
    warmup._warm_up.clear()
    analysis.clear_cache()


def test_the_warm_up_starts_once_per_process(store, users, demo, monkeypatch) -> None:
    calls, done = [], threading.Event()

    def counted(engine, stop) -> dict:
        calls.append(engine)
        done.set()
        return {}

    monkeypatch.setattr(warmup, "warm_up", counted)
    for user in (None, None, users.lead):  # the sign-in page twice, then the lead signed in
        at = app("app.py", user)
        at.run()
        assert not at.exception, at.exception
    assert done.wait(10) and len(calls) == 1
    assert warmup.start() is warmup.start()  # the same thread: nothing started again
    assert len(calls) == 1


def test_an_empty_project_warms_nothing_and_the_pages_still_render(store, users, demo) -> None:
    assert warm.warm_projects(store.engine) == []  # the demo has no checkpoint yet
    took = warmup.warm_up(store.engine)
    assert set(took) == {"imports", "altair", "views"}  # every step ran, none failed
    for page in PAGES:
        run_lead(page, users.lead.id)


def test_the_lead_pages_open_on_the_warmed_views(store, users, monkeypatch) -> None:
    big = build_big(store.engine, users.lead.id, 60, 40, 20)
    assert warm.warm_projects(store.engine) == [big.project]
    took = warmup.warm_up(store.engine)
    assert set(took) == {"imports", "altair", "views"}

    def never(*args):
        raise AssertionError("a view the warm-up computed was computed again")

    for name in ("_pool_view", "_view", "_log_frames", "current_reading"):
        monkeypatch.setattr(analysis, name, never)
    dash = run_lead(PAGES[0], users.lead.id)
    assert {m.label: m.value for m in dash.metric}["Labeled sentences"] == "60 / 100"
    run_lead(PAGES[1], users.lead.id)
    run_lead(PAGES[2], users.lead.id)


def test_a_page_arriving_mid_warm_up_waits_for_it_instead_of_computing(store, users) -> None:
    big = build_big(store.engine, users.lead.id, 60, 40, 20)
    calls, real = [], analysis._pool_view

    def slow(*args):
        calls.append(threading.current_thread().name)
        time.sleep(0.5)
        return real(*args)

    analysis._pool_view = slow
    try:
        thread = threading.Thread(target=warmup.warm_up, args=(store.engine,), name="warm")
        thread.start()
        deadline = time.monotonic() + 30
        while not calls and time.monotonic() < deadline:
            time.sleep(0.01)
        run_lead(PAGES[0], users.lead.id)
        thread.join(60)
    finally:
        analysis._pool_view = real
    assert calls == ["warm"], calls  # the page waited for the warm-up's pool view
    assert warm.warm_projects(store.engine, limit=0) == []
    assert analysis.pool_view(store.engine, big.project).state.trained


def test_a_background_refresh_waits_for_the_page_runs() -> None:
    foreground = Foreground()
    memo = Memo(4, foreground, patience=30)
    memo.get("v1", lambda: "one", "family", 1)
    made = threading.Event()

    def make() -> str:
        made.set()
        return "two"

    with foreground.running():
        assert memo.get_recent("family", 2, "v2", make, max_lag=5) == "one"  # stale, at once
        assert memo.refreshing("family") and not made.wait(0.3)  # not while the page runs
    assert made.wait(10)
    memo.wait("family", 10)
    assert memo.get_recent("family", 2, "v2", make, max_lag=5) == "two"


def test_a_background_refresh_waits_for_the_page_runs_only_so_long() -> None:
    foreground = Foreground()
    memo = Memo(4, foreground, patience=0.2)
    memo.get("v1", lambda: "one", "family", 1)
    with foreground.running():  # a page (or many) that never ends
        assert memo.get_recent("family", 2, "v2", lambda: "two", max_lag=5) == "one"
        memo.wait("family", 10)
        assert memo.get("v2", lambda: "recomputed") == "two"


def test_the_warm_up_computes_every_lead_view_without_waiting_for_pages(
    store, users, monkeypatch
) -> None:
    """A lead's first page right after the sign-in waits for what the warm-up computes: the
    warm-up does not wait for the page runs (the Annotate page, a dashboard) to compute the
    model view, and optional idle work waits while it runs."""
    build_big(store.engine, users.lead.id, 60, 40, 20)
    started, release = threading.Event(), threading.Event()
    real_view = analysis._view
    gates: list[bool] = []

    def viewed(*args):
        started.set()
        gates.append(views.idle_gate())  # what the live session's idle step is told meanwhile
        assert release.wait(30)
        return real_view(*args)

    monkeypatch.setattr(analysis, "_view", viewed)
    thread = threading.Thread(target=warmup.warm_up, args=(store.engine,))
    with FOREGROUND.running():  # a page being drawn, which does not need the model view
        thread.start()
        assert started.wait(60)  # not held back by the page run
    release.set()
    thread.join(60)
    assert gates == [False]
    key = ("view", views.model_key(store.engine, big_project(store.engine)))
    assert key in views.VIEWS._items  # cached: the first lead page finds it
    FOREGROUND.settle, settle = 0.0, FOREGROUND.settle
    try:
        assert views.idle_gate()  # warm-up over, no page run: idle work goes on
    finally:
        FOREGROUND.settle = settle


def big_project(engine) -> int:
    return warm.warm_projects(engine)[0]


def test_quiet_waits_for_the_runs_and_their_drawing() -> None:
    foreground = Foreground(settle=0.3)
    assert foreground.quiet(0.0)  # no run yet
    with foreground.running():
        assert foreground.running_here()
        assert not foreground.quiet(0.05)
        seen = []
        other = threading.Thread(target=lambda: seen.append(foreground.running_here()))
        other.start()
        other.join()
        assert seen == [False]
    assert not foreground.quiet(0.0)  # the page is still being drawn
    t0 = time.monotonic()
    assert foreground.quiet(5.0)
    assert 0.2 <= time.monotonic() - t0 < 2.0


def test_a_memo_knows_when_a_computation_is_awaited() -> None:
    memo = Memo(4)
    inside, release = threading.Event(), threading.Event()

    def slow() -> str:
        inside.set()
        assert release.wait(10)
        return "v"

    worker = threading.Thread(target=memo.get, args=("k", slow))
    worker.start()
    assert inside.wait(10)
    assert not memo.awaited("k")
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append(memo.get("k", lambda: "again")))
    waiter.start()
    deadline = time.monotonic() + 10
    while not memo.awaited("k") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert memo.awaited("k")
    release.set()
    worker.join(10)
    waiter.join(10)
    assert got == ["v"] and not memo.awaited("k")


def test_a_background_view_yields_to_pages_unless_one_waits_for_it() -> None:
    key = ("view", "yield-test")
    with FOREGROUND.running():  # inside a page run: never pauses
        t0 = time.monotonic()
        views.yield_to_pages(key)()
        assert time.monotonic() - t0 < 0.05
    paused: list[float] = []

    def background() -> None:
        pause = views.yield_to_pages(key, patience=0.4)
        t0 = time.monotonic()
        pause()
        paused.append(time.monotonic() - t0)

    with FOREGROUND.running():  # a page that does not need the view: at most the patience
        worker = threading.Thread(target=background)
        worker.start()
        worker.join(10)
    assert 0.3 <= paused[0] < 2.0
    inside, release = threading.Event(), threading.Event()

    def computed() -> str:  # a background computation a page waits for: no pause at all
        inside.set()
        assert release.wait(10)
        pause = views.yield_to_pages(key, patience=5.0)
        t0 = time.monotonic()
        pause()
        paused.append(time.monotonic() - t0)
        return "view"

    worker = threading.Thread(target=views.VIEWS.get, args=(key, computed))
    worker.start()
    assert inside.wait(10)
    with FOREGROUND.running():
        waiting = threading.Thread(target=views.VIEWS.get, args=(key, lambda: "other"))
        waiting.start()
        while not views.VIEWS.awaited(key):
            time.sleep(0.01)
        release.set()
        waiting.join(10)
        worker.join(10)
    assert paused[1] < 0.5


def test_the_live_idle_warm_up_reads_only_unlabeled_sentences_and_waits_for_its_gate(
    store, users
) -> None:
    """The live session's idle step extracts features only of unlabeled pool sentences (the
    only ones a ranking samples), and only when its gate says so."""
    from cwal.live import ProjectSession
    from db import repository as repo
    from db.store import SqlStore

    big = build_big(store.engine, users.lead.id, 60, 40, 20)
    is_open = threading.Event()
    session = ProjectSession(SqlStore(store.engine), big.project, idle_gate=is_open.is_set)
    try:
        session.queue.wait_fresh(120)
        cached = set(session.pool._entries)
        time.sleep(0.5)  # the gate is closed: the idle work waits
        assert set(session.pool._entries) == cached
        is_open.set()
        pool = set(repo_pool_ids(store.engine, big.project))
        labeled = {e.sentence_id for e in repo.current_annotations(store.engine, big.project)}
        unlabeled = pool - labeled
        deadline = time.monotonic() + 60
        while not unlabeled <= set(session.pool._entries) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert unlabeled <= set(session.pool._entries)  # every unlabeled sentence, in time
        assert set(session.pool._entries) - cached <= unlabeled  # the idle work read no other
    finally:
        session.close()


def repo_pool_ids(engine, project: int) -> list[int]:
    from db.store import SqlStore

    return SqlStore(engine).pool_ids(project)


def test_features_added_in_paused_steps_encode_as_extracted_at_once(store, users) -> None:
    """The model view's stepwise extraction (pausing between steps) gives the very encoding a
    one-go extraction does, hence the same view numbers."""
    import numpy as np

    from cwal import reports

    big = build_big(store.engine, users.lead.id, 60, 40, 20)
    model = standalone_model(store.engine, big.project).model
    sentences = [s for s, _ in analysis.split_sentences(store.engine, big.project, "pool")]
    once = reports.FeatureCache("ner").encode(model, sentences)
    stepped, pauses = reports.FeatureCache("ner"), []
    stepped.encode(model, sentences[:5])  # some already cached (the pool view's sample)
    stepped.add(sentences, pause=lambda: pauses.append(1), step=7)
    assert len(pauses) == -(-(len(sentences) - 5) // 7)
    again = stepped.encode(model, sentences)
    for field in ("feat_ids", "tok_offsets", "sent_offsets"):
        assert np.array_equal(getattr(once, field), getattr(again, field)), field
