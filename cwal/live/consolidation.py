"""Consolidation: retrain from scratch off-thread, retune s, checkpoint, swap in atomically.

The retrain copies the training set as of annotation id X (each sentence's current label), fits a
fresh learner for several epochs (the compiled epochs release the GIL), tunes s of KD-PC and
KD-Fixed on the prequential record, writes a checkpoint, and hands the model to the session,
which, under its lock, applies every submission after X to it before the swap: none is lost.
"""

from __future__ import annotations

import threading
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cwal.io import Sentence
from cwal.learners import SequenceLearner
from cwal.learners.shards import fit_shards
from cwal.live.kd import S_GRID
from cwal.live.protocol import CheckpointMeta
from cwal.live.replay import LearnerSpec, LiveModel, build, valid_base
from cwal.live.worker import Worker, background_thread
from cwal.measures.confidence import calibration_rmse


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


class Consolidator(Worker):
    """The thread that runs the session's consolidation when woken (one at a time)."""

    def __init__(self, job: Callable[[], None], name: str = "cwal-consolidator") -> None:
        super().__init__(job, name, background_thread)

    def _settled(self) -> bool:
        return not self._running and (self._stop or not self._pending)

    def wait(self, timeout: float = 300.0) -> None:
        """Block until no consolidation is pending or running (or the thread stopped, idle)."""
        if not self._wait_for(self._settled, timeout) and not self._settled():
            raise TimeoutError("consolidation did not finish")


def training_set(rows) -> list[Sentence]:
    return [Sentence(list(r.tokens), list(r.tags), dict(r.columns)) for r in rows]


def adoptable(store: Any, project_id: int, base: CheckpointMeta | None, x: int) -> Retrained | None:
    """A newer valid checkpoint than ``base`` that another process wrote, covering at most the
    labels up to ``x``: adopting it converges every process on the model a restart would load."""
    newest = valid_base(store.checkpoints(project_id), store.retractions(project_id))
    newer = newest is not None and (base is None or newest.id > base.id)
    if newer and (base.last_annotation_id if base else 0) <= newest.last_annotation_id <= x:
        state = store.checkpoint_state(newest.id)
        return Retrained(newest.id, newest.last_annotation_id, newest.info, state, 0.0)
    return None


def retrain(
    store: Any, project_id: int, spec: LearnerSpec, epochs: int, shards: int, x: int
) -> tuple[SequenceLearner, int]:
    """A fresh model trained on the labels as of annotation id ``x`` (each sentence's current
    label; ``shards`` > 1: copies on disjoint shards, combined), and the training set's size."""
    rows = store.current_annotations(project_id, x)
    model, data, seed = spec.fresh(), training_set(rows), retrain_seed(project_id, x)
    if shards > 1:
        fit_shards(model, data, epochs, seed, shards)
    else:
        model.fit(data, epochs=epochs, seed=seed)
    return model, len(rows)


def rebase(
    live: LiveModel,
    new: Retrained,
    model: SequenceLearner,
    store: Any,
    project_id: int,
    spec: LearnerSpec,
    defaults: tuple[float, float],
) -> LiveModel | None:
    """The live model rebuilt on the checkpoint ``new`` (its ``model`` read off the lock): every row of ``live``'s log after it
    applied again (none is lost). None when the checkpoint no longer fits (the live model moved
    past it, or an undo since retracted a label it covers); RuntimeError when the rebuilt model
    disagrees with the log. (The caller holds the session lock.)"""
    x = new.last_annotation_id
    if not live.base_last <= x <= live.watermark:
        return None
    if any(r.status == "undone" and r.supersedes_id is not None and r.supersedes_id <= x
           and r.id > x for r in live.tail):  # fmt: skip
        return None  # an undo after X retracted a label the checkpoint covers
    meta = CheckpointMeta(new.checkpoint_id, x, new.info)
    tail = [r for r in live.tail if r.id > x]
    labeled = {k: set(v) for k, v in live.labeled.items()}
    fresh = build(store, project_id, spec, defaults, base=meta, state=model, tail=tail,
                  labeled=labeled)  # fmt: skip
    if fresh.version != live.version or fresh.watermark != live.watermark:
        raise RuntimeError(f"checkpoint {meta.id} disagrees with the label log")
    return fresh


def swapped(new: Retrained, live: LiveModel) -> dict[str, Any]:
    """What the session's ``consolidations`` list keeps of a swap."""
    return {
        "checkpoint_id": new.checkpoint_id,
        "last_annotation_id": new.last_annotation_id,
        "seconds": round(new.seconds, 3),
        "replayed_after": sum(
            1 for r in live.tail if r.status == "submitted" and r.id > new.last_annotation_id
        ),
        "s_pc": live.s_pc,
        "s_fixed": live.s_fixed,
    }
