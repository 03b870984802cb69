"""Cost-aware strategies: what a lead pays for is annotated words, so score the gain per word.

The paper's strategies rank a sentence by its least-confident token, which favours long sentences
(more tokens, more chances of a doubtful one). Settles & Craven (2008) compared, for sequence
labeling, the total token entropy of a sentence with its length-normalised form; here both, plus
the expected number of tokens an annotator corrects per word read. Every score comes from the KD
draws (KD-PC with a covariance, KD-Fixed without) and is "lower = ask first".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cwal.confidence import Confidence
from cwal.strategies.base import register
from cwal.strategies.kinds import Batch, Estimated
from cwal.strategies.order import sentence_reduce


def _sentence_reduce(conf: Confidence, values: np.ndarray, how: str) -> np.ndarray:
    return sentence_reduce(values, conf.sent_offsets, how)


class _PerWord(Estimated):
    """Scores ``-gain(conf, lengths)`` from the vote shares of KD-PC draws (covariance learners)
    or KD-Fixed draws (others); an empty sentence gains nothing and comes last."""

    token_rank = "votes"

    def _method(self, model: Any) -> str:
        return "kd-pc" if getattr(model, "has_covariance", False) else "kd-fixed"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def scores(self, model: Any, batch: Batch, seed: int) -> tuple[np.ndarray, Confidence]:
        conf = self.confidence(model, batch, seed)
        lengths = np.diff(conf.sent_offsets)
        with np.errstate(invalid="ignore", divide="ignore"):
            gain = self.gain(conf, np.maximum(lengths, 1).astype(np.float64))
        return np.where(lengths > 0, -gain, np.inf), conf


@register
class ErrorsPerWord(_PerWord):
    """Most expected corrections per word first: ``sum_t (1 - confidence_t) / length``, the
    expected share of a sentence's tokens whose predicted tag is wrong (the annotator fixes them),
    confidence being the share of draws that agree with the prediction."""

    name = "errors-per-word"

    def gain(self, conf: Confidence, lengths: np.ndarray) -> np.ndarray:
        return _sentence_reduce(conf, 1.0 - conf.confidence, "sum") / lengths


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
