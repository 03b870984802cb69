"""The query strategies of mejer-crammer-2010 §6 (docs/algorithms.md §4) plus token entropy.

Every score is "lower = ask first"; :func:`cwal.strategies.order.order` breaks ties toward the
shorter sentence. The confidence strategies (KD-PC, KD-Fixed, KBV, WKBV, Delta) score a sentence by
its least confident token under ``Confidence.rank_key``. KD-PC and KD-Fixed rank by Delta over
its noise deviation under N(mu, s Sigma) (``z-delta``): the analytic form of the expected share of
agreeing draws, increasing in it for a given s, so that the order is not draw noise (two draw seeds
of the sampled vote share shared 0-3 of their top 10 on the demo project in the first 20 labels).
The draws (vote shares, entropy) are made on the batch's row snapshot
(:func:`cwal.confidence.rows.restrict`), so the live queue and these objects draw alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cwal.confidence import DEFAULT_K, DEFAULT_S, RANKS, Confidence, estimate
from cwal.confidence.rows import restrict
from cwal.decode import emissions
from cwal.features import Encoded
from cwal.io.sentence import Sentence
from cwal.strategies._margin import gsg_kernel, top2_kernel
from cwal.strategies.base import Strategy, register
from cwal.strategies.order import encoded, lengths_of, sentence_reduce

Batch = Sequence[Sentence] | Encoded


class Estimated(Strategy):
    """Base of the strategies that score by a per-token confidence estimate of ``method``."""

    method = "kd-pc"
    token_rank: str | None = "z-delta"  # ``estimate``'s rank: the token key

    def __init__(
        self,
        *,
        k: int | None = None,
        s: float | None = None,
        rank: str | None = None,
        candidates: int = 1000,
        seed: int = 0,
    ) -> None:
        super().__init__(candidates=candidates, seed=seed)
        self.k = int(DEFAULT_K.get(self.method, 0) if k is None else k)
        self.s = float(DEFAULT_S.get(self.method, 0.0) if s is None else s)
        if rank is not None:  # another token key (``RANKS``), e.g. to compare with the default
            if rank not in RANKS:
                raise ValueError(f"unknown rank {rank!r}; choose one of {RANKS}")
            self.token_rank = rank

    def _params(self) -> dict[str, Any]:
        return {"k": self.k, "s": self.s, "rank": self.token_rank, **super()._params()}

    def _method(self, model: Any) -> str:
        return self.method

    def confidence(self, model: Any, batch: Batch, seed: int) -> Confidence:
        """Per-token confidence of the batch, estimated on its row snapshot (draws keyed by the
        snapshot's rows, weights as the live queue copies them)."""
        snap, enc = restrict(model, encoded(model, batch))
        return estimate(snap, enc, self._method(model), k=self.k, s=self.s, seed=seed,
                        rank=self.token_rank)  # fmt: skip

    def scores(self, model: Any, batch: Batch, seed: int) -> tuple[np.ndarray, Confidence]:
        conf = self.confidence(model, batch, seed)
        return sentence_reduce(conf.rank_key(), conf.sent_offsets, "min"), conf

    def score(self, model: Any, sentences: Batch, seed: int) -> np.ndarray:
        return self.scores(model, sentences, seed)[0]


@register
class KDPC(Estimated):
    """KD-PC: a sentence scores its least confident token (draws from N(mu, s Sigma))."""

    name = "kd-pc"
    method = "kd-pc"


@register
class KDFixed(KDPC):
    """KD-Fixed: as KD-PC with an isotropic covariance (any learner)."""

    name = "kd-fixed"
    method = "kd-fixed"


@register
class KBV(Estimated):
    """K-best Viterbi: the share of the k best labelings that agree, ties by Delta."""

    name = "kbv"
    method = "kbv"
    token_rank = "votes+delta"


@register
class WKBV(KBV):
    """Weighted k-best Viterbi: the k best labelings weighted by their scores."""

    name = "wkbv"
    method = "wkbv"


@register
class Delta(Estimated):
    """Delta: the smallest max-marginal margin of a token's predicted label."""

    name = "delta"
    method = "delta"
    token_rank = None


@register
class MaxEntropy(Estimated):
    """Highest token entropy of the KD label distribution first (KD-PC if the model has a
    covariance, KD-Fixed otherwise)."""

    name = "max-entropy"
    token_rank = "votes"  # entropy needs no margins
    reduce = "max"

    def _method(self, model: Any) -> str:
        return "kd-pc" if getattr(model, "has_covariance", False) else "kd-fixed"

    def scores(self, model: Any, batch: Batch, seed: int) -> tuple[np.ndarray, Confidence]:
        conf = self.confidence(model, batch, seed)
        assert conf.entropy is not None
        return -sentence_reduce(conf.entropy, conf.sent_offsets, self.reduce), conf


@register
class MeanEntropy(MaxEntropy):
    """Highest mean token entropy first."""

    name = "mean-entropy"
    reduce = "mean"


@register
class MinMargin(Strategy):
    """Smallest ``(s(best) - s(second best)) / length`` first (Tong & Koller 2001)."""

    name = "min-margin"

    def _top2(self, model: Any, sentences: Batch):
        enc = encoded(model, sentences)
        W, A = model.averaged()
        E = emissions(enc.feat_ids, enc.tok_offsets, W)
        margin, first, second = top2_kernel(E, enc.sent_offsets, np.ascontiguousarray(A))
        lengths = np.maximum(np.diff(enc.sent_offsets), 1)
        return enc, margin, first, second, lengths

    def score(self, model: Any, sentences: Batch, seed: int) -> np.ndarray:
        _, margin, _, _, lengths = self._top2(model, sentences)
        return margin / lengths


@register
class MinConfMargin(MinMargin):
    """MinMargin normalised by the model's uncertainty of it: ``m / sqrt(g^T Sigma g) / length``
    with ``g = Phi(x, best) - Phi(x, second)`` (Dredze & Crammer 2008); Sigma = I without one."""

    name = "min-conf-margin"

    def score(self, model: Any, sentences: Batch, seed: int) -> np.ndarray:
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


@register
class Random(Strategy):
    """Uniformly random sentences (the paper's baseline)."""

    name = "random"

    def score(self, model: Any, sentences: Batch, seed: int) -> np.ndarray:
        return np.random.default_rng(seed).random(len(lengths_of(sentences)))
