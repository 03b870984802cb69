"""Where a live-service request spends its time (bench/service.py's per-phase breakdown)."""

from __future__ import annotations

import threading
import time

from sqlalchemy import event


class Probe:
    """Where a request's time goes: SQLAlchemy event hooks count the statements each thread
    runs and time them (the statement taking PostgreSQL's project advisory lock apart: its
    time is mostly the lock wait), the store's calls are timed, and the session lock is
    replaced by one that times its waits. ``take()`` returns the calling thread's counters
    since its last ``take()``; background threads (scorer, consolidation, recorder) add to
    ``background`` by thread name."""

    FIELDS = ("statements", "db_ms", "advisory_ms", "session_lock_ms", "store_ms")

    def __init__(self, engine) -> None:
        self.local = threading.local()
        self.background: dict[str, dict[str, float]] = {}
        self.guard = threading.Lock()
        self.statements: dict[tuple[str, str], list[float]] = {}  # (thread kind, SQL): n, ms
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)
        event.listen(engine, "commit", self._commit)

    def _counts(self) -> dict[str, float]:
        if not hasattr(self.local, "c"):
            self.local.c = dict.fromkeys(self.FIELDS, 0.0)
        return self.local.c

    def add(self, field: str, value: float) -> None:
        c = self._counts()
        c[field] += value
        name = threading.current_thread().name
        if name.startswith("cwal-"):
            with self.guard:
                bg = self.background.setdefault(name, dict.fromkeys(self.FIELDS, 0.0))
                bg[field] += value

    def _before(self, conn, cursor, statement, params, context, many) -> None:
        self.local.t = time.perf_counter()

    def _after(self, conn, cursor, statement, params, context, many) -> None:
        ms = (time.perf_counter() - self.local.t) * 1e3
        self.add("statements", 1)
        self.add("db_ms", ms)
        if "pg_advisory_xact_lock" in statement:
            self.add("advisory_ms", ms)
        kind = threading.current_thread().name
        kind = kind if kind.startswith("cwal-") else "request"
        key = (kind, " ".join(statement.split())[:90])
        with self.guard:
            n_ms = self.statements.setdefault(key, [0, 0.0])
            n_ms[0] += 1
            n_ms[1] += ms

    def top(self, n: int = 12) -> list[tuple[str, str, int, float]]:
        """The ``n`` statements with the most total time: (thread, SQL start, count, ms)."""
        rows = [(k, s, int(c), round(ms, 1)) for (k, s), (c, ms) in self.statements.items()]
        return sorted(rows, key=lambda r: -r[3])[:n]

    def _commit(self, conn) -> None:
        self.add("statements", 1)  # COMMIT is a round trip too (not a cursor execute)

    def take(self) -> dict[str, float]:
        c = dict(self._counts())
        self.local.c = dict.fromkeys(self.FIELDS, 0.0)
        return c

    def wrap_store(self, store):
        probe = self

        class Timed:
            def __getattr__(self, name):
                attr = getattr(store, name)
                if not callable(attr):
                    return attr

                def call(*a, **kw):
                    t = time.perf_counter()
                    try:
                        return attr(*a, **kw)
                    finally:
                        probe.add("store_ms", (time.perf_counter() - t) * 1e3)

                return call

        return Timed()

    def wrap_lock(self, lock):
        probe = self

        class TimedLock:
            def acquire(self, blocking=True, timeout=-1):
                t = time.perf_counter()
                got = lock.acquire(blocking, timeout)
                probe.add("session_lock_ms", (time.perf_counter() - t) * 1e3)
                return got

            def release(self):
                lock.release()

            def __enter__(self):
                self.acquire()
                return self

            def __exit__(self, *exc):
                lock.release()

        return TimedLock()
