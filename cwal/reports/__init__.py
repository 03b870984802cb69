"""What the lead pages show, as UI-free data functions returning DataFrames.

``progress``: labeled amount over time, throughput, label distribution, prequential and learning
curves; ``calibration``: reliability per confidence method, confusion matrix, entropy histograms;
``model``: the live model rebuilt from the store and what it says about sentences (confidence,
entropy, disagreement with given labels, gold scores, the pool-accuracy estimate); ``ranking``:
least-sure pool tokens and the review ranking of labeled tokens.
"""

from cwal.reports.calibration import BINS, confusion_matrix, entropy_histograms, reliability
from cwal.reports.model import (
    GIVEN_COLUMNS,
    TOKEN_COLUMNS,
    FeatureCache,
    ModelState,
    batch_encoding,
    checkpoint_state,
    disagreement,
    evaluate,
    given_ids,
    pool_estimate,
    reading_states,
    rebuild,
    token_frame,
    untrained,
)
from cwal.reports.progress import (
    LEARNING,
    MEASURES,
    PREQUENTIAL_WINDOW,
    TRUST,
    accuracy_curves,
    annotator_pace,
    label_distribution,
    labeled_amount,
    labeled_sentences,
    learning_curve,
    model_version,
    prediction_tokens,
    prequential_curve,
    throughput,
)
from cwal.reports.ranking import context, least_sure, review_ranking

__all__ = [
    "GIVEN_COLUMNS",
    "TOKEN_COLUMNS",
    "LEARNING",
    "MEASURES",
    "PREQUENTIAL_WINDOW",
    "TRUST",
    "accuracy_curves",
    "prediction_tokens",
    "BINS",
    "FeatureCache",
    "ModelState",
    "annotator_pace",
    "batch_encoding",
    "checkpoint_state",
    "reading_states",
    "untrained",
    "confusion_matrix",
    "context",
    "disagreement",
    "entropy_histograms",
    "evaluate",
    "given_ids",
    "label_distribution",
    "labeled_amount",
    "labeled_sentences",
    "learning_curve",
    "least_sure",
    "model_version",
    "pool_estimate",
    "prequential_curve",
    "rebuild",
    "reliability",
    "review_ranking",
    "throughput",
    "token_frame",
]
