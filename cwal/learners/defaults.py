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
* Logistic updates (c-spv, l-spv, mec; both folds, same protocol, AROW alongside: NP 0.954, esp
  0.788, ned 0.795): gamma barely matters for SPV (0.1-100 within noise, it moves the margin
  an update aims for only logarithmically); fewer competitors are better on NER (k = 5 -> 1:
  C-SPV ned +0.7, last fold). C-SPV gamma 1, k 1: 0.954, 0.786, 0.794; L-SPV gamma 0.1, k 1:
  0.954, 0.788, 0.795; MEC k 2 wants a small gamma on NER (ned last fold: gamma 1 0.743,
  0.1 0.746, 0.01 0.748), gamma 0.01: 0.954, 0.787, 0.792. 10 projected gradient steps per update.
* Logistic updates in AROW's metric (``metric="arow"``, r = 1: inner products and steps in AROW's
  diagonal covariance, which each update shrinks). Mean of 3 training orders (seeds 0-2) per fold,
  then of the two folds, 10 epochs (``--dev --fold last|first --seeds 3``): the plain updates lag
  AROW on NER (esp / ned: AROW 0.7895 / 0.7966; C-SPV 0.7847 / 0.7920, L-SPV 0.7861 / 0.7930,
  MEC 0.7867 / 0.7900) and still rise at epoch 10 where AROW has levelled off by epoch 5-7; PA
  lags alike (ned 0.7910): the missing per-feature step size, not the logistic loss. In AROW's
  metric: C-SPV 0.7897 / 0.7980, L-SPV 0.7885 / 0.7969, MEC 0.7883 / 0.7966; NP 0.9549, 0.9548,
  0.9553 (AROW 0.9542, plain 0.9541, 0.9540, 0.9542): on for all three. Left alone (ned, paired
  by seed against AROW, mean of the folds, points; plain C-SPV -0.46): Laplacian prior -0.21,
  gamma 0.01 -0.55, gamma 100 -0.78, mistake-driven -0.96, one gradient step -2.78; L-SPV
  Laplacian -0.20 (Gaussian -0.36); MEC Laplacian -0.54 (Gaussian -0.67). In AROW's metric
  (C-SPV +0.13): gamma 0.1 +0.08, Laplacian +0.18, within the spread of the training orders (sd
  over seeds per fold 0.1-0.45). Training takes 1.4-1.7x as long (ned).
* Epochs (issue 24; ``--dev --epochs 15``, seed 0): a fixed 10 is as good as a dev-chosen count.
  Chunking, AROW, mean of the two folds: 0.9475 at 10 epochs, 0.9472-0.9476 for any of 4-12
  (last fold alone peaks at 6: 0.9505 vs 0.9493). Last fold, CW k = 2: esp peaks at 10 (0.7857);
  ned still rises slowly (10: 0.7500, 15: 0.7537). ``python -m cwal train --dev FILE`` keeps the
  best dev epoch (``fit(patience=...)``) for corpora whose curve differs. First fold (issue 24,
  ``--dev --fold first --epochs 16``): ned 0.8469 at 10, 0.8483 at 12-16; esp peaks at 7 (0.7998
  vs 0.7933 at 10). The best count differs by corpus and fold, so 10 stays the fixed default and
  ``python -m cwal train --choose-epochs`` picks the count on a carved 10% split instead.
* Word clusters from the training text (issue 24; cwal/features/clusters.py: PPMI + SVD vectors
  of the +-2 neighbours, k-means at 1024 nested into 256/64/16; the cluster at offsets -1..+1 at
  every level and bigrams of the 64 level). ``--dev [--fold first] --set clusters=true|false``,
  10 epochs, seed 0, last / first fold, with vs without: chunk (AROW) 0.9501 / 0.9462 vs
  0.9493 / 0.9458 (+0.06 points on the mean), esp (CW k 2) 0.7883 / 0.7948 vs 0.7857 / 0.7933
  (+0.20), ned 0.7529 / 0.8391 vs 0.7500 / 0.8469 (-0.24): on for ``chunk``, off for ``ner``
  (no gain over its four dev splits then; with the document features below they gain: on).
* Document features (issue 24; cwal/features/documents.py: how the same word is written
  elsewhere in its -DOCSTART- document, or in its block of 20 sentences where the text has no
  documents: case, runs of capitalised words, the word before its first mention).
  ``--dev [--fold first] --seeds 3 --set documents=true|false``, CW k = 2, mean of 3 training
  orders, last / first fold, with vs without: ned 0.7469 / 0.8553 vs 0.7479 / 0.8453 (+0.45 on
  the mean of the folds), esp 0.7822 / 0.8057 vs 0.7848 / 0.7938 (+0.47); sd over orders
  0.001-0.003. On for ``ner``. (Seed 0 alone, without the word-before feature: ned 0.7480 /
  0.8520, esp 0.7818 / 0.8038; case features only: ned 0.7546 / 0.8501, esp 0.7899 / 0.7915.)
