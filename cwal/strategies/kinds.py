"""The query strategies of mejer-crammer-2010 §6 (docs/algorithms.md §4) plus token entropy.

Every score is "lower = ask first"; the base class breaks ties toward the shorter sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cwal.confidence import DEFAULT_RANK, DEFAULT_S, Confidence, estimate
from cwal.decode import emissions
from cwal.io.sentence import Sentence
from cwal.strategies._margin import gsg_kernel, top2_kernel
from cwal.strategies.base import Strategy


def _sentence_reduce(conf: Confidence, values: np.ndarray, how: str) -> np.ndarray:
    """Per-sentence min / max / sum / mean of per-token ``values`` (+inf for an empty sentence)."""
    off = conf.sent_offsets
    out = np.full(conf.n_sentences, np.inf)
    nonempty = np.flatnonzero(np.diff(off) > 0)
    if nonempty.size:
        starts = off[:-1][nonempty]
        if how == "min":
            out[nonempty] = np.minimum.reduceat(values, starts)
        elif how == "max":
            out[nonempty] = np.maximum.reduceat(values, starts)
        elif how == "sum":
            out[nonempty] = np.add.reduceat(values, starts)
        else:
            out[nonempty] = np.add.reduceat(values, starts) / np.diff(off)[nonempty]
    return out


class _Draws(Strategy):
    """Base of the strategies that score by KD draws."""

    method = "kd-pc"

    def __init__(
        self,
        *,
        k: int = 50,
        s: float | None = None,
        rank: str = DEFAULT_RANK,
        candidates: int = 1000,
        seed: int = 0,
    ) -> None:
        super().__init__(candidates=candidates, seed=seed)
        self.k = int(k)
        self.s = float(DEFAULT_S[self.method] if s is None else s)
        self.rank = rank

    def _params(self) -> dict[str, Any]:
        return {"k": self.k, "s": self.s, **super()._params()}

    def _method(self, model: Any) -> str:
        return self.method

    def confidence(
        self, model: Any, sentences: Sequence[Sentence], seed: int, rank: str | None = None
    ) -> Confidence:
        return estimate(model, sentences, self._method(model), k=self.k, s=self.s, seed=seed,
                        rank=rank or self.rank)  # fmt: skip


class KDPC(_Draws):
    """KD-PC: a sentence scores its least confident token by ``Confidence.rank_key`` (default:
    the draws' mean margin of the predicted label, ties by Delta)."""

    name = "kd-pc"
    method = "kd-pc"

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        conf = self.confidence(model, sentences, seed)
        return _sentence_reduce(conf, conf.rank_key(), "min")


class KDFixed(KDPC):
    """KD-Fixed: as KD-PC with an isotropic covariance (any learner)."""

    name = "kd-fixed"
    method = "kd-fixed"


class MaxEntropy(_Draws):
    """Highest token entropy of the KD label distribution first (KD-PC if the model has a
    covariance, KD-Fixed otherwise)."""

    name = "max-entropy"
    reduce = "max"

    def _method(self, model: Any) -> str:
        return "kd-pc" if getattr(model, "has_covariance", False) else "kd-fixed"

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        conf = self.confidence(model, sentences, seed, rank="votes")  # entropy needs no margins
        assert conf.entropy is not None
        return -_sentence_reduce(conf, conf.entropy, self.reduce)


class MeanEntropy(MaxEntropy):
    """Highest mean token entropy first."""

    name = "mean-entropy"
    reduce = "mean"


class MinMargin(Strategy):
    """Smallest ``(s(best) - s(second best)) / length`` first (Tong & Koller 2001)."""

    name = "min-margin"

    def _top2(self, model: Any, sentences: Sequence[Sentence]):
        enc = model.encode(list(sentences))
        W, A = model.averaged()
        E = emissions(enc.feat_ids, enc.tok_offsets, W)
        margin, first, second = top2_kernel(E, enc.sent_offsets, np.ascontiguousarray(A))
        lengths = np.maximum(np.diff(enc.sent_offsets), 1)
        return enc, margin, first, second, lengths

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        _, margin, _, _, lengths = self._top2(model, sentences)
        return margin / lengths


class MinConfMargin(MinMargin):
    """MinMargin normalised by the model's uncertainty of it: ``m / sqrt(g^T Sigma g) / length``
    with ``g = Phi(x, best) - Phi(x, second)`` (Dredze & Crammer 2008); Sigma = I without one."""

    name = "min-conf-margin"

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        enc, margin, first, second, lengths = self._top2(model, sentences)
        W, A = model.averaged()
        if getattr(model, "has_covariance", False):
            SW, SA = model.covariance()
        else:
            SW, SA = np.ones_like(W), np.ones_like(A)
        gsg = gsg_kernel(enc.feat_ids, enc.tok_offsets, enc.sent_offsets, first, second,
                         np.ascontiguousarray(SW), np.ascontiguousarray(SA))  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(gsg > 0, margin / np.sqrt(gsg), np.inf)
        return z / lengths


class Random(Strategy):
    """Uniformly random sentences (the paper's baseline)."""

    name = "random"

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        return np.random.default_rng(seed).random(len(sentences))
