"""The base of every query strategy: score a batch, order it by the one rule, take the first n.

``rank(model, batch, seed)`` scores a batch (sentences, or an Encoded batch in the model's feature
ids) and orders it (:func:`cwal.strategies.order.order`): the live queue calls it on a row
snapshot of the live model, ``select`` on a random candidate sample, so both run one code path.
``select(model, pool, n, ids=None)`` draws ``candidates`` sentences of the pool (the paper scores
1,000 random unlabeled sentences per step) with the strategy's own seeded generator, ranks them
and returns the ids of the first n; the last candidates and their scores stay in ``candidates_``
and ``scores_``. ``register`` adds a strategy class to ``STRATEGIES`` (``make_strategy``'s names).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from cwal.errors import EmptyPoolError, ExhaustedPoolError
from cwal.features import Encoded
from cwal.io.sentence import Sentence
from cwal.strategies.order import Ranking, lengths_of, order

DEFAULT_CANDIDATES = 1000


class Strategy:
    """A query strategy: subclasses set ``name`` and implement ``score`` (or ``scores``)."""

    name: ClassVar[str] = "strategy"

    def __init__(self, *, candidates: int = DEFAULT_CANDIDATES, seed: int = 0) -> None:
        if int(candidates) < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        self.candidates = int(candidates)
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)
        self.candidates_: list[Hashable] = []
        self.scores_: np.ndarray = np.zeros(0)

    def _params(self) -> dict[str, Any]:
        """Parameters shown by ``repr`` (subclasses add theirs)."""
        return {"candidates": self.candidates, "seed": self.seed}

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({shown})"

    def __str__(self) -> str:
        return self.name

    def score(self, model: Any, sentences: Sequence[Sentence] | Encoded, seed: int) -> np.ndarray:
        """One float per sentence, lower = more worth annotating (``seed`` for any draws)."""
        raise NotImplementedError

    def scores(
        self, model: Any, batch: Sequence[Sentence] | Encoded, seed: int
    ) -> tuple[np.ndarray, Any]:
        """The scores and the per-token :class:`~cwal.confidence.Confidence` behind them (None
        for a strategy that estimates none)."""
        return np.asarray(self.score(model, batch, seed), dtype=np.float64), None

    def rank(
        self,
        model: Any,
        batch: Sequence[Sentence] | Encoded,
        seed: int,
        keys: Sequence[Hashable] | None = None,
        n: int = 1,
    ) -> Ranking:
        """The batch scored (draws seeded by ``seed``) and ordered, best first; ``keys`` are the
        candidates' ids and ``n`` how many are taken at once (for ``order``)."""
        score, conf = self.scores(model, batch, seed)
        lengths = lengths_of(batch)
        if score.shape != lengths.shape:
            raise RuntimeError(
                f"{self.name}.score returned shape {score.shape}, want ({lengths.shape[0]},)"
            )
        keys = list(range(len(score))) if keys is None else list(keys)
        ranked = self.order(model, batch, score, lengths, keys, np.arange(len(score)), int(n))
        return Ranking(np.asarray(ranked), score, conf)

    def order(
        self,
        model: Any,
        sentences: Sequence[Sentence] | Encoded,
        scores: np.ndarray,
        lengths: np.ndarray,
        keys: Sequence[Hashable],
        tiebreak: np.ndarray,
        n: int,
    ) -> np.ndarray:
        """The candidates' positions, best first, by the one rule of
        :func:`cwal.strategies.order.order` (``tiebreak``: the draw order). ``n`` is how many
        will be taken at once (a batch); wrappers such as ``Diverse`` use it and ``keys``."""
        return order(scores, lengths)

    def select(
        self,
        model: Any,
        pool: Sequence[Sentence],
        n: int,
        ids: Sequence[Hashable] | None = None,
    ) -> list[Hashable]:
        """The ids (default: pool indices) of the ``n`` sentences to annotate next, best first.

        Raises EmptyPoolError for an empty pool and ExhaustedPoolError when it holds fewer than n.
        """
        pool = list(pool)
        if int(n) < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        if not pool:
            raise EmptyPoolError(f"{self.name}: the pool is empty, there is nothing to select")
        if n > len(pool):
            raise ExhaustedPoolError(
                f"{self.name}: asked for {n} sentences but only {len(pool)} are left in the pool"
            )
        keys = list(range(len(pool))) if ids is None else list(ids)
        if len(keys) != len(pool):
            raise ValueError(f"{len(keys)} ids for a pool of {len(pool)} sentences")
        if len(set(keys)) != len(keys):
            raise ValueError("pool ids must be distinct")
        size = min(self.candidates, len(pool))
        picked = self._rng.choice(len(pool), size=size, replace=False)
        draw_seed = int(self._rng.integers(2**31))
        drawn = [keys[i] for i in picked]
        ranking = self.rank(model, [pool[i] for i in picked], draw_seed, drawn, int(n))
        self.candidates_ = drawn
        self.scores_ = ranking.score
        return [drawn[i] for i in ranking.order[: int(n)]]


StrategyType = TypeVar("StrategyType", bound=type[Strategy])
STRATEGIES: dict[str, type[Strategy]] = {}


def register(cls: StrategyType) -> StrategyType:
    """Add a strategy class to ``STRATEGIES`` under its ``name`` (usable as a decorator)."""
    known = STRATEGIES.get(cls.name)
    if known is not None and known is not cls:
        raise ValueError(f"strategy name {cls.name!r} is taken by {known.__name__}")
    STRATEGIES[cls.name] = cls
    return cls
