"""The prequential record: each label's prediction as the model stood just before it learned it.

Before the session learns its own submission it snapshots the model's rows for that sentence
(a :class:`Snapshot`); the recorder's thread turns each snapshot into the record: the predicted
tags, each token's Delta and the calibrated confidence that was shown, logged to the store, and
KD agreement over the s grid (``PrequentialRecord``) that tunes the ranking's noise scale s. The
calibration map (``MarginMap``) is refitted on the record after every label, and again when the
live model comes to descend from a new consolidation (a model retrained for several epochs is
surer at the same margin than the single-pass models whose predictions the record holds, and each
consolidation shifts it again). The rows go
to the store in batches (``LOG_EVERY_S``): one write for the labels of half a second, where a
write per label was a third of the annotators' write transactions on SQLite's one write lock.
"""

from __future__ import annotations

import queue as stdqueue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cwal.confidence.calibration import MarginMap
from cwal.live import kd
from cwal.live.consolidation import PrequentialRecord
from cwal.live.protocol import CheckpointMeta, LogRow, PredictionRow, Store
from cwal.live.scoring import MAX_KEY, prequential, seed_of
from cwal.live.worker import background_thread
from cwal.supervisor import SUPERVISOR

LOG_EVERY_S = 0.5
"""The longest a recorded prediction waits for later ones before the batch is logged."""
LOG_BATCH = 64
_FLUSH = object()  # a queue mark: log what is pending now (``join``)


@dataclass
class Snapshot:
    """The model's rows for one submitted sentence before its update, and the model version."""

    row: LogRow
    rows: kd.Rows
    version: int


def generations(checkpoints: Sequence[CheckpointMeta], base: CheckpointMeta) -> tuple[int, ...]:
    """Per consolidation up to ``base`` (the live model's checkpoint), oldest first, the record
    entry its model predicted first: its label count less one (entry j was predicted by a model
    that had learned j + 1)."""
    counts = sorted({int(c.info.get("n_train", 0)) for c in checkpoints
                     if c.id <= base.id and int(c.info.get("n_train", 0)) > 0})  # fmt: skip
    return tuple(max(n - 1, 0) for n in counts or [int(base.info.get("n_train", 1))])


