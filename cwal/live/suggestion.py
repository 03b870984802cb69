"""What ``next`` hands an annotator: a leased sentence with the model's prediction.

Which predicted spans the editor pre-fills is ``cwal.live.prefill``'s rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cwal.live.protocol import PoolSentence
from cwal.live.queue import Scored
from cwal.live.scoring import least_confident


@dataclass(frozen=True)
class Suggestion:
    """A sentence leased to an annotator, with the model's prediction: tags and per-token calibrated
    confidence (None at cold start), the least confident position, the live model's version and
    the version that scored it (at most ``max_staleness`` behind)."""

    sentence_id: int
    tokens: list[str]
    columns: dict[str, list[str]]
    predicted: list[str] | None
    confidence: list[float] | None
    least_confident: int | None
    model_version: int
    scored_version: int
    strategy: str


def suggest(
    s: PoolSentence,
    scored: Scored,
    version: int,
    cold: bool,
    strategy: str,
    calibrate: Callable[[np.ndarray, list[str]], np.ndarray],
    score_one: Callable[[PoolSentence], tuple[list[str], np.ndarray, int]],
) -> Suggestion:
    """The suggestion of ``s`` from the ranking ``scored``: its prediction and Delta margins, or,
    for a sentence the ranking did not score, ``score_one(s)`` (tags, margins, version) by the
    current model; ``calibrate`` maps margins and predicted tags to confidences. ``version``: the live model's when
    the request came (``scored`` is at most ``max_staleness`` behind it; a sentence scored on
    demand is at least as fresh). No prediction while the project is ``cold``."""
    pred = conf = least = None
    scored_version = scored.version
    if not cold:
        if s.id in scored.predicted:
            pred, margins = scored.predicted[s.id], scored.margins[s.id]
        else:
            pred, margins, scored_version = score_one(s)
        conf, least = calibrate(margins, pred).tolist(), least_confident(margins)
    return Suggestion(
        s.id, list(s.tokens), dict(s.columns), pred, conf, least, version, scored_version, strategy
    )
