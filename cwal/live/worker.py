"""A session's background threads: how one yields to requests, and the wake-able :class:`Worker`.

A :class:`Worker` runs ``job()`` on its daemon thread (started, named and stopped through
``cwal.supervisor``) whenever woken; wake-ups coalesce (one run covers every wake-up before it
starts). A run's exception is kept in ``error`` until a run succeeds; the thread goes on.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

import numba

from cwal.supervisor import SUPERVISOR


def background_thread(nice: int = 10) -> None:
    """Make the calling thread a background worker: its compiled kernels run single-threaded
    (numba's thread count is per thread) and, on Linux, it becomes ``nice`` steps nicer than it
    was (the niceness it inherited from the thread that started it, at most 19), so it yields
    the CPU to request threads and the database (a 2-core machine must not starve ``submit``
    while scoring). Relative, so it never raises a thread's priority: setting an absolute 10
    (or 0) would, for a root process started under a higher ``nice``. ``nice=0``: same priority
    (the learner thread's short steps on the way to a fresh ranking)."""
    numba.set_num_threads(1)
    if nice <= 0 or not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError):  # not permitted here: run at the inherited priority
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))


class Worker:
    """Runs ``job()`` whenever woken; ``prepare()`` runs first on the thread (its priority)."""

    def __init__(self, job: Callable[[], None], name: str, prepare: Callable[[], None]) -> None:
        self._job, self._prepare = job, prepare
        self._cond = threading.Condition()
        self._pending = False
        self._running = False
        self._stop = False
        self.error: BaseException | None = None
        self.runs = 0
        self.thread = SUPERVISOR.start(name, self._run, stop=lambda: self.stop(timeout=None))

    @property
    def busy(self) -> bool:
        """A run is asked for or running."""
        return self._pending or self._running

    def wake(self) -> None:
        """Ask for a run (one more after the current one, if one is running)."""
        with self._cond:
            self._pending = True
            self._cond.notify_all()

    def _run(self) -> None:
        self._prepare()
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                self._pending, self._running = False, True
            try:
                self._job()
                self.error = None
            except BaseException as exc:  # kept for status(); the next wake-up retries
                self.error = exc
            finally:
                with self._cond:
                    self._running = False
                    self.runs += 1
                    self._cond.notify_all()

    def _wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` (evaluated under the worker's lock) or ``timeout``; whether the
        worker is then idle."""
        with self._cond:
            return self._cond.wait_for(done, timeout) and not self.busy

    def stop(self, timeout: float | None = 60.0) -> None:
        """Stop the thread (a run in progress finishes first); joined unless ``timeout`` is None."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if timeout is not None:
            self.thread.join(timeout=timeout)