* Word clusters for ``ner`` together with the document features (same protocol, 3 orders,
  ``--set clusters=true``): ned 0.7555 / 0.8494, esp 0.7879 / 0.8097 against documents alone
  ned 0.7469 / 0.8553, esp 0.7822 / 0.8057 (ned +0.14, esp +0.49 on the mean of the folds) and
  against neither (the previous default) ned +0.59, esp +0.95: clusters on for ``ner`` too.
* Lexicon of the training labels (issue 24; cwal/features/lexicon.py: the labeled spans matched
  in the text, jackknifed over 10 folds of the training data). ``--dev --fold testa|last|first
  --seeds 2 --set lexicon=true``, CW k = 2, mean of 2 orders, with vs without: ned 0.7956 /
  0.7618 / 0.8683 vs 0.7919 / 0.7514 / 0.8494 (+0.37 / +1.04 / +1.89 points), esp 0.7782 /
  0.7921 / 0.8093 vs 0.7775 / 0.7887 / 0.8064 (+0.07 / +0.34 / +0.29): on for ``ner``. (``testa``:
  trained on the whole training file, scored on the official CoNLL-2002 dev file.) Chunking
  (AROW, last fold): 0.9509 vs 0.9507, off. Tried on ``ner`` and left out (testa, 2 orders,
  esp / ned): clusters at -2..+2 0.7733 / 0.7935 (vs 0.7775 / 0.7919), bigrams at the 16, 64
  and 256 levels 0.7724 / 0.7890, the word's own cluster only 0.7727 / 0.7946; an average of
  the weights of 3 training orders (ned testa 0.7951 vs 0.7926 mean of the three alone).
  Lexicon variants against the default (10 folds, tokens as written, whole entries; testa /
  last fold, 2 orders, esp and ned): 10 folds 0.7782 / 0.7921, 0.7956 / 0.7618; 5 folds 0.7757
  / 0.7891, 0.7969 / 0.7560; 20 folds 0.7764 / 0.7923, 0.7950 / 0.7579; lowercased matching
  0.7763 / 0.7908, 0.7961 / 0.7591; also each word of an entry alone (``lxw-T``: the word was
  inside a span of type T in another fold) 0.7741 / 0.7937, 0.7974 / 0.7647 (esp -0.13 on the
  mean of the two, ned +0.24: left out). CW k = 3 with the lexicon (testa): 0.7747, 0.7954.
"""

from __future__ import annotations

from typing import Any

DEFAULT_EPOCHS = 10
DEFAULT_LEARNER: dict[str, str] = {"chunk": "arow", "ner": "cw"}

_TEMPLATE: dict[str, dict[str, Any]] = {
    "chunk": {"encoding": "bioes", "min_count": 2, "clusters": True},
    "ner": {
        "encoding": "raw", "min_count": 1, "documents": True, "clusters": True, "lexicon": True,
    },
}  # fmt: skip
# learners whose own fit learns no word clusters, documents nor lexicon
_NO_CLUSTERS = {"maxent-l1"}
_LEARNER: dict[str, dict[str, Any]] = {
    "arow": {"c": 1.0},
    "cw": {"eta": 0.9, "form": "stdev"},
    "pa": {"c": 1.0},
    "kbest-pa": {"c": 1.0, "k": 5},
    "cw-kc": {"eta": 0.9, "form": "stdev", "k": 5},
    "arow-kc": {"c": 1.0, "k": 5},
    "perceptron": {},
    # one-vs-rest: liblinear fits NP chunking with the C search in about a minute; the multinomial
    # form's saga costs 1-2 min per pass there (maxent.py) -- and the paper prefers it too
    "maxent-l1": {"form": "independent"},
    # logistic updates: c is gamma, k the competing labelings (see the findings above)
    "c-spv": {"c": 1.0, "k": 1, "prior": "gaussian", "steps": 10, "metric": "arow", "r": 1.0},
    "l-spv": {"c": 0.1, "k": 1, "prior": "gaussian", "steps": 10, "metric": "arow", "r": 1.0},
    "mec": {"c": 0.01, "k": 2, "prior": "gaussian", "steps": 10, "metric": "arow", "r": 1.0},
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
    out = {**_TEMPLATE[template], **_LEARNER[learner], **_BOTH.get((template, learner), {})}
    if learner in _NO_CLUSTERS:
        for key in ("clusters", "documents", "lexicon"):
            out.pop(key, None)
    return out
