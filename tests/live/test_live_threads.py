"""The session owns its background threads: closing it stops and joins every one of them within
2 s, and a caller waiting for a ranking is released instead of hanging."""

from __future__ import annotations

import threading
import time

import pytest

from cwal.live.queue import Scored, ScoringQueue, Stopped

from .helpers import annotate


def test_a_waiting_get_returns_when_the_queue_stops() -> None:
    queue = ScoringQueue(lambda: Scored(0, (0, 0), [], "random"))
    queue.request((0, 0))
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            queue.get(min_version=5, timeout=60)  # no ranking will ever be that new
        except BaseException as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.2)
    start = time.monotonic()
    queue.stop()
    waiter.join(timeout=2)
    assert time.monotonic() - start < 2 and not waiter.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], Stopped)
    assert not queue.thread.is_alive()
    queue.request((0, 1))  # a newer model: no thread will ever rank for it
    with pytest.raises(Stopped):
        queue.wait_fresh(timeout=5)


def test_closing_a_session_joins_all_its_threads_within_two_seconds(make_project) -> None:
    p = make_project(n=40, consolidation_interval=5)
    live = p.session()
    annotate(live, p, "ann", 6)  # the recorder and a consolidation have run
    live.wait_idle()
    names = sorted(t.name for t in live.threads)
    assert names == ["cwal-consolidator", "cwal-learner", "cwal-recorder", "cwal-scorer"]
    assert all(t.is_alive() for t in live.threads)
    start = time.monotonic()
    live.close(timeout=2.0)
    assert time.monotonic() - start < 2.0
    assert not any(t.is_alive() for t in live.threads)


def test_requests_do_not_wait_for_the_model(make_project) -> None:
    """While the live model is held (an update, a retrain's swap or a ranking's snapshot hold
    its lock), a submit is committed and returned and a next is served from the current
    ranking; the learner applies the label once the lock is free."""
    p = make_project(n=60)
    live = p.session()
    annotate(live, p, "ann", 2)  # past the cold start
    live.wait_idle()
    (sug,) = live.next(p.users["bob"])
    version = live.status()["model_version"]
    done: dict[str, object] = {}

    def request() -> None:
        done["id"] = live.submit(sug.sentence_id, p.gold[sug.sentence_id], p.users["bob"])
        done["next"] = live.next(p.users["bob"])[0]

    with live._lock:  # the model is busy for as long as this block runs
        worker = threading.Thread(target=request)
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive()  # both returned while the model was held
        assert live.live.version == version  # and the label is not applied yet
    assert done["next"].sentence_id != sug.sentence_id
    assert live.learner.wait(timeout=30)
    assert live.status()["model_version"] == version + 1
