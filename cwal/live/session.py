"""The project session: what an annotator's click sets in motion (docs/design.md, "The live service").

One session per project per process. The store is the source of truth: ``submit`` commits the
label and returns; the learner thread (``cwal.live.learner``) then applies every log row after
the watermark, in id order (one online update per submission), first snapshotting what the model
knew of this process's own submissions; the recorder thread turns a snapshot into the prequential
record (prediction, each token's Delta and the calibrated confidence shown; KD agreement over the
s grid that tunes s). Every confidence handed out is Delta through the ``MarginMap`` fitted on that
record. ``next`` serves the newest background-scored ranking (it waits only when that is more than
``max_staleness`` updates behind the live model) and leases through the store, which never hands
a sentence leased to someone else.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cwal.confidence.calibration import MarginMap
from cwal.errors import ModelFileError
from cwal.io import Sentence
from cwal.learners import SequenceLearner
from cwal.live import kd
from cwal.live.config import LiveConfig
from cwal.live.consolidation import (
    Consolidator,
    PrequentialRecord,
    Retrained,
    adoptable,
    rebase,
    retrain,
    swapped,
)
from cwal.live.learner import Learner
from cwal.live.pending import Pending
from cwal.live.pool import PoolCache
from cwal.live.protocol import LogRow, PoolSentence, Store
from cwal.live.queue import (
    Scored,
    ScoringQueue,
)
from cwal.live.ranking import Ranker, Reading, generation
from cwal.live.recorder import Recorder, Snapshot
from cwal.live.replay import LearnerSpec, LiveModel, build, replay, valid_base
from cwal.live.scoring import prediction
from cwal.live.suggestion import Suggestion, suggest

LOG = logging.getLogger(__name__)


class ProjectSession:
    """The live active-learning service of one project (thread-safe)."""

    def __init__(
        self,
        store: Store,
        project_id: int,
        *,
        config: LiveConfig | None = None,
        idle_gate: Callable[[], bool] | None = None,
        **overrides: Any,
    ) -> None:
        """``idle_gate()``, when given, says whether optional idle work may take a step now
        (the web app: no page is being run or drawn)."""
        self.store = store
        self.project_id = project_id
        settings = store.settings(project_id)
        self.config = config or LiveConfig.from_settings(settings, **overrides)
        self.spec = LearnerSpec.from_settings(settings, store.clusters(project_id, settings))
        self._lock = threading.RLock()
        self.warnings: list[str] = []  # what went wrong but was recovered (a damaged checkpoint)
        self.live, self._base_state = self._build()
        self.pool = PoolCache(self.spec.template, self.spec.clusters)
        self.ranker = Ranker(store, project_id, self.config, self.pool, self._lock,
                             lambda: self.live, idle_gate)  # fmt: skip
        self.consolidations: list[dict[str, Any]] = []  # one entry per swap, oldest first
        self.pending = Pending(lambda: self.live.watermark)  # requests' bookkeeping
        self._seen = (self.live.version, not any(self.live.labeled.values()))  # version, cold
        self.recorder = Recorder(
            store, project_id, self.config.k, self._tuned, lambda: self.live.base
        )
        self.queue = ScoringQueue(self.ranker.score, idle=self.ranker.warm_pool)
        self.consolidator = Consolidator(self._consolidate)
        self.learner = Learner(self.sync)
        self._closed = False
        self.queue.request(self.generation)

    # ----- model state ------------------------------------------------------------------------
    def _build(self, **kw: Any) -> tuple[LiveModel, bytes | None]:
        defaults = (self.config.s_pc, self.config.s_fixed)
        if "base" not in kw:
            base = valid_base(
                self.store.checkpoints(self.project_id), self.store.retractions(self.project_id)
            )
            kw["base"] = base
            kw["state"] = self.store.checkpoint_state(base.id) if base is not None else None
        try:
            return build(self.store, self.project_id, self.spec, defaults, **kw), kw["state"]
        except ModelFileError as exc:  # a damaged checkpoint: the label log rebuilds the model
            LOG.warning("project %s: %s; rebuilding the model from the label log",
                        self.project_id, exc)  # fmt: skip
            self.warnings.append(f"{exc}: the model was rebuilt from the label log")
            kw.update(base=None, state=None, tail=None, labeled=None)
            return build(self.store, self.project_id, self.spec, defaults, **kw), None

    @property
    def generation(self) -> tuple[int, int]:
        return generation(self.live)

    @property
    def model(self) -> SequenceLearner:
        return self.live.model

    def _unseen(self) -> list[LogRow]:
        """The log rows after the watermark, read off the lock (``_catch_up`` drops the ones
        another thread applied meanwhile: the watermark only grows)."""
        return self.store.log_after(self.project_id, self.live.watermark)

    def _catch_up(self, rows: list[LogRow] | None = None) -> list[Snapshot]:
        """Apply every log row after the watermark (under the lock); a snapshot for each
        submission this process is storing or stored (``pending``), whichever
        catch-up applies it. ``rows``: read by ``_unseen`` before the lock was taken."""
        try:
            return self._apply(rows)
        finally:
            self.pending.applied()
            self._seen = (self.live.version, not any(self.live.labeled.values()))

    def _apply(self, rows: list[LogRow] | None) -> list[Snapshot]:
        live = self.live
        if rows is None:
            rows = self.store.log_after(self.project_id, live.watermark)
        else:
            rows = [r for r in rows if r.id > live.watermark]
        if not rows:
            return []
        undone = {r.supersedes_id for r in rows if r.status == "undone"}
        learned = live.submission_ids() - live.retracted_in_tail()
        if undone & learned:  # a label the model already reflects was undone: replay the tail
            self.live, _ = self._build(
                base=live.base, state=self._base_state, tail=live.tail + rows
            )
            return []
        covered = any(t is not None and t <= live.base_last for t in undone)
        if covered and any(t in undone for t, _ in self.store.retractions(self.project_id)):
            self.live, self._base_state = self._build()  # the base itself is now invalid
            return []
        jobs: list[Snapshot] = []

        def snapshot(row: LogRow) -> None:
            if self.pending.is_pending(row) and live.model.labels_ and live.n_labeled:
                snap = kd.rows_for(live.model, live.model.encode([_sentence(row)]))
                jobs.append(Snapshot(row, snap, live.version))

        replay(live, rows, before_learn=snapshot)
        return jobs

    def _after_change(self, jobs: list[Snapshot]) -> None:
        for job in jobs:
            self.recorder.put(job)
        self.queue.request(self.generation)
        if self.needs_consolidation():
            self.consolidator.wake()

    def needs_consolidation(self) -> bool:
        """True once ``consolidation_interval`` updates arrived since the base checkpoint."""
        live = self.live
        done = int(live.base.info.get("version", 0)) if live.base is not None else 0
        return live.version - done >= self.config.consolidation_interval and live.n_labeled > 0

    def sync(self) -> None:
        """Catch up with rows other processes stored (``next`` and ``submit`` do it too)."""
        rows = self._unseen()
        with self._lock:
            jobs = self._catch_up(rows=rows)
        self._after_change(jobs)

    # ----- the service ------------------------------------------------------------------------
    def submit(
        self, sentence_id: int, tags: list[str], annotator_id: int, seconds: float | None = None
    ) -> int:
        """Store the annotation; its id once committed. The learner thread applies it to the
        live model (a submit never waits for an update, a ranking or a consolidation)."""
        self.pending.begin(sentence_id, annotator_id)  # a catch-up applying it snapshots it
        annotation_id = None
        try:
            annotation_id = self.store.submit(sentence_id, annotator_id, tags, seconds)
        finally:
            self.pending.end(sentence_id, annotator_id, annotation_id)
        self.learner.wake()
        return annotation_id

    def next(self, annotator_id: int, n: int = 1) -> list[Suggestion]:
        """Lease up to ``n`` sentences to the annotator, best first by the project's strategy,
        from the newest ranking: at most ``max_staleness`` updates behind the live model, which
        may not hold yet the labels the learner is applying (committed in the last moments;
        the first label of a cold project is applied here)."""
        self.learner.wake()  # rows other processes stored: applied in the background
        version, cold = self._seen  # as of the last catch-up (no wait for the model's lock)
        if cold and self.pending.behind(annotator_id):  # their first label: apply it here
            self.sync()
            version, cold = self._seen
        scored = self.queue.get(version - self.config.max_staleness)
        if scored.cold and not cold:  # the first label switches to the project's strategy
            scored = self.queue.get(version)
        ttl = self.config.lease_ttl
        ids = self.store.lease(self.project_id, annotator_id, scored.ranked, ttl, n)
        if not ids:  # every candidate is taken: anything still free in the pool
            ids = self.store.lease(self.project_id, annotator_id, None, ttl, n)
        return [self._suggest(i, scored, version, cold) for i in ids]

    def preview(self, n: int = 1) -> list[Suggestion]:
        """The top of the current ranking without leasing (what ``next`` would choose from)."""
        self.sync()
        scored = self.queue.wait_fresh()
        return [self._suggest(i, scored, scored.version, self._seen[1]) for i in scored.ranked[:n]]

    def read(self, batches: Sequence[Sequence[PoolSentence]]) -> Reading:
        """The live model read on batches of sentences (what the lead pages show), after
        catching up with the log: a row snapshot of each batch, all at one generation. Nothing
        is built: the project has one model per process, this one."""
        self.sync()
        for batch in batches:
            self.pool.add(batch)
        return self.ranker.read([[s.id for s in batch] for batch in batches])

    def skip(self, sentence_id: int, annotator_id: int) -> None:
        """Release the lease and record the skip (the sentence is not offered to them again)."""
        self.store.skip(sentence_id, annotator_id)
        self.learner.wake()

    def undo(self, annotator_id: int) -> int | None:
        """Retract the annotator's newest submission or skip; the model is rebuilt without it
        and the sentence is leased back to them. The sentence id, or None."""
        done = self.store.undo(self.project_id, annotator_id, self.config.lease_ttl)
        self.sync()
        return None if done is None else done[1]

    def status(self) -> dict[str, Any]:
        with self._lock:
            live = self.live
            cur = self.queue.current
            return {
                "project_id": self.project_id,
                "model_version": live.version,
                "checkpoint_id": live.base.id if live.base is not None else None,
                "annotations_seen": live.watermark,
                "labeled_sentences": live.n_labeled,
                "queue_version": None if cur is None else cur.version,
                "queue_age_updates": None if cur is None else live.version - cur.version,
                "queue_seconds": None if cur is None else cur.seconds,
                "strategy": self.config.strategy,
                "s_pc": live.s_pc,
                "s_fixed": live.s_fixed,
                "consolidating": self.consolidator.busy,
                "last_consolidation": self.consolidations[-1] if self.consolidations else None,
                "consolidation_error": _error(self.consolidator.error),
                "record_error": _error(self.recorder.error),
                "learn_error": _error(self.learner.error),
            }

    def wait_idle(self, timeout: float = 300.0) -> None:
        """Block until the model holds every stored label and prequential records,
        consolidation and the ranking have caught up."""
        self.sync()
        self.recorder.join()
        self.consolidator.wait(timeout)
        self.queue.wait_fresh(timeout)

    @property
    def threads(self) -> list[threading.Thread]:
        """The session's background threads: the learner, the scorer, the prequential recorder
        and the consolidator (it starts them all and ``close`` stops them all)."""
        return [self.learner.thread, self.queue.thread, self.recorder.thread,
                self.consolidator.thread]  # fmt: skip

    def close(self, timeout: float = 30.0) -> None:
        """Stop every background thread of the session and join them (together at most
        ``timeout`` s; a consolidation or ranking in progress finishes first). A ``next``
        waiting for a ranking raises ``Stopped``."""
        if self._closed:
            return
        self._closed = True
        self.learner.stop(timeout=None)
        self.consolidator.stop(timeout=None)
        self.queue.stop(timeout=None)
        self.recorder.stop(timeout=None)
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    # ----- suggestions --------------------------------------------------------------------------
    def _suggest(self, sentence_id: int, scored: Scored, version: int, cold: bool) -> Suggestion:
        if sentence_id not in self.pool:
            self.pool.add(self.store.pool_sentences([sentence_id]))
        strategy = self.config.strategy if not scored.cold else self.config.seed_strategy
        s = self.pool.sentence(sentence_id)
        return suggest(s, scored, version, cold, strategy, self.calibration, self._score_one)

    def _score_one(self, s: PoolSentence) -> tuple[list[str], np.ndarray, int]:
        """The prediction of one sentence by the current model: tags, Delta per token, version."""
        with self._lock:
            live = self.live
            rows = kd.rows_for(live.model, live.model.encode([_sentence(s)]))
            version = live.version
        pred, margins = prediction(rows)
        return pred, margins, version

    # ----- prequential record (cwal.live.recorder) and consolidation ----------------------------
    @property
    def record(self) -> PrequentialRecord:
        return self.recorder.record

    @property
    def calibration(self) -> MarginMap:
        """Delta -> the probability that a token is right, fitted on the prequential record."""
        return self.recorder.calibration

    def _tuned(self, s_pc: float, s_fixed: float) -> None:
        with self._lock:
            self.live.s_pc, self.live.s_fixed = s_pc, s_fixed

    def _consolidate(self) -> None:
        """Retrain from scratch on the labels as of the watermark X, tune s on the prequential
        record, checkpoint, swap in; or adopt a newer checkpoint of another process."""
        start = time.perf_counter()
        with self._lock:
            x, version, base = self.live.watermark, self.live.version, self.live.base
            if not self.needs_consolidation():
                return
        found = adoptable(self.store, self.project_id, base, x)
        if found is not None:
            return self._swap(found)
        epochs, shards = self.config.consolidation_epochs, self.config.consolidation_shards
        model, n_train = retrain(self.store, self.project_id, self.spec, epochs, shards, x)
        s_pc, s_fixed = self.record.tune()
        self.recorder.reload()  # every process's record, as a restart would read it
        with self._lock:
            s_pc = self.live.s_pc if s_pc is None else s_pc
            s_fixed = self.live.s_fixed if s_fixed is None else s_fixed
        state, seconds = model.to_bytes(), time.perf_counter() - start
        info = {"version": version, "s_pc": s_pc, "s_fixed": s_fixed, "n_train": n_train,
                "epochs": epochs, "shards": shards, "record_tokens": len(self.record),
                "seconds": round(seconds, 3)}  # fmt: skip
        cid = self.store.save_checkpoint(self.project_id, state, x, info)
        self._swap(Retrained(cid, x, info, state, seconds))

    def _swap(self, new: Retrained) -> None:
        """Swap in the checkpoint ``new`` under the lock, the rows after it applied again."""
        model = SequenceLearner.from_bytes(new.state, f"checkpoint {new.checkpoint_id}")
        defaults = (self.config.s_pc, self.config.s_fixed)
        with self._lock:
            jobs = self._catch_up()
            fresh = rebase(self.live, new, model, self.store, self.project_id, self.spec, defaults)
            if fresh is not None:
                self.live, self._base_state = fresh, new.state
                self.consolidations.append(swapped(new, fresh))
        self._after_change(jobs)  # the rows the catch-up applied (their snapshots) count either way


def _sentence(row: LogRow | PoolSentence) -> Sentence:
    return Sentence(list(row.tokens), None, dict(row.columns))


def _error(exc: BaseException | None) -> str | None:
    return None if exc is None else f"{type(exc).__name__}: {exc}"
