"""The base of every query strategy: score a random candidate sample, take the n lowest.

``select(model, pool, n, ids=None)`` draws ``candidates`` sentences of the pool (the paper scores
1,000 random unlabeled sentences per step) with the strategy's own seeded generator, scores them
(lower = ask first), orders by score, then the shorter sentence, then the random draw order, and
returns the ids of the first n. The last candidates and their scores stay in ``candidates_`` and
``scores_``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

import numpy as np

from cwal.errors import EmptyPoolError, ExhaustedPoolError
from cwal.io.sentence import Sentence

DEFAULT_CANDIDATES = 1000


class Strategy:
    """A query strategy: subclasses set ``name`` and implement ``score``."""

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

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        """One float per sentence, lower = more worth annotating (``seed`` for any draws)."""
        raise NotImplementedError

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
        sample = [pool[i] for i in picked]
        draw_seed = int(self._rng.integers(2**31))
        scores = np.asarray(self.score(model, sample, draw_seed), dtype=np.float64)
        if scores.shape != (size,):
            raise RuntimeError(f"{self.name}.score returned shape {scores.shape}, want ({size},)")
        lengths = np.array([len(s) for s in sample])
        drawn = [keys[i] for i in picked]
        order = self.order(model, sample, scores, lengths, drawn, np.arange(size), int(n))
        self.candidates_ = drawn
        self.scores_ = scores
        return [drawn[i] for i in order[: int(n)]]

    def order(
        self,
        model: Any,
        sentences: Sequence[Sentence],
        scores: np.ndarray,
        lengths: np.ndarray,
        keys: Sequence[Hashable],
        tiebreak: np.ndarray,
        n: int,
    ) -> np.ndarray:
        """The candidates' positions, best first: lowest score, then the shorter sentence, then
        the lower ``tiebreak`` (the draw order in ``select``, the sentence id live). ``n`` is how
        many will be taken at once (a batch); wrappers such as ``Diverse`` use it and ``keys``."""
        return np.lexsort((tiebreak, lengths, scores))
