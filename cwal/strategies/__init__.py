"""Query strategies for active learning: which unlabeled sentences to annotate next.

``make_strategy(name, **params)`` builds one by name; ``strategy.select(model, pool, n, ids)``
returns the ids of the n sentences to ask for (docs/algorithms.md §4).
"""

from __future__ import annotations

from typing import Any

from cwal.strategies.base import DEFAULT_CANDIDATES, Strategy
from cwal.strategies.kinds import (
    KDPC,
    KDFixed,
    MaxEntropy,
    MeanEntropy,
    MinConfMargin,
    MinMargin,
    Random,
)

STRATEGIES: dict[str, type[Strategy]] = {
    cls.name: cls
    for cls in (KDPC, KDFixed, MinMargin, MinConfMargin, MaxEntropy, MeanEntropy, Random)
}


def make_strategy(name: str, **params: Any) -> Strategy:
    """Build a strategy by name (see ``STRATEGIES``) with its parameters."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose one of {sorted(STRATEGIES)}") from None
    return cls(**params)


__all__ = [
    "DEFAULT_CANDIDATES",
    "KDPC",
    "STRATEGIES",
    "KDFixed",
    "MaxEntropy",
    "MeanEntropy",
    "MinConfMargin",
    "MinMargin",
    "Random",
    "Strategy",
    "make_strategy",
]
