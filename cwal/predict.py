"""Apply a trained model to sentences: its tags and each token's confidence, streamed in batches.

The tags are exactly ``model.predict``'s (the averaged mean's Viterbi labeling), so scoring the
output against gold gives the F1 that ``cwal evaluate`` prints; the confidence of each token is
that labeling's confidence under a ``cwal.confidence`` method (KD-PC for learners with a
covariance, the model's own probability for ``maxent-l1``, else KD-Fixed), written as the
per-token column ``confidence`` ("0.9731").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from cwal.confidence import DEFAULT_K, DEFAULT_S, estimate
from cwal.io.sentence import Sentence
from cwal.io.spans import CONFIDENCE

BATCH = 500


def default_method(model: Any) -> str:
    """The confidence method that suits ``model``."""
    if getattr(model, "name", "") == "maxent-l1":
        return "maxent"
    return "kd-pc" if getattr(model, "has_covariance", False) else "kd-fixed"


def predict(
    model: Any,
    sentences: Iterable[Sentence],
    *,
    method: str | None = None,
    k: int | None = None,
    s: float | None = None,
    seed: int = 0,
    confidence: bool = True,
    batch_size: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Sentence]:
    """Each sentence again with ``tags`` the model's labeling and (with ``confidence``) the column
    ``confidence``; the input's own tags are replaced, its text, offsets and meta kept.
    ``progress(n)`` is called after every batch with the sentences done so far."""
    if not getattr(model, "labels_", None):
        raise ValueError("the model has not learned any label yet: train it first")
    method = method or default_method(model)
    if method in DEFAULT_S and s is None:
        s = DEFAULT_S[method]
    k = k if k is not None else DEFAULT_K.get(method)
    done = 0
    it = iter(sentences)
    while batch := list(itertools.islice(it, batch_size)):
        lengths = [len(sent) for sent in batch]
        if confidence:
            conf = estimate(model, batch, method, k=k, s=s, seed=seed)
            tags = model.tags_of(conf.labels, lengths)
            values = conf.per_sentence(conf.confidence)
        else:
            tags = model.predict(batch)
            values = [None] * len(batch)
        for sent, labels, conf_values in zip(batch, tags, values, strict=True):
            columns = dict(sent.columns)
            if conf_values is not None:
                columns[CONFIDENCE] = [f"{float(c):.4f}" for c in conf_values]
            yield replace(sent, tags=list(labels), columns=columns, meta=dict(sent.meta))
        done += len(batch)
        if progress is not None:
            progress(done)
