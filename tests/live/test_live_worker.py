"""A session's background threads: one way to become one (``background_thread``), which leaves
the compiled kernels one thread and only ever lowers a thread's priority, and the learner thread
built on it, which keeps the priority of the thread that started it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import numba
import pytest

from cwal.live.learner import Learner
from cwal.live.worker import Worker, background_thread

pytestmark = pytest.mark.skipif(
    not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"),
    reason="per-thread priorities are a Linux feature",
)


def _niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _as_seen_by(make: Callable[[Callable[[], None]], Worker], start_nice: int) -> dict:
    """What a worker's job sees on its thread (numba threads, niceness), the worker made by a
    thread that first made itself ``start_nice`` steps nicer than this one."""
    seen: dict = {}
    done = threading.Event()

    def job() -> None:
        seen.update(threads=numba.get_num_threads(), nice=_niceness())
        done.set()

    def starter() -> None:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, _niceness() + start_nice))
        seen["creator"] = _niceness()
        worker = make(job)
        worker.wake()
        assert done.wait(30)
        worker.stop()

    t = threading.Thread(target=starter)
    t.start()
    t.join(60)
    assert done.is_set()
    return seen


def test_a_background_thread_is_ten_steps_nicer_than_its_creator_at_most_19() -> None:
    for start in (0, 5, 15):
        seen = _as_seen_by(lambda job: Worker(job, "cwal-test-bg", background_thread), start)
        assert seen["threads"] == 1
        assert seen["nice"] == min(19, seen["creator"] + 10)
        assert seen["nice"] >= seen["creator"]  # never a higher priority than its creator's


def test_the_learner_thread_keeps_its_creators_priority() -> None:
    for start in (0, 7):
        seen = _as_seen_by(lambda job: Learner(job, "cwal-test-learner"), start)
        assert seen["threads"] == 1 and seen["nice"] == seen["creator"]