class Recorder:
    """One project's prequential record, kept by a thread (``cwal-recorder``).

    ``on_tuned(s_pc, s_fixed)`` receives the noise scales tuned on the record after each label;
    ``base()`` is the checkpoint the live model was built from (None: no consolidation yet).
    """

    def __init__(
        self,
        store: Store,
        project_id: int,
        k: int,
        on_tuned: Callable[[float, float], None],
        base: Callable[[], CheckpointMeta | None] = lambda: None,
    ) -> None:
        self.store, self.project_id, self.k = store, project_id, k
        self.on_tuned, self._base = on_tuned, base
        self.record = PrequentialRecord()
        self.error: Exception | None = None
        self._lock = threading.Lock()
        self._keys: list[tuple[np.ndarray, np.ndarray, list[str]]] = []
        self._first: tuple[int | None, tuple[int, ...]] = (None, ())  # base id, generations
        self._map: tuple[MarginMap, tuple[int, ...]] = (MarginMap(), ())  # prior until reload
        self._pending: list[tuple[PredictionRow, tuple[np.ndarray, np.ndarray, list[str]]]] = []
        self._unflushed = 0  # jobs taken whose task_done waits for their rows' write
        self.reload()
        self._jobs: stdqueue.Queue[object] = stdqueue.Queue()
        self._stopped, self._stop_lock = False, threading.Lock()
        self.thread = SUPERVISOR.start(
            "cwal-recorder", self._loop, stop=lambda: self.stop(timeout=None)
        )

    def put(self, snapshot: Snapshot) -> None:
        """Record ``snapshot`` in the background."""
        self._jobs.put(snapshot)

    def join(self) -> None:
        """Block until every snapshot put so far is recorded and logged."""
        with self._stop_lock:  # before a stop's end mark, or not at all
            if not self._stopped:
                self._jobs.put(_FLUSH)
        self._jobs.join()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Record what is queued, then end the thread (joined unless ``timeout`` is None)."""
        with self._stop_lock:
            stopping, self._stopped = not self._stopped, True
        if stopping:  # one end mark: ``join`` waits for every item put
            self._jobs.put(None)
        if timeout is not None:
            self.thread.join(timeout=timeout)

    def reload(self) -> None:
        """Refit the calibration map on the store's whole prequential record (every process's
        predictions; a consolidation calls it)."""
        with self._lock:  # read and swapped while no label is being recorded
            self._log()  # the rows recorded so far are in the store's record first
            record = [(np.asarray(k, float), np.asarray(c, bool), list(t))
                      for k, c, t in self.store.calibration_keys(self.project_id)]  # fmt: skip
            self._keys = record + [keys for _, keys in self._pending]  # unlogged: a failed write
            self._refit()

    @property
    def calibration(self) -> MarginMap:
        """The map of the live model: refitted when that model first descends from a
        consolidation (a swap; read without waiting for a label being recorded)."""
        fitted, where = self._map
        if where != self._consolidated():
            with self._lock:
                self._refit()
            fitted = self._map[0]
        return fitted

    def _consolidated(self) -> tuple[int, ...]:
        """The record entries the consolidations the live model descends from predicted first
        (see :func:`generations`; none before the first consolidation)."""
        base = self._base()
        if base is None:
            return ()
        if self._first[0] != base.id:
            self._first = (base.id, generations(self.store.checkpoints(self.project_id), base))
        return self._first[1]

    def _refit(self) -> None:
        where = self._consolidated()
        self._map = (MarginMap.fit(self._keys, consolidated=where), where)

    def _loop(self) -> None:
        background_thread()
        due = 0.0  # when the oldest job not yet logged is logged at the latest
        while True:
            wait = None if not self._unflushed else max(0.0, due - time.monotonic())
            try:
                job = self._jobs.get(timeout=wait)
            except stdqueue.Empty:
                job = _FLUSH
            else:
                if not self._unflushed:
                    due = time.monotonic() + LOG_EVERY_S
                self._unflushed += 1
            try:
                if isinstance(job, Snapshot):
                    self._record(job)
            except Exception as exc:  # the label itself is already safe; say what failed
                self.error = exc
            if not isinstance(job, Snapshot) or len(self._pending) >= LOG_BATCH:
                with self._lock:
                    self._log()
            if not isinstance(job, Snapshot) or not self._pending:
                for _ in range(self._unflushed):
                    self._jobs.task_done()
                self._unflushed = 0
            if job is None:
                return

    def _log(self) -> None:
        """Under ``_lock``: write the pending prediction rows (kept for the next try if it fails)."""
        if not self._pending:
            return
        try:
            self.store.log_predictions(self.project_id, [pred for pred, _ in self._pending])
        except Exception as exc:  # the labels are safe; the record's rows wait for a retry
            self.error = exc
        else:
            self._pending = []

    def _record(self, job: Snapshot) -> None:
        row = job.row
        seed = seed_of(self.project_id, job.version, row.id)
        rec = prequential(job.rows, list(row.tags or []), k=self.k, seed=seed)
        self.record.add(rec.grid_pc, rec.grid_fixed, rec.correct)
        s_pc, s_fixed = self.record.tune()  # the ranking's noise scale, from the first labels
        if s_pc is not None and s_fixed is not None:
            self.on_tuned(s_pc, s_fixed)
        shown = self.calibration(rec.margins, rec.predicted)  # the map before this label
        keys = np.minimum(rec.margins, MAX_KEY)
        pred = PredictionRow(row.sentence_id, job.version, rec.predicted, shown.tolist(), "kd-pc",
                             float(shown.min()) if shown.size else None, row.user_id,
                             keys.tolist())  # fmt: skip
        with self._lock:  # pended and appended together: a reload logs the pending rows
            # first and reads them back, so it counts this label once, as a restart's fit does
            entry = (keys, rec.correct, list(rec.predicted))
            self._pending.append((pred, entry))
            self._keys.append(entry)
            self._refit()
