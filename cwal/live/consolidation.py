"""Consolidation: retrain from scratch off-thread, retune s, checkpoint, swap in atomically.

The retrain copies the training set as of annotation id X (each sentence's current label), fits a
fresh learner for several epochs (the compiled epochs release the GIL), tunes s of KD-PC and
KD-Fixed on the prequential record, writes a checkpoint, and hands the model to the session,
which, under its lock, applies every submission after X to it before the swap: none is lost.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cwal.io import Sentence
from cwal.learners import SequenceLearner
from cwal.live.kd import S_GRID
from cwal.live.protocol import CheckpointMeta
from cwal.live.queue import background_thread
from cwal.live.replay import build, valid_base
from cwal.measures.confidence import calibration_rmse

if TYPE_CHECKING:
    from cwal.live.session import ProjectSession


class PrequentialRecord:
    """Per-token agreement over the s grid, measured before each update, with correctness.

    Common random numbers make the curve in s smooth; the last ``max_tokens`` tokens are kept.
    """

    def __init__(self, max_tokens: int = 50_000) -> None:
        self._items: deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = deque()
        self._tokens = 0
        self._max = max_tokens
        self._lock = threading.Lock()

    def add(self, grid_pc: np.ndarray, grid_fixed: np.ndarray, correct: np.ndarray) -> None:
        with self._lock:
            self._items.append((grid_pc, grid_fixed, correct))
            self._tokens += correct.shape[0]
            while self._tokens > self._max and len(self._items) > 1:
                self._tokens -= self._items.popleft()[2].shape[0]

    def __len__(self) -> int:
        return self._tokens

    def tune(self, min_tokens: int = 50) -> tuple[float | None, float | None]:
        """The s of KD-PC and of KD-Fixed with the lowest calibration RMSE on the record
        (None when fewer than ``min_tokens`` tokens were recorded)."""
        with self._lock:
            items = list(self._items)
        if sum(c.shape[0] for _, _, c in items) < min_tokens:
            return None, None
        correct = np.concatenate([c for _, _, c in items])
        best = []
        for j in (0, 1):
            grid = np.concatenate([it[j] for it in items], axis=1)
            errs = [calibration_rmse(grid[i], correct) for i in range(len(S_GRID))]
            best.append(S_GRID[int(np.argmin(errs))])
        return best[0], best[1]


@dataclass
class Retrained:
    """A consolidated model, checkpointed, ready to be swapped in."""

    checkpoint_id: int
    last_annotation_id: int
    info: dict[str, Any]
    state: bytes
    seconds: float


def retrain_seed(project_id: int, last_annotation_id: int) -> int:
    return zlib.crc32(f"{project_id}:{last_annotation_id}".encode())


class Consolidator:
    """A daemon thread that runs ``job()`` when triggered (one at a time)."""

    def __init__(self, job: Callable[[], None], name: str = "cwal-consolidator") -> None:
        self._job = job
        self._cond = threading.Condition()
        self._pending = False
        self._running = False
        self._stop = False
        self.last_error: BaseException | None = None
        self.runs = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        return self._pending or self._running

    def trigger(self) -> None:
        """Ask for a run (one more after the current one, if one is running)."""
        with self._cond:
            self._pending = True
            self._cond.notify_all()

    def _run(self) -> None:
        background_thread()
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                self._pending, self._running = False, True
            try:
                self._job()
                self.last_error = None
            except BaseException as exc:  # kept for status(); the live model stays as it was
                self.last_error = exc
            finally:
                with self._cond:
                    self._running = False
                    self.runs += 1
                    self._cond.notify_all()

    def wait(self, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("consolidation did not finish")
                self._cond.wait(left)

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout=60)


def training_set(rows) -> list[Sentence]:
    return [Sentence(list(r.tokens), list(r.tags), dict(r.columns)) for r in rows]


def consolidate(session: ProjectSession) -> None:
    """Retrain from scratch on the labels as of the watermark X, tune s on the prequential
    record, checkpoint, swap in. A newer valid checkpoint (another process consolidated) is
    adopted instead, so every process converges on the model a restart would load."""
    start = time.perf_counter()
    store, pid = session.store, session.project_id
    with session._lock:
        x, version, base = session.live.watermark, session.live.version, session.live.base
        if not session.needs_consolidation():
            return
    newest = valid_base(store.checkpoints(pid), store.retractions(pid))
    newer = newest is not None and (base is None or newest.id > base.id)
    if newer and (base.last_annotation_id if base else 0) <= newest.last_annotation_id <= x:
        state = store.checkpoint_state(newest.id)
        swap(session, Retrained(newest.id, newest.last_annotation_id, newest.info, state, 0.0))
        return
    rows = store.current_annotations(pid, x)
    model = session.spec.fresh()
    epochs, shards = session.config.consolidation_epochs, session.config.consolidation_shards
    sharded = {"shards": shards} if shards > 1 else {}  # cwal.learners.shards
    model.fit(training_set(rows), epochs=epochs, seed=retrain_seed(pid, x), **sharded)
    s_pc, s_fixed = session.record.tune()
    session.reload_calibration()  # every process's record, as a restart would read it
    with session._lock:
        s_pc = session.live.s_pc if s_pc is None else s_pc
        s_fixed = session.live.s_fixed if s_fixed is None else s_fixed
    state = model.to_bytes()
    seconds = time.perf_counter() - start
    info = {"version": version, "s_pc": s_pc, "s_fixed": s_fixed, "n_train": len(rows),
            "epochs": epochs, "shards": shards, "record_tokens": len(session.record),
            "seconds": round(seconds, 3)}  # fmt: skip
    cid = store.save_checkpoint(pid, state, x, info)
    swap(session, Retrained(cid, x, info, state, seconds))


def swap(session: ProjectSession, new: Retrained) -> None:
    """Under the session lock: apply every row after the checkpoint to the new model (none is
    lost), check it agrees with the log, and swap it in."""
    meta = CheckpointMeta(new.checkpoint_id, new.last_annotation_id, new.info)
    model = SequenceLearner.from_bytes(new.state, f"checkpoint {new.checkpoint_id}")
    x = new.last_annotation_id
    with session._lock:
        jobs = session._catch_up()
        live = session.live
        if not live.base_last <= x <= live.watermark:
            return
        if any(r.status == "undone" and r.supersedes_id is not None and r.supersedes_id <= x
               and r.id > x for r in live.tail):  # fmt: skip
            return  # an undo after X retracted a label the checkpoint covers
        tail = [r for r in live.tail if r.id > x]
        labeled = {k: set(v) for k, v in live.labeled.items()}
        defaults = (session.config.s_pc, session.config.s_fixed)
        fresh = build(session.store, session.project_id, session.spec, defaults,
                      base=meta, state=model, tail=tail, labeled=labeled)  # fmt: skip
        if fresh.version != live.version or fresh.watermark != live.watermark:
            raise RuntimeError(f"checkpoint {meta.id} disagrees with the label log")
        session.live, session._base_state = fresh, new.state
        session.consolidations.append({
            "checkpoint_id": new.checkpoint_id,
            "last_annotation_id": x,
            "seconds": round(new.seconds, 3),
            "replayed_after": sum(1 for r in tail if r.status == "submitted"),
            "s_pc": fresh.s_pc,
            "s_fixed": fresh.s_fixed,
        })  # fmt: skip
    session._after_change(jobs)
