"""The scoring queue: a background thread keeps a ranking of candidates fresh as the model moves.

``request(version)`` asks for scores at least that fresh; the thread rescoring the newest model
each time it wakes. ``get(min_version)`` returns the current ranking at once when it was scored at
``min_version`` or later, else waits for the next refresh. A served suggestion is therefore at
most ``version - min_version`` updates old (the session's ``max_staleness``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cwal.live.worker import background_thread
from cwal.supervisor import SUPERVISOR


@dataclass
class Scored:
    """A ranking of candidates and what the scoring model predicted for them."""

    version: int
    generation: tuple[int, int]  # (base checkpoint id or 0, version): a model's identity
    ranked: list[int]
    strategy: str
    cold: bool = False
    predicted: dict[int, list[str]] = field(default_factory=dict)
    margins: dict[int, np.ndarray] = field(default_factory=dict)  # Delta per token (calibrated
    # into the confidence shown when served, by the session's current map)
    score: dict[int, float] = field(default_factory=dict)
    seed: int | None = None  # the draws' seed (the strategy's ``rank`` gets it too)
    s: float | None = None  # the draws' scale
    candidates: list[int] = field(default_factory=list)  # the sample, in draw order
    seconds: float = 0.0
    finished: float = field(default_factory=time.monotonic)


class Stopped(RuntimeError):
    """The background worker was stopped while a caller waited for it (the session closed)."""


class ScoringQueue:
    """Runs ``score()`` in a daemon thread whenever a fresher ranking is wanted."""

    def __init__(
        self,
        score: Callable[[], Scored],
        idle: Callable[[], bool] | None = None,
        name: str = "cwal-scorer",
    ) -> None:
        """``idle()`` is called, one short step at a time, while the ranking is fresh (it
        returns whether more idle work remains)."""
        self._score = score
        self._idle = idle
        self._more_idle_work = True
        self._cond = threading.Condition()
        self._wanted: tuple[int, int] | None = None
        self._current: Scored | None = None
        self._error: BaseException | None = None
        self._stop = False
        self._busy = False
        self.thread = SUPERVISOR.start(name, self._run, stop=lambda: self.stop(timeout=None))

    @property
    def current(self) -> Scored | None:
        return self._current

    def request(self, generation: tuple[int, int]) -> None:
        """Ask for a ranking by the model of ``generation`` (or a newer one)."""
        with self._cond:
            if self._wanted is None or generation != self._wanted:
                self._wanted = generation
                self._cond.notify_all()

    def _fresh(self) -> bool:
        cur = self._current
        return cur is not None and cur.generation == self._wanted

    def _run(self) -> None:
        background_thread()
        while True:
            with self._cond:
                while not self._stop and (self._wanted is None or self._fresh()):
                    idle = self._idle is not None and self._current is not None
                    if not (idle and self._more_idle_work):
                        self._cond.wait()
                        continue
                    self._cond.release()  # idle work runs unlocked, one small step at a time
                    try:
                        self._more_idle_work = bool(self._idle())
                    except Exception:  # idle work is optional: stop it, keep scoring
                        self._more_idle_work = False
                    finally:
                        self._cond.acquire()
                if self._stop:
                    return
                self._busy = True
            try:
                scored = self._score()
                error = None
            except BaseException as exc:  # surfaced to the caller of get()
                scored, error = None, exc
            with self._cond:
                self._busy = False
                if scored is not None:
                    self._current = scored
                    self._more_idle_work = True
                self._error = error
                self._cond.notify_all()
                if error is not None:
                    self._cond.wait(1.0)

    def get(self, min_version: int, timeout: float = 120.0) -> Scored:
        """The current ranking if scored at ``min_version`` or later, else the next refresh."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                cur = self._current
                if cur is not None and cur.version >= min_version:
                    return cur
                self._wait(deadline, f"no ranking at version >= {min_version} in {timeout} s")

    def wait_fresh(self, timeout: float = 120.0) -> Scored:
        """Block until the ranking is by the last requested model (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._fresh() or self._busy:
                self._wait(deadline, "the scoring queue did not catch up")
            assert self._current is not None
            return self._current

    def _wait(self, deadline: float, late: str) -> None:
        """Wait (the condition held) for the next change, at most until ``deadline``: raises
        :class:`Stopped` once stopped, RuntimeError if scoring failed, TimeoutError(``late``)."""
        if self._stop:
            raise Stopped("the scoring queue was stopped")
        if self._error is not None:
            raise RuntimeError("scoring failed") from self._error
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(late)
        self._cond.wait(left)

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the thread (a scoring in progress finishes first); waiting callers get
        :class:`Stopped`. Joins the thread unless ``timeout`` is None."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if timeout is not None:
            self.thread.join(timeout=timeout)
