"""The ranking: the project's candidate sample, drawn and scored by its strategy (scorer thread).

The session hands its lock and its live model to a :class:`Ranker`; the ranker draws a sample of
the unlabeled pool for the model's generation, maps the sample's cached features onto the model's
index and ranks it (``cwal.live.scoring.rank_candidates``), and, while the ranking is fresh,
extracts the features of more pool sentences (idle work). It knows nothing of the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from cwal.features import Encoded
from cwal.live import kd
from cwal.live.config import LiveConfig
from cwal.live.pool import PoolCache
from cwal.live.protocol import Store
from cwal.live.queue import Scored
from cwal.live.replay import LiveModel
from cwal.live.scoring import rank_candidates, seed_of
from cwal.strategies.order import order


def candidate_seed(project_id: int, version: int) -> list[int]:
    """The RNG seed of a candidate sample: same project and model version, same sample."""
    return [int(project_id), int(version), 0xC0A1]


def unlabeled_ids(pool_ids: np.ndarray, labeled: set[int]) -> np.ndarray:
    """The pool ids not in ``labeled``, in pool order."""
    return pool_ids[~np.isin(pool_ids, np.fromiter(labeled, np.int64, len(labeled)))]


def sample_candidates(unlabeled: np.ndarray, n: int, seed: Sequence[int]) -> np.ndarray:
    """Up to ``n`` of the ``unlabeled`` ids drawn without replacement, in draw order
    (deterministic)."""
    if unlabeled.size <= n:
        return np.random.default_rng(seed).permutation(unlabeled)
    return np.random.default_rng(seed).choice(unlabeled, size=n, replace=False)


def rank(ids: np.ndarray, score: np.ndarray, lengths: np.ndarray) -> list[int]:
    """``ids`` by :func:`cwal.strategies.order.order`: lowest score first, ties to the shorter
    sentence, then to the earlier id in ``ids`` (the candidates' draw order)."""
    return [int(i) for i in ids[order(score, lengths)]]


@dataclass(frozen=True)
class Reading:
    """The live model read on batches of sentences: one row snapshot per batch (``kd.Rows``,
    empty while the model knows no label), all taken at one generation."""

    generation: tuple[int, int]
    rows: list[kd.Rows]
    s_pc: float
    s_fixed: float


def generation(live: LiveModel) -> tuple[int, int]:
    """A model's identity: (its base checkpoint id or 0, its version)."""
    return (live.base.id if live.base is not None else 0, live.version)


class Ranker:
    """Ranks one project's candidates for the live model ``live()`` read under ``lock``."""

    def __init__(
        self,
        store: Store,
        project_id: int,
        config: LiveConfig,
        pool: PoolCache,
        lock: threading.RLock,
        live: Callable[[], LiveModel],
        idle_gate: Callable[[], bool] | None = None,
    ) -> None:
        """``idle_gate()``, when given, says whether idle work may take a step now."""
        self.store, self.project_id, self.config, self.pool = store, project_id, config, pool
        self._lock, self._live, self.idle_gate = lock, live, idle_gate
        self._unlabeled: list[int] = []  # as of the last ranking (pool re-read each time: imports)
        self.first = True  # the first ranking (start-up: nobody is served yet) uses every core

    def _generation(self) -> tuple[int, int]:
        return generation(self._live())

    def warm_pool(self, step: int = 32) -> bool:
        """Idle-time work: extract the features of a few more unlabeled pool sentences (the only
        ones a ranking samples), so that later rankings spend their time in compiled code. False
        once they are all cached."""
        todo = self.pool.missing(self._unlabeled)[:step]
        if todo and self.idle_gate is not None and not self.idle_gate():
            return True  # not now: asked again shortly
        if todo:
            self.pool.add(self.store.pool_sentences(todo))
        return len(todo) == step

    def _follow(self) -> None:
        """Map the pool's cache onto the live model's index when a new model was swapped in:
        the index's strings are read under the lock and mapped off it."""
        with self._lock:
            index = self._live().model.features_
            strings = None if self.pool.follows(index) else index.strings
        if strings is not None:
            self.pool.follow(index, strings)

    def _sample(self) -> tuple[tuple[int, int], bool, np.ndarray, np.ndarray, list[int]]:
        """The current generation's candidate sample (features cached in the pool), lengths."""
        with self._lock:
            gen = self._generation()
            labeled = {i for i, ids in self._live().labeled.items() if ids}
            cold = self._live().n_labeled == 0
        seed = candidate_seed(self.project_id, gen[1])
        pool_ids = np.asarray(self.store.pool_ids(self.project_id), dtype=np.int64)
        unlabeled = unlabeled_ids(pool_ids, labeled)
        cands = sample_candidates(unlabeled, self.config.candidates, seed)
        self._unlabeled = unlabeled.tolist()
        missing = self.pool.missing(cands.tolist())
        if missing:
            self.pool.add(self.store.pool_sentences(missing))
        lengths = np.array([self.pool.lengths[i] for i in cands.tolist()], dtype=np.int64)
        return gen, cold, cands, lengths, seed

    def score(self) -> Scored:
        """Rank the generation's candidate sample by the project's strategy (scorer thread).

        The sample is drawn from (project, version) and scored by that same model; if the model
        moves meanwhile the sample is redrawn (a few times, then the newer model scores the
        older sample, labeled with the older version: it is then simply refreshed again)."""
        start = time.perf_counter()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS if self.first else 1)
        self.first = False
        for attempt in range(3):
            gen, cold, cands, lengths, seed = self._sample()
            strategy = self.config.seed_strategy if cold else self.config.strategy
            if cold or not len(cands):  # the seed strategy (random or shortest) needs no model
                score = np.arange(len(cands), dtype=np.float64) if strategy == "random" else lengths
                ranked = rank(cands, np.asarray(score, dtype=np.float64), lengths * 0)
                return Scored(gen[1], gen, ranked, strategy, cold,
                              seconds=time.perf_counter() - start)  # fmt: skip
            batch = self.pool.gather(cands.tolist())
            self._follow()
            with self._lock:
                if self._generation() != gen and attempt < 2:
                    continue
                index = self._live().model.features_
                self.pool.sync(index)
                mids = self.pool.model_ids(batch.gids)
            enc, known = batch.localize(mids)  # off the lock: linear in the batch
            with self._lock:
                if self._generation() != gen and attempt < 2:
                    continue
                live = self._live()
                if live.model.features_ is not index:  # a model swapped in (an undo's rebuild)
                    self.pool.sync(live.model.features_)  # since the mapping: map again here
                    enc, known = batch.localize(self.pool.model_ids(batch.gids))  # (rare)
                W, A, SW, SA = kd.take_rows(live.model, known)
                labels, has_cov = list(live.model.labels_), live.model.has_covariance
                decode = kd.decoder_of(live.model)
                s = live.s_fixed if strategy == "kd-fixed" else live.s_pc
            break
        rows = kd.Rows(enc, W, A, SW, SA, labels, has_cov, decode)
        out = rank_candidates(rows, cands, strategy, s, k=self.config.k, seed=seed_of(*seed),
                              version=gen[1], generation=gen)  # fmt: skip
        out.seconds = time.perf_counter() - start
        return out

    def read(self, batches: Sequence[Sequence[int]]) -> Reading:
        """Row snapshots of the live model for batches of cached sentences (their ids), all at
        one generation: the features are mapped off the lock and only the rows they use are
        copied under it, as ``score`` does (what the lead pages read: no second model)."""
        gathered = [self.pool.gather(list(ids)) for ids in batches]
        attempt = 0
        while True:
            self._follow()
            with self._lock:
                index = self._live().model.features_
                self.pool.sync(index)
                mids = [self.pool.model_ids(b.gids) for b in gathered]
            local = [b.localize(m) for b, m in zip(gathered, mids, strict=True)]
            with self._lock:
                live = self._live()
                if live.model.features_ is not index:  # swapped meanwhile (undo, consolidation)
                    attempt += 1
                    if attempt < 3:
                        continue
                    self.pool.sync(live.model.features_)  # (rare) map again under the lock
                    local = [b.localize(self.pool.model_ids(b.gids)) for b in gathered]
                return Reading(generation(live), _rows(live, local), live.s_pc, live.s_fixed)


def _rows(live: LiveModel, local: list[tuple[Encoded, np.ndarray]]) -> list[kd.Rows]:
    """The rows of each batch's known features (none while the model knows no label)."""
    model = live.model
    if not (live.n_labeled and model.labels_):
        return []
    codec = kd.codec_of(model)
    out = []
    for enc, known in local:
        W, A, SW, SA = kd.take_rows(model, known)
        out.append(kd.Rows(enc, W, A, SW, SA, list(model.labels_), model.has_covariance,
                           codec.decode, codec))  # fmt: skip
    return out
