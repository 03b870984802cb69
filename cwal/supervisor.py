"""The process's background threads: started, named, listed and stopped in one place.

Every thread cwal runs in the background is started by :meth:`Supervisor.start` on the process's
:data:`SUPERVISOR`, with its name (``cwal-...``) and the callable that asks it to stop: a live
session's scorer, prequential recorder and consolidator, the lead views' background refreshes and
prefetches, the web server's warm-up, kernel preparation and presence sweeps, a simulation's event
pump. :meth:`Supervisor.stop` (at interpreter exit, which is when ``streamlit run`` stops, or
called directly) runs the stop hooks (the live sessions' registry closes its sessions), asks every
thread to stop and joins them all within one deadline. A thread in the middle of a computation
finishes that step first; the names of those still running at the deadline are returned.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class _Worker:
    thread: threading.Thread
    stop: Callable[[], None] | None


class Supervisor:
    """Owns background threads: :meth:`start`, :meth:`threads`, :meth:`stop`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._workers: list[_Worker] = []
        self._hooks: list[Callable[[], None]] = []

    def start(
        self,
        name: str,
        target: Callable[..., Any],
        *args: Any,
        stop: Callable[[], None] | None = None,
    ) -> threading.Thread:
        """Start ``target(*args)`` in a daemon thread called ``name``; ``stop()`` asks it to
        end (None: it ends by itself soon, as a view computation does)."""
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._workers = [w for w in self._workers if w.thread.is_alive()]
            self._workers.append(_Worker(thread, stop))
        thread.start()
        return thread

    def threads(self) -> list[threading.Thread]:
        """The threads started here that are still running, oldest first."""
        with self._lock:
            return [w.thread for w in self._workers if w.thread.is_alive()]

    def on_stop(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` first whenever :meth:`stop` runs (a registry closing what it holds)."""
        with self._lock:
            if hook not in self._hooks:
                self._hooks.append(hook)

    def stop(self, timeout: float = 2.0) -> list[str]:
        """Run the stop hooks, ask every running thread to stop and join them all, within
        ``timeout`` seconds in total; the names of the threads still alive then (none when all
        ended). Threads started later are supervised as before."""
        deadline = time.monotonic() + timeout
        with self._lock:
            hooks = list(self._hooks)
            workers = [w for w in self._workers if w.thread.is_alive()]
        for hook in hooks:
            hook()
        for worker in workers:
            if worker.stop is not None and worker.thread.is_alive():
                worker.stop()
        for worker in workers:
            worker.thread.join(max(0.0, deadline - time.monotonic()))
        return [w.thread.name for w in workers if w.thread.is_alive()]


SUPERVISOR = Supervisor()
"""The process's supervisor (stopped at interpreter exit)."""
atexit.register(SUPERVISOR.stop)
