"""One simulated active-learning run: the gold tags play the annotator (algorithms.md §4).

``run_cell(data, config, strategy, seed, sink)`` labels ``config.initial`` random pool sentences,
then repeats: draw a strategy seed, let the strategy score a random sample of ``candidates``
unlabeled sentences and label its best ``batch``; at every ``eval_every`` labeled sentences (and at
the budget) evaluate on the held-out split and hand the sink the point and the resume state.

Resuming never unpickles a model: the learner is rebuilt from the labeled positions in order
(replayed online, or refit in ``retrain`` mode), which is deterministic, and the generator state is
restored, so a resumed run continues exactly as the uninterrupted one would have.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from cwal.io.sentence import Sentence
from cwal.learners import make
from cwal.measures import chunk_f1
from cwal.measures.stopping import cohen_kappa
from cwal.simulate.cache import CachedModel, FeatureCache
from cwal.simulate.config import FULL_DATA, SimConfig
from cwal.simulate.sinks import Point, ResultSink, Saved
from cwal.strategies import make_strategy

STOP_SET = 1000
"""Pool sentences (seeded per run) whose tags successive models are compared on: the stopping
signal's stop set (``kappa`` at every point after the first, ``cwal.measures.stopping``)."""

Progress = Callable[[str, int, int], None]
"""``progress(strategy, seed, labeled_sentences)`` after every step."""


@dataclass
class SimData:
    """A gold corpus split into the pool the strategies pick from and the evaluation split."""

    pool: list[Sentence]
    eval: list[Sentence]
    template: str = "chunk"
    name: str = ""
    labels: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.pool or not self.eval:
            raise ValueError("a simulation needs a non-empty pool and evaluation split")
        for what, part in (("pool", self.pool), ("eval", self.eval)):
            if any(s.tags is None for s in part):
                raise ValueError(f"every {what} sentence needs gold tags")
        if not self.labels:
            self.labels = sorted({t for s in self.pool + self.eval for t in s.tags or ()})

    @cached_property
    def cache(self) -> FeatureCache:
        return FeatureCache(self.pool + self.eval, self.template)

    @cached_property
    def lengths(self) -> np.ndarray:
        return np.array([len(s) for s in self.pool], dtype=np.int64)

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the tokens and tags of both splits (a resume must see the same data)."""
        h = hashlib.sha256()
        for part in (self.pool, self.eval):
            for s in part:
                h.update("\x1f".join(s.tokens).encode() + b"\x1e")
                h.update("\x1f".join(s.tags or ()).encode() + b"\x1d")
            h.update(b"\x00")
        return h.hexdigest()[:16]


def new_learner(data: SimData, config: SimConfig) -> Any:
    template = config.template or data.template
    return make(
        config.learner, labels=list(data.labels), template=template, **config.learner_params
    )


def evaluate(model: CachedModel, data: SimData) -> dict[str, float]:
    """conlleval scores of the model on the evaluation split."""
    n_pool = len(data.pool)
    ids = model.model.predict_ids(model.encode_indices(np.arange(n_pool, n_pool + len(data.eval))))
    labels = model.model.labels_
    pred, t = [], 0
    for s in data.eval:
        pred.append([labels[i] for i in ids[t : t + len(s)]])
        t += len(s)
    report = chunk_f1([s.tags for s in data.eval], pred)
    return {
        "f1": report.f1,
        "precision": report.precision,
        "recall": report.recall,
        "accuracy": report.token_accuracy,
    }


def stop_set(data: SimData, seed: int) -> np.ndarray:
    """The run's stop set: ``STOP_SET`` pool positions drawn with the seed (sorted)."""
    n = len(data.pool)
    return np.sort(np.random.default_rng([seed, 2]).choice(n, size=min(STOP_SET, n), replace=False))


def _fit(data: SimData, config: SimConfig, positions: Sequence[int], seed: int) -> CachedModel:
    model = new_learner(data, config)
    model.fit([data.pool[i] for i in positions], epochs=config.epochs, seed=seed)
    return CachedModel(model, data.cache)


def _learn(model: CachedModel, sentences: Sequence[Sentence]) -> None:
    for s in sentences:
        model.model.learn_one(s.tokens, s.tags, **s.columns)


def _refit_seed(seed: int, n_labeled: int) -> int:
    return (seed * 1_000_003 + n_labeled) % 2**31


def run_reference(data: SimData, config: SimConfig, seed: int, sink: ResultSink) -> str:
    """The full-data cell: the learner trained on the whole pool (one online pass in ``online``
    mode, ``epochs`` passes in ``retrain`` mode), evaluated once."""
    saved = sink.saved(FULL_DATA, seed)
    if saved is not None and saved.status == "done":
        return "done"
    start, cpu = time.perf_counter(), time.process_time()
    model = new_learner(data, config)
    epochs = config.epochs if config.mode == "retrain" else 1
    model.fit(data.pool, epochs=epochs, seed=seed)
    metrics = evaluate(CachedModel(model, data.cache), data)
    metrics["seconds"] = time.perf_counter() - start
    metrics["cpu_seconds"] = time.process_time() - cpu
    point = Point(0, len(data.pool), int(data.lengths.sum()), metrics)
    sink.record(FULL_DATA, seed, point, {"fingerprint": data.fingerprint})
    sink.finish(FULL_DATA, seed, "done")
    return "done"


