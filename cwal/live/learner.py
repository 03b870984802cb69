"""The learner thread: applies committed labels to the live model off the request path.

``submit`` returns once the store has committed the label; the session then wakes this thread,
which reads the log after the model's watermark and applies every new row (the online update, the
prequential snapshot, the ranking request). ``next`` wakes it too, so rows other processes stored
are picked up in the background. A request that must see a label in the model (an annotator's own
previous label, before their next suggestion) catches up itself when the thread has not yet.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from cwal.live.worker import Worker, background_thread


class Learner(Worker):
    """The thread that runs ``catch_up()`` whenever woken (coalesced: one run covers every
    wake-up before it starts)."""

    def __init__(self, catch_up: Callable[[], None], name: str = "cwal-learner") -> None:
        # short steps on the way to a fresh ranking: one numba thread, the priority unchanged
        super().__init__(catch_up, name, functools.partial(background_thread, nice=0))

    def wait(self, timeout: float = 60.0) -> bool:
        """Block until no catch-up is pending or running; False on timeout or stop."""
        return self._wait_for(lambda: self._stop or not self.busy, timeout)
