"""Cost-aware strategies: what a lead pays for is annotated words, so score the gain per word.

The paper's strategies rank a sentence by its least-confident token, which favours long sentences
(more tokens, more chances of a doubtful one). Settles & Craven (2008) compared, for sequence
labeling, the total token entropy of a sentence with its length-normalised form; here both, plus
the expected number of tokens an annotator corrects per word read. Every score comes from KD
(KD-PC with a covariance, KD-Fixed without: its analytic share for errors-per-word, the draws'
votes for the others) and is "lower = ask first".

``density`` (Settles & Craven 2008's information density, exponent beta) multiplies a sentence's
gain by its mean TF-IDF cosine similarity to the other candidates (a random sample of the pool),
raised to beta: an uncertain sentence unlike the rest of the pool (a fragment, a table row, a
foreign-language line) teaches the model little about the sentences it will be used on.
``dense-errors-per-word`` is ``errors-per-word`` with beta = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cwal.confidence import Confidence
from cwal.strategies.base import register
from cwal.strategies.diversity import feature_vectors
from cwal.strategies.kinds import Batch, Estimated
from cwal.strategies.order import sentence_reduce


def _sentence_reduce(conf: Confidence, values: np.ndarray, how: str) -> np.ndarray:
    return sentence_reduce(values, conf.sent_offsets, how)


class _PerWord(Estimated):
    """Scores ``-gain(conf, lengths)`` from the vote shares of KD-PC draws (covariance learners)
    or KD-Fixed draws (others); an empty sentence gains nothing and comes last."""

    token_rank = "votes"
    density = 0.0  # the information density exponent beta (module doc)

    def __init__(
        self,
        *,
        density: float | None = None,
        k: int | None = None,
        s: float | None = None,
        rank: str | None = None,
        candidates: int = 1000,
        seed: int = 0,
    ) -> None:
        super().__init__(k=k, s=s, rank=rank, candidates=candidates, seed=seed)
        if density is not None:
            if not 0.0 <= float(density) <= 10.0:
                raise ValueError(f"density must be in [0, 10], got {density}")
            self.density = float(density)

    def _params(self) -> dict[str, Any]:
        return {"density": self.density, **super()._params()}

    def _method(self, model: Any) -> str:
        return "kd-pc" if getattr(model, "has_covariance", False) else "kd-fixed"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def scores(self, model: Any, batch: Batch, seed: int) -> tuple[np.ndarray, Confidence]:
        conf = self.confidence(model, batch, seed)
        lengths = np.diff(conf.sent_offsets)
        with np.errstate(invalid="ignore", divide="ignore"):
            gain = self.gain(conf, np.maximum(lengths, 1).astype(np.float64))
        if self.density > 0 and len(lengths) > 1:
            gain = gain * similarity_density(model, batch) ** self.density
        return np.where(lengths > 0, -gain, np.inf), conf


def similarity_density(model: Any, batch: Batch) -> np.ndarray:
    """Each sentence's mean TF-IDF cosine similarity to the other sentences of the batch (in
    [0, 1]; one pass over the non-zeros: ``V (V^T 1) - 1`` over ``n - 1``)."""
    vectors = feature_vectors(model, batch)
    n = vectors.shape[0]
    norms = np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel()  # 1, or 0 for no features
    total = vectors @ np.asarray(vectors.sum(axis=0)).ravel()
    return np.clip((total - norms) / max(n - 1, 1), 0.0, 1.0)


@register
class ErrorsPerWord(_PerWord):
    """Most expected corrections per word first: ``sum_t (1 - confidence_t) / length``, the
    expected share of a sentence's tokens whose predicted tag is wrong (the annotator fixes them),
    confidence being the expected share of draws that agree with the prediction: the analytic
    Phi(z / sqrt(s)) (``z-delta``: no draws, so no draw noise in the order; on the dev splits
    it needed 0.61 of Random's words to Random's final F1 against 0.73 (np) and 0.70 (esp) with 50
    sampled votes, bench/active_learning.py --quick --dev 0.1, 5 seeds)."""

    name = "errors-per-word"
    token_rank = "z-delta"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        return _sentence_reduce(conf, 1.0 - conf.confidence, "sum") / lengths


@register
class DenseErrorsPerWord(ErrorsPerWord):
    """``errors-per-word`` times the sentence's information density (module doc, beta = 1)."""

    name = "dense-errors-per-word"
    density = 1.0


@register
class LeastConfidentPerWord(_PerWord):
    """The least-confident token's doubt divided by the words to read: ``(1 - min_t
    confidence_t) / length`` (the paper's least-confidence, cost-normalised)."""

    name = "least-confident-per-word"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        return (1.0 - _sentence_reduce(conf, conf.confidence, "min")) / lengths


@register
class TotalEntropy(_PerWord):
    """Highest total token entropy first: ``sum_t H_t`` over the draws' label distribution
    (Settles & Craven 2008's total token entropy; no length normalisation, so it is the
    cost-blind reference of the two above)."""

    name = "total-entropy"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        assert conf.entropy is not None
        return _sentence_reduce(conf, conf.entropy, "sum")
