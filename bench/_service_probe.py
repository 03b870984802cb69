"""Where a live-service request spends its time (bench/service.py's per-phase breakdown)."""

from __future__ import annotations

import threading
import time

import numpy as np
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


def pct(values, q) -> float:
    return round(float(np.percentile(values, q)), 1) if len(values) else 0.0


def breakdown(out: dict, probe: Probe) -> dict:
    """Medians (and p95 of the waits) of each request phase: statements (round trips, COMMIT
    included), time in the store (DB calls with their Python), in the advisory-lock statement,
    waiting for the session lock, and the rest (model update for submit; for next the wait for
    a fresh enough ranking plus the suggestion's pre-fill)."""
    row = {}
    for name in ("submit", "next"):
        ph = out[f"phases_{name}"]
        total = out[name]
        rest = [t - p["store_ms"] - p["session_lock_ms"] for t, p in zip(total, ph, strict=True)]
        row[f"{name}_statements"] = pct([p["statements"] for p in ph], 50)
        row[f"{name}_store_p50_ms"] = pct([p["store_ms"] for p in ph], 50)
        row[f"{name}_store_p95_ms"] = pct([p["store_ms"] for p in ph], 95)
        row[f"{name}_db_p50_ms"] = pct([p["db_ms"] for p in ph], 50)
        row[f"{name}_advisory_p95_ms"] = pct([p["advisory_ms"] for p in ph], 95)
        row[f"{name}_lockwait_p95_ms"] = pct([p["session_lock_ms"] for p in ph], 95)
        row[f"{name}_rest_p50_ms"] = pct(rest, 50)
        row[f"{name}_rest_p95_ms"] = pct(rest, 95)
    row["background"] = {k: {f: round(v, 1) for f, v in c.items() if v}
                         for k, c in sorted(probe.background.items())}  # fmt: skip
    row["top_statements"] = probe.top()
    return row
