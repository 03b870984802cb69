"""A small thread-safe LRU for computed views whose keys name an immutable state.

``get_recent`` adds stale-while-revalidate: a view a few versions old is served at once while a
background thread computes the current one, so a page never waits for a recomputation that one
new label triggered (a dashboard's numbers may lag by at most ``max_lag`` versions). ``prefetch``
computes a value another page will want in the background before it is asked for.

``Foreground`` counts the page runs in progress: a memo given one starts its background work only
once no page runs (or after ``patience`` seconds), so a refresh does not halve the speed of the page
that started it by competing for the GIL; ``Foreground.quiet`` gates optional work (the live
session's idle feature extraction) until a page has also had time to be drawn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from cwal.supervisor import SUPERVISOR

T = TypeVar("T")
log = logging.getLogger(__name__)


class Foreground:
    """How many foreground runs (page scripts) are in progress; background work waits for none."""

    def __init__(self, settle: float = 2.0) -> None:
        self._runs = 0
        self._threads: dict[int, int] = {}  # thread id -> its runs in progress
        self._idle = threading.Condition()
        self.settle = settle  # seconds after a run during which ``quiet`` is still False
        self._ended = float("-inf")  # time.monotonic() when the last run ended

    @contextmanager
    def running(self) -> Iterator[None]:
        """Count the enclosed block as a foreground run."""
        me = threading.get_ident()
        with self._idle:
            self._runs += 1
            self._threads[me] = self._threads.get(me, 0) + 1
        try:
            yield
        finally:
            with self._idle:
                self._runs -= 1
                self._threads[me] -= 1
                if not self._threads[me]:
                    del self._threads[me]
                self._ended = time.monotonic()
                if self._runs == 0:
                    self._idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no foreground run is in progress (at most ``timeout`` s); True if idle."""
        with self._idle:
            return self._idle.wait_for(lambda: self._runs == 0, timeout)

    def running_here(self) -> bool:
        """True when the calling thread is in a foreground run."""
        with self._idle:
            return threading.get_ident() in self._threads

    def quiet(self, timeout: float = 0.05) -> bool:
        """Wait at most ``timeout`` s until no run is in progress and none ended within the
        last ``settle`` s (the browser is still drawing what it sent); True if so. For optional
        work, that takes a short step whenever this returns True."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while True:
                now = time.monotonic()
                since = now - self._ended
                if self._runs == 0 and since >= self.settle:
                    return True
                left = deadline - now
                if left <= 0:
                    return False
                self._idle.wait(left if self._runs else min(left, self.settle - since))


class Memo:
    """A small thread-safe LRU of computed views (keys include the immutable version)."""

    def __init__(
        self, size: int, foreground: Foreground | None = None, patience: float = 5.0
    ) -> None:
        self.size = size
        self.foreground = foreground  # background work waits until it is idle ...
        self.patience = patience  # ... for at most this many seconds
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._latest: dict[Hashable, tuple[int, Hashable]] = {}  # family -> (rank, key)
        self._running: dict[Hashable, threading.Thread] = {}  # family -> its refresh
        self._prefetching: dict[Hashable, threading.Thread] = {}  # family -> its prefetch
        self._computing: dict[Hashable, threading.Event] = {}  # key -> set when done
        self._waiting: dict[Hashable, int] = {}  # key -> threads waiting for its computation

    def get(
        self,
        key: Hashable,
        make: Callable[[], T],
        family: Hashable | None = None,
        rank: int = 0,
    ) -> T:
        """The cached value of ``key``, else ``make()`` (remembered as ``family``'s newest
        value when ``rank`` is the highest seen for it)."""
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
                busy = self._computing.get(key)
                if busy is None:  # this thread computes it; others wait for the result
                    busy = self._computing[key] = threading.Event()
                    break
                self._waiting[key] = self._waiting.get(key, 0) + 1
            try:
                busy.wait()  # computed by another thread (or it failed: then try ourselves)
            finally:
                with self._lock:
                    self._waiting[key] -= 1
                    if not self._waiting[key]:
                        del self._waiting[key]
        try:
            value = make()
            with self._lock:
                self._items[key] = value
                if family is not None and rank >= self._latest.get(family, (-1, None))[0]:
                    self._latest[family] = (rank, key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._computing.pop(key, None)
            busy.set()

    def get_recent(
        self, family: Hashable, rank: int, key: Hashable, make: Callable[[], T], max_lag: int
    ) -> T:
        """Like ``get``, but when ``key`` is not cached and ``family``'s newest cached value is
        at most ``max_lag`` ranks older, return that one and compute ``key`` in a background
        thread (one per family at a time). ``max_lag = 0`` always computes."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            latest = self._latest.get(family)
            usable = (
                max_lag > 0
                and latest is not None
                and latest[1] in self._items
                and 0 <= rank - latest[0] <= max_lag
            )
            if usable:
                assert latest is not None
                value = self._items[latest[1]]
                if family not in self._running:
                    self._start(self._running, family, rank, key, make)
                return value
        return self.get(key, make, family, rank)

    def _start(
        self,
        workers: dict[Hashable, threading.Thread],
        family: Hashable,
        rank: int,
        key: Hashable,
        make: Callable[[], Any],
    ) -> None:
        """Run ``get(key, make)`` in a daemon thread registered under ``family`` in ``workers``
        (call under the lock)."""
        name = "cwal-view-prefetch" if workers is self._prefetching else "cwal-view-refresh"
        workers[family] = SUPERVISOR.start(name, self._refresh, family, rank, key, make, workers)

    def _refresh(
        self,
        family: Hashable,
        rank: int,
        key: Hashable,
        make: Callable[[], Any],
        workers: dict[Hashable, threading.Thread],
    ) -> None:
        try:
            if self.foreground is not None:  # before ``get``: nobody waits for this thread yet
                self.foreground.wait_idle(self.patience)
            self.get(key, make, family, rank)
        except Exception:  # the next foreground call recomputes and raises it to the page
            log.exception("background computation for %r failed", family)
        finally:
            with self._lock:
                workers.pop(family, None)

    def prefetch(
        self, key: Hashable, make: Callable[[], Any], family: Hashable, rank: int = 0
    ) -> bool:
        """Compute ``key`` in a background thread (remembered as ``get`` would) unless it is
        cached, being computed, or ``family`` already has a prefetch running; True if started.
        A later ``get`` of ``key`` waits for that thread's result instead of computing again."""
        with self._lock:
            busy = key in self._items or key in self._computing or family in self._prefetching
            if busy:
                return False
            self._start(self._prefetching, family, rank, key, make)
            return True

    def awaited(self, key: Hashable) -> bool:
        """True while some thread waits for ``key``'s computation in another thread."""
        with self._lock:
            return key in self._waiting

    def refreshing(self, family: Hashable) -> bool:
        """True while a background thread computes a newer value for ``family``."""
        with self._lock:
            return family in self._running

    def wait(self, family: Hashable, timeout: float | None = None) -> None:
        """Block until ``family``'s background refresh and prefetch (if any) have finished."""
        with self._lock:
            workers = [self._running.get(family), self._prefetching.get(family)]
        for worker in workers:
            if worker is not None:
                worker.join(timeout)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._latest.clear()
