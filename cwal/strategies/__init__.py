"""Query strategies for active learning: which unlabeled sentences to annotate next.

``make_strategy(name, **params)`` builds one by name; ``strategy.rank(model, batch, seed)`` scores
and orders a batch (the live queue's code path), ``strategy.select(model, pool, n, ids)`` returns
the ids of the n sentences to ask for from a random candidate sample (docs/algorithms.md §4).
``register`` adds a strategy class (see :mod:`cwal.strategies.base`). Any name with the suffix
``+diverse`` wraps that strategy in :class:`Diverse` (no near-duplicates or neighbours within a
batch; its ``threshold`` and ``neighbours`` are taken from ``params``).
"""

from __future__ import annotations

from typing import Any

from cwal.strategies.base import DEFAULT_CANDIDATES, STRATEGIES, Strategy, register
from cwal.strategies.cost import ErrorsPerWord, LeastConfidentPerWord, TotalEntropy
from cwal.strategies.diversity import SUFFIX as DIVERSE
from cwal.strategies.diversity import Diverse
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


def base_name(name: str) -> str:
    """The registered strategy a name builds (``kd-pc+diverse`` -> ``kd-pc``)."""
    return name.removesuffix(DIVERSE)


def is_strategy(name: str) -> bool:
    """Whether ``make_strategy`` knows ``name`` (a registered one, optionally ``+diverse``)."""
    return base_name(name) in STRATEGIES


def make_strategy(name: str, **params: Any) -> Strategy:
    """Build a strategy by name (see ``STRATEGIES``; ``NAME+diverse`` for the diverse form,
    whose ``threshold`` and ``neighbours`` come from ``params``) with its parameters."""
    try:
        cls = STRATEGIES[base_name(name)]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose one of {sorted(STRATEGIES)}") from None
    if name == cls.name:
        return cls(**params)
    wrap = {key: params.pop(key) for key in ("threshold", "neighbours") if key in params}
    return Diverse(cls(**params), **wrap)


__all__ = [
    "DEFAULT_CANDIDATES",
    "DIVERSE",
    "Diverse",
    "ErrorsPerWord",
    "LeastConfidentPerWord",
    "TotalEntropy",
    "base_name",
    "is_strategy",
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
