"""Dev-tuned default settings per feature template: what ``python -m cwal train`` and
bench/accuracy.py use unless told otherwise.

Tuned on dev splits carved from the training files only (the first and the last 10% of the
CoNLL-2000 train file for ``chunk``; of the CoNLL-2002 esp/ned train files for ``ner``), never on
a test file; reproduce a setting with ``python bench/accuracy.py --dev --set KEY=VALUE``.
Findings (mean dev F1 over the two folds, 10 epochs):

* BIOES re-encoding: NP +0.5 (0.954 vs 0.949 raw), full chunking +0.2 (last fold), Dutch NER -1.3,
  Spanish NER +-0: on for ``chunk`` only.
* Margin (non-mistake-driven) updates against the best wrong labeling: Dutch NER +1.5, NP +0.1.
* A count cut-off of 2 for chunking: same F1 within 0.002, a third of the features (memory).
* AROW r in {0.3, 1, 3}, CW eta in {0.7, 0.8, 0.9, 0.95}, the initial variance in {0.1, 1, 10}:
  flat within 0.002; L2 projection beats KL for AROW (NP -0.6, Dutch -1.3), ties for CW.
* NER: CW against the two best wrong labelings (k = 2) is the best (esp 0.792, ned 0.802; AROW
  k = 1: 0.790, 0.803; CW k = 1: 0.789, 0.801). Chunking: AROW k = 1 (NP 0.956).
"""

from __future__ import annotations

from typing import Any

DEFAULT_EPOCHS = 10
DEFAULT_LEARNER: dict[str, str] = {"chunk": "arow", "ner": "cw"}

_TEMPLATE: dict[str, dict[str, Any]] = {
    "chunk": {"encoding": "bioes", "min_count": 2},
    "ner": {"encoding": "raw", "min_count": 1},
}
_LEARNER: dict[str, dict[str, Any]] = {
    "arow": {"c": 1.0},
    "cw": {"eta": 0.9, "form": "stdev"},
    "pa": {"c": 1.0},
    "kbest-pa": {"c": 1.0, "k": 5},
    "perceptron": {},
}
_BOTH: dict[tuple[str, str], dict[str, Any]] = {("ner", "cw"): {"k": 2}}


def default_learner(template: str) -> str:
    """The learner ``python -m cwal train`` uses for a template when none is named."""
    return DEFAULT_LEARNER.get(template, "arow")


def recommended(template: str, learner: str | None = None) -> dict[str, Any]:
    """The tuned parameters of ``learner`` (default: the template's) on ``template``; pass them
    to ``make`` together with the template."""
    learner = learner or default_learner(template)
    if template not in _TEMPLATE:
        raise ValueError(f"no tuned defaults for template {template!r}; known: {sorted(_TEMPLATE)}")
    if learner not in _LEARNER:
        raise ValueError(f"no tuned defaults for learner {learner!r}; known: {sorted(_LEARNER)}")
    return {**_TEMPLATE[template], **_LEARNER[learner], **_BOTH.get((template, learner), {})}
