"""Diversity within a batch, for any strategy: no two near-duplicates or neighbours in one batch.

A batch of the ``n`` best-scored sentences often holds the same headline twice or consecutive
sentences of one article, which teach the model the same thing. ``Diverse(inner)`` keeps the inner
strategy's scores and order but fills each block of ``n`` greedily: a candidate too similar to one
already in the block (TF-IDF cosine of the model's feature vectors >= ``threshold``) or within
``neighbours`` ids of one (consecutive sentences of a document, for integer ids) waits for the next
block. The name of the wrapped strategy is the inner name plus ``+diverse``
(``make_strategy("errors-per-word+diverse")``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from cwal.io.sentence import Sentence
from cwal.strategies.base import Strategy
from cwal.strategies.order import encoded

SUFFIX = "+diverse"
HORIZON = 100
"""Positions of a ranking that are diversified (a live queue serves from its top; the rest keep
the inner order)."""


def feature_vectors(model: Any, sentences: Sequence[Sentence]) -> sp.csr_matrix:
    """One L2-normalised TF-IDF row per sentence over the model's feature ids (IDF within the
    batch, so features every sentence has, such as the bias, weigh nothing)."""
    enc = encoded(model, sentences)
    n = enc.n_sentences
    tokens_per = np.diff(enc.sent_offsets)
    feats_per_token = np.diff(enc.tok_offsets)
    rows = np.repeat(np.repeat(np.arange(n), tokens_per), feats_per_token)
    counts = sp.csr_matrix(
        (np.ones(len(enc.feat_ids)), (rows, np.asarray(enc.feat_ids, dtype=np.int64))),
        shape=(n, int(enc.feat_ids.max()) + 1 if len(enc.feat_ids) else 1),
    )
    counts.sum_duplicates()
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((1.0 + n) / (1.0 + df))
    weighted = counts.multiply(idf[None, :]).tocsr()
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    return sp.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ weighted


def diversify(
    ranked: np.ndarray,
    vectors: sp.csr_matrix,
    ids: Sequence[Hashable],
    block: int,
    threshold: float,
    neighbours: int,
    horizon: int = HORIZON,
) -> np.ndarray:
    """``ranked`` (positions, best first) re-filled block by block: each position goes into the
    current block unless it is a near-duplicate or neighbour of one already there, in which case
    it waits (in rank order) for the next block. Past ``horizon`` positions the order is kept."""
    ranked = np.asarray(ranked, dtype=np.int64)
    numeric = all(isinstance(i, int | np.integer) for i in ids)
    key = np.array([int(i) for i in ids], dtype=np.int64) if numeric else None
    waiting = list(ranked[:horizon])
    out: list[int] = []
    while waiting:
        members: list[int] = []
        closest = np.zeros(vectors.shape[0])  # highest cosine to a member of the block
        deferred = []
        for pos in waiting:
            if len(members) == max(block, 1):
                deferred.append(pos)
                continue
            near = closest[pos] >= threshold
            if key is not None and neighbours > 0 and members:
                near = near or bool(np.any(np.abs(key[members] - key[pos]) <= neighbours))
            if near:
                deferred.append(pos)
                continue
            members.append(pos)
            sims = (vectors @ vectors[pos].T).toarray().ravel()
            np.maximum(closest, sims, out=closest)
        out.extend(members)
        waiting = deferred
    return np.concatenate([np.array(out, dtype=np.int64), ranked[horizon:]])


class Diverse(Strategy):
    """Any strategy's ranking with near-duplicates and neighbours spread over batches."""

    def __init__(self, inner: Strategy, *, threshold: float = 0.5, neighbours: int = 1) -> None:
        super().__init__(candidates=inner.candidates, seed=inner.seed)
        if not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if int(neighbours) < 0:
            raise ValueError(f"neighbours must be >= 0, got {neighbours}")
        self.inner = inner
        self.threshold = float(threshold)
        self.neighbours = int(neighbours)
        self.name = inner.name + SUFFIX  # type: ignore[misc]  # per instance: the wrapped name

    def _params(self) -> dict[str, Any]:
        shown = {"threshold": self.threshold, "neighbours": self.neighbours}
        return {"inner": self.inner, **shown, **super()._params()}

    def score(self, model: Any, sentences: Sequence[Sentence], seed: int) -> np.ndarray:
        return self.inner.score(model, sentences, seed)

    def scores(self, model: Any, batch: Sequence[Sentence], seed: int) -> tuple[np.ndarray, Any]:
        return self.inner.scores(model, batch, seed)

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
        ranked = self.inner.order(model, sentences, scores, lengths, keys, tiebreak, n)
        if len(ranked) < 2:
            return ranked
        vectors = feature_vectors(model, sentences)
        return diversify(ranked, vectors, keys, n, self.threshold, self.neighbours)
