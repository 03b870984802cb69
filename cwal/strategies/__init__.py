"""Query strategies for active learning: which unlabeled sentences to annotate next.

``make_strategy(name, **params)`` builds one by name; ``strategy.rank(model, batch, seed)`` scores
and orders a batch (the live queue's code path), ``strategy.select(model, pool, n, ids)`` returns
the ids of the n sentences to ask for from a random candidate sample (docs/algorithms.md §4).
``register`` adds a strategy class (see :mod:`cwal.strategies.base`).
"""

from __future__ import annotations

from typing import Any

from cwal.strategies.base import DEFAULT_CANDIDATES, STRATEGIES, Strategy, register
from cwal.strategies.kinds import (
    KBV,
    KDPC,
    WKBV,
    Delta,
    KDFixed,
    MaxEntropy,
    MeanEntropy,
    MinConfMargin,
    MinMargin,
    Random,
)
from cwal.strategies.order import Ranking, order


def make_strategy(name: str, **params: Any) -> Strategy:
    """Build a strategy by name (see ``STRATEGIES``) with its parameters."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose one of {sorted(STRATEGIES)}") from None
    return cls(**params)


__all__ = [
    "DEFAULT_CANDIDATES",
    "KBV",
    "KDPC",
    "STRATEGIES",
    "WKBV",
    "Delta",
    "KDFixed",
    "MaxEntropy",
    "MeanEntropy",
    "MinConfMargin",
    "MinMargin",
    "Random",
    "Ranking",
    "Strategy",
    "make_strategy",
    "order",
    "register",
]
