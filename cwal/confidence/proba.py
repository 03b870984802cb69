"""The ``maxent`` confidence: a probabilistic learner's own probability of its predicted label.

A token classifier with a probability model (``maxent-l1``, Haffner, Phillips & Schapire) states
p(label | token) directly, so no draws or k-best lists are needed: the confidence of a token is the
probability of the label it predicts, the distribution is the full ``predict_proba`` row. The
paper warns that conditional models, normalised per example, can be poor confidence estimators:
this peer lets bench/confidence.py measure that against KD and Delta on the same tokens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cwal.confidence.result import Confidence
from cwal.features import Encoded
from cwal.measures import token_entropy


def has_proba(model: Any) -> bool:
    """Whether ``model`` states label probabilities (has ``predict_proba(enc)``)."""
    return callable(getattr(model, "predict_proba", None))


def proba_confidence(model: Any, enc: Encoded) -> Confidence:
    """Per-token probability of ``model``'s predicted label on an encoded batch.

    ``confidence`` is that probability (absolute, in [0, 1]), ``distribution (n, L)`` the label
    probabilities, ``entropy`` their entropy; ``rank_key`` orders tokens by the probability.
    A learner without probabilities raises ValueError (use kd-fixed or delta for it).
    """
    if not has_proba(model):
        raise ValueError(
            f"the maxent confidence needs a learner with label probabilities (maxent-l1); "
            f"{type(model).__name__} has none: use kd-fixed or delta"
        )
    dist = np.asarray(model.predict_proba(enc), dtype=np.float64)
    labels = np.asarray(model.predict_ids(enc), dtype=np.int32)
    conf = dist[np.arange(len(labels)), labels] if len(labels) else np.zeros(0)
    entropy = token_entropy(dist) if len(labels) else np.zeros(0)
    return Confidence("maxent", labels, conf, enc.sent_offsets, dist, entropy, rank="probability")