def _start(
    data: SimData, config: SimConfig, seed: int, rng: np.random.Generator, saved: Saved | None
) -> tuple[list[int], int, tuple[float, float], CachedModel]:
    """Labeled positions, steps done, (wall, CPU) seconds spent and the learner: the seed's
    random initial sentences, or the saved state with its learner rebuilt and ``rng`` restored."""
    if saved is None or not saved.state:
        first = np.random.default_rng([seed, 0]).choice(
            len(data.pool), size=min(config.initial, len(data.pool)), replace=False
        )
        labeled = [int(i) for i in first]
        model = CachedModel(new_learner(data, config), data.cache)
        _learn(model, [data.pool[i] for i in labeled])
        return labeled, 0, (0.0, 0.0), model
    state = saved.state
    if state.get("fingerprint") != data.fingerprint:
        raise ValueError(f"seed {seed}: the saved run used other data; start a new one")
    labeled = [int(i) for i in state["labeled"]]
    rng.bit_generator.state = state["rng"]
    if config.mode == "retrain":
        model = _fit(data, config, labeled, _refit_seed(seed, len(labeled)))
    else:
        model = CachedModel(new_learner(data, config), data.cache)
        _learn(model, [data.pool[i] for i in labeled])
    spent = (float(state["seconds"]), float(state.get("cpu_seconds", 0.0)))
    return labeled, int(state["step"]), spent, model


def run_cell(
    data: SimData,
    config: SimConfig,
    strategy: str,
    seed: int,
    sink: ResultSink,
    progress: Progress | None = None,
) -> str:
    """Run (or resume) one strategy x seed curve to the budget (``budget`` sentences, or
    ``budget_words`` words when set); returns its final status."""
    if strategy == FULL_DATA:
        return run_reference(data, config, seed, sink)
    saved = sink.saved(strategy, seed)
    if saved is not None and saved.status == "done":
        return "done"
    pool = data.pool
    budget = min(config.budget, len(pool))
    rng = np.random.default_rng([seed, 1])
    labeled, step, spent, model = _start(data, config, seed, rng, saved)
    start, cpu = time.perf_counter() - spent[0], time.process_time() - spent[1]
    mask = np.zeros(len(pool), dtype=bool)
    mask[labeled] = True
    stops = stop_set(data, seed)

    def tags_of_stops() -> np.ndarray:
        return model.model.predict_ids(model.encode_indices(stops))

    previous = tags_of_stops() if saved is not None and saved.state else None

    def record() -> None:
        nonlocal model, previous
        if config.mode == "retrain":
            model = _fit(data, config, labeled, _refit_seed(seed, len(labeled)))
        metrics = evaluate(model, data)
        current = tags_of_stops()
        if previous is not None:
            metrics["kappa"] = cohen_kappa(previous, current)
        previous = current
        metrics["seconds"] = time.perf_counter() - start
        metrics["cpu_seconds"] = time.process_time() - cpu
        state = {
            "labeled": list(labeled),
            "rng": rng.bit_generator.state,
            "step": step,
            "seconds": metrics["seconds"],
            "cpu_seconds": metrics["cpu_seconds"],
            "fingerprint": data.fingerprint,
        }
        n_tokens = int(data.lengths[labeled].sum())
        sink.record(strategy, seed, Point(step, len(labeled), n_tokens, metrics), state)

    if saved is None or not saved.state:
        record()
    params = config.params_for(strategy)
    last_mark = len(labeled) // config.eval_every
    words = int(data.lengths[labeled].sum())

    def room() -> int:
        """Sentences still to label: up to the sentence budget, or while under the word
        budget (then up to the pool)."""
        if config.budget_words is None:
            return budget - len(labeled)
        return len(pool) - len(labeled) if words < config.budget_words else 0

    while room() > 0:
        step += 1
        chooser = make_strategy(
            strategy, candidates=config.candidates, seed=int(rng.integers(2**31)), **params
        )
        unlabeled = np.flatnonzero(~mask)
        n = min(config.batch, room())
        picked = chooser.select(model, [pool[i] for i in unlabeled], n, ids=unlabeled.tolist())
        _learn(model, [pool[i] for i in picked])
        labeled += [int(i) for i in picked]
        words += int(data.lengths[picked].sum())
        mask[picked] = True
        mark = len(labeled) // config.eval_every
        if mark > last_mark or room() <= 0:
            record()
            last_mark = mark
        if progress is not None:
            progress(strategy, seed, len(labeled))
    sink.finish(strategy, seed, "done")
    return "done"
