"""One owner for the background threads: every thread the app starts (a live session's three,
the presence sweeps, the warm-up, the lead views' prefetch) is listed by the process's supervisor
by name, and stopping it leaves none of them alive within 2 s."""

from __future__ import annotations

import threading
import time

from cwal.supervisor import SUPERVISOR, Supervisor
from db.repository import analysis
from ui import presence, state, warmup


def test_stop_joins_every_thread_the_app_started_within_two_seconds(store, users, demo) -> None:
    before = set(threading.enumerate())
    live = state.live(demo)  # as Annotate opens it: scorer, recorder, consolidator
    for _ in range(3):
        (shown,) = live.next(users.annotator.id)
        live.submit(shown.sentence_id, ["O"] * len(shown.tokens), users.annotator.id, 1.0)
    live.wait_idle(60)
    presence.start()  # sweeps every 10 s until stopped
    warmup.start().join(60)  # the demo has no checkpoint: it imports, draws once and ends
    assert analysis.prefetch_model_view(store.engine, demo)
    analysis.wait_fresh(store.engine, demo, 60)
    ours = set(threading.enumerate()) - before
    names = {t.name for t in SUPERVISOR.threads()}
    assert {"cwal-scorer", "cwal-recorder", "cwal-consolidator", "cwal-presence"} <= names
    assert {t.name for t in ours if t.is_alive()} <= names  # every new thread is supervised

    start = time.monotonic()
    left = SUPERVISOR.stop(timeout=2.0)
    took = time.monotonic() - start
    assert left == [] and took < 2.0, (left, took)
    assert [t.name for t in threading.enumerate() if t in ours] == []
    assert SUPERVISOR.threads() == []
    fresh = state.live(demo)  # the registry was emptied: a new session serves again
    assert fresh is not live and fresh.next(users.annotator.id)


def test_stop_reports_a_thread_that_outlives_the_deadline() -> None:
    supervisor, release, asked = Supervisor(), threading.Event(), threading.Event()
    supervisor.start("cwal-test-stubborn", release.wait, 30.0, stop=asked.set)
    waiting = threading.Event()
    supervisor.start("cwal-test-polite", waiting.wait, 30.0, stop=waiting.set)
    assert [t.name for t in supervisor.threads()] == ["cwal-test-stubborn", "cwal-test-polite"]
    assert supervisor.stop(timeout=0.3) == ["cwal-test-stubborn"]  # asked, but it ignores it
    assert asked.is_set()
    release.set()
    assert supervisor.stop(timeout=2.0) == [] and supervisor.threads() == []
