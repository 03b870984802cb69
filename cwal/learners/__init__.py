"""Learners behind one contract (``learn_one`` / ``predict`` / ``fit`` / ``save`` / ``load``).

``make(name, **params)`` builds one by name; ``load(path)`` reads any saved model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwal.learners.base import SequenceLearner
from cwal.learners.defaults import default_learner, recommended
from cwal.learners.logistic import CSPV, LSPV, MEC, LogisticLearner
from cwal.learners.maxent import MaxEntL1


class Perceptron(SequenceLearner):
    """Averaged structured perceptron (Collins 2002): mistake-driven, one Viterbi competitor."""

    name = "perceptron"

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params.update(algorithm="perceptron", k=1, mistake_driven=True)
        super().__init__(labels, template, **params)


class PA(SequenceLearner):
    """Passive-aggressive (PA-I) with a Hamming-cost margin against the best wrong labeling."""

    name = "pa"

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params["algorithm"] = "pa"
        super().__init__(labels, template, **params)


class KBestPA(SequenceLearner):
    """k-best MIRA: sequential single-constraint PA-I steps against the k best wrong labelings."""

    name = "kbest-pa"

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params["algorithm"] = "pa"
        params.setdefault("k", 5)
        super().__init__(labels, template, **params)


class CW(SequenceLearner):
    """Confidence-weighted learning for sequences (Mejer & Crammer 2010), stdev or var form."""

    name = "cw"
    has_covariance = True

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params["algorithm"] = "cw"
        super().__init__(labels, template, **params)


class AROW(SequenceLearner):
    """Adaptive regularisation of weights, margin target = Hamming distance (the paper's eq. 4)."""

    name = "arow"
    has_covariance = True

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params["algorithm"] = "arow"
        super().__init__(labels, template, **params)


class CWKC(CW):
    """k-constraint CW (crammer-dredze-kulesza-2009 §5.2, sequential update): one CW step per
    competitor, against the k best wrong labelings of the current mean (default k = 5), each
    from the mean and covariance the previous step left."""

    name = "cw-kc"

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params.setdefault("k", 5)
        super().__init__(labels, template, **params)


class AROWKC(AROW):
    """k-constraint AROW: sequential AROW steps against the k best wrong labelings (k = 5)."""

    name = "arow-kc"

    def __init__(self, labels: Sequence[str] = (), template: str = "chunk", **params: Any) -> None:
        params.setdefault("k", 5)
        super().__init__(labels, template, **params)


LEARNERS: dict[str, type[SequenceLearner]] = {
    cls.name: cls
    for cls in (Perceptron, PA, KBestPA, CW, AROW, CWKC, AROWKC, CSPV, LSPV, MEC, MaxEntL1)
}


def make(name: str, **params: Any) -> SequenceLearner:
    """Build a learner by name (``perceptron``, ``pa``, ``kbest-pa``, ``cw``, ``arow``, the
    k-constraint ``cw-kc``, ``arow-kc``, the logistic ``c-spv``, ``l-spv``, ``mec``, and the
    L1 maxent token classifier ``maxent-l1``)."""
    try:
        cls = LEARNERS[name]
    except KeyError:
        raise ValueError(f"unknown learner {name!r}; choose one of {sorted(LEARNERS)}") from None
    params.pop("algorithm", None)
    return cls(**params)


def load(path: str | Path) -> SequenceLearner:
    """Load any saved cwal model (never runs code from the file)."""
    return SequenceLearner.load(path)


__all__ = [
    "AROW",
    "AROWKC",
    "CSPV",
    "CW",
    "CWKC",
    "LSPV",
    "MEC",
    "MaxEntL1",
    "LEARNERS",
    "PA",
    "KBestPA",
    "LogisticLearner",
    "Perceptron",
    "SequenceLearner",
    "default_learner",
    "load",
    "make",
    "recommended",
]
