"""The learner thread: applies committed labels to the live model off the request path.

``submit`` returns once the store has committed the label; the session then wakes this thread,
which reads the log after the model's watermark and applies every new row (the online update, the
prequential snapshot, the ranking request). ``next`` wakes it too, so rows other processes stored
are picked up in the background. A request that must see a label in the model (an annotator's own
previous label, before their next suggestion) catches up itself when the thread has not yet.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numba

from cwal.supervisor import SUPERVISOR


class Learner:
    """A daemon thread that runs ``catch_up()`` whenever woken (coalesced: one run covers every
    wake-up before it starts)."""

    def __init__(self, catch_up: Callable[[], None], name: str = "cwal-learner") -> None:
        self._catch_up = catch_up
        self._cond = threading.Condition()
        self._pending = False
        self._running = False
        self._stop = False
        self.error: BaseException | None = None
        self.runs = 0
        self.thread = SUPERVISOR.start(name, self._run, stop=lambda: self.stop(timeout=None))

    def wake(self) -> None:
        """Ask for a catch-up (one more after the current one, if one is running)."""
        with self._cond:
            self._pending = True
            self._cond.notify_all()

    def _run(self) -> None:
        numba.set_num_threads(1)  # short steps on the way to a fresh ranking: priority unchanged
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                self._pending, self._running = False, True
            try:
                self._catch_up()
                self.error = None
            except BaseException as exc:  # the labels are stored; the next wake-up retries
                self.error = exc
            finally:
                with self._cond:
                    self._running = False
                    self.runs += 1
                    self._cond.notify_all()

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until no catch-up is pending or running; False on timeout or stop."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._stop or not (self._pending or self._running), timeout
            ) and not (self._pending or self._running)

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the thread (a catch-up in progress finishes first); joined unless ``timeout``
        is None."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if timeout is not None:
            self.thread.join(timeout=timeout)
