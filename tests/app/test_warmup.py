"""The process warm-up (``ui.warmup``): started once per process from the app's first run, it
computes the lead views of projects with a consolidated model, and background refreshes wait for
the page runs in progress."""

from __future__ import annotations

import threading
import time

import pytest

from cwal.reports.memo import Foreground, Memo
from db.repository import analysis, warm
from db.repository.views import FOREGROUND
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

    def counted(engine) -> dict:
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

    for name in ("_pool_view", "_view", "_log_frames", "_rebuild"):
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


def test_the_warm_up_leaves_the_model_view_until_no_page_runs(store, users, monkeypatch) -> None:
    build_big(store.engine, users.lead.id, 60, 40, 20)
    curve, view = threading.Event(), threading.Event()
    real_curve, real_view = analysis.log_frames, analysis._view

    def logged(*args, **kwargs):  # the dashboard's views are computed while the page runs
        frames = real_curve(*args, **kwargs)
        curve.set()
        return frames

    def viewed(*args):
        view.set()
        return real_view(*args)

    monkeypatch.setattr(analysis, "log_frames", logged)
    monkeypatch.setattr(analysis, "_view", viewed)
    thread = threading.Thread(target=warmup.warm_up, args=(store.engine,))
    with FOREGROUND.running():  # a page being drawn
        thread.start()
        assert curve.wait(60)
        assert not view.wait(0.5)
    assert view.wait(60)
    thread.join(60)
