"""The session's bookkeeping of requests: labels stored here that the model has not applied.

A submission is *pending* from the moment ``submit`` starts storing it until a catch-up applies it
to the live model; whichever catch-up applies it takes its prequential snapshot first
(``cwal.live.recorder``). Each annotator's newest label stored here tells ``next`` whether their
own label is still pending (a cold project's first label is then applied on the request).
Everything here sits under a lock of its own, never the model's: a request never waits for an
update.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from cwal.live.protocol import LogRow


class Pending:
    """Pending submissions of one session; ``watermark()`` is the live model's (read under the
    bookkeeping lock, so a submission is never judged against a stale one)."""

    def __init__(self, watermark: Callable[[], int]) -> None:
        self._watermark = watermark
        self._lock = threading.Lock()
        self._storing: Counter[tuple[int, int]] = Counter()  # (sentence, annotator) in flight
        self._stored: set[int] = set()  # ids this process committed that the model has not applied
        self._newest: dict[int, int] = {}  # annotator -> their newest label stored here

    def begin(self, sentence_id: int, annotator_id: int) -> None:
        """A submit starts storing: from now on any catch-up that applies it snapshots it first."""
        with self._lock:
            self._storing[(sentence_id, annotator_id)] += 1

    def end(self, sentence_id: int, annotator_id: int, annotation_id: int | None) -> None:
        """The submit returned (``annotation_id`` None: it failed, nothing was stored)."""
        key = (sentence_id, annotator_id)
        with self._lock:
            if annotation_id is not None:
                if annotation_id > self._watermark():  # not applied yet: snapshot it then
                    self._stored.add(annotation_id)
                last = self._newest.get(annotator_id, 0)
                self._newest[annotator_id] = max(last, annotation_id)
            self._storing[key] -= 1
            if self._storing[key] <= 0:
                del self._storing[key]

    def is_pending(self, row: LogRow) -> bool:
        """Whether ``row`` is a submission of this process (being stored or stored here)."""
        with self._lock:
            return row.id in self._stored or (row.sentence_id, row.user_id) in self._storing

    def applied(self) -> None:
        """A catch-up ended: forget the ids the model now holds (the watermark only grows)."""
        with self._lock:
            watermark = self._watermark()
            self._stored = {i for i in self._stored if i > watermark}

    def behind(self, annotator_id: int) -> bool:
        """Whether the annotator's newest label stored here is not applied yet."""
        with self._lock:
            return self._watermark() < self._newest.get(annotator_id, 0)
