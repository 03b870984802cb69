"""Evaluation measures: conlleval chunk F1, the confidence measures of mejer-crammer-2010 §5, and
inter-annotator agreement (``cwal.measures.agreement``: span F1, kappa, alpha).

Plain functions returning numbers, dicts or pandas DataFrames, for the dashboard and benchmarks.
"""

from cwal.measures.bootstrap import Difference, paired_difference, sentence_bootstrap
from cwal.measures.chunks import (
    Report,
    chunk_f1,
    end_of_chunk,
    format_report,
    report_table,
    split_tag,
    start_of_chunk,
)
from cwal.measures.confidence import (
    TIES,
    average_precision,
    brier_score,
    calibration_rmse,
    entropy_histogram,
    errors_in_top,
    expected_calibration_error,
    rank_order,
    reliability_table,
    token_entropy,
)

__all__ = [
    "TIES",
    "Difference",
    "Report",
    "average_precision",
    "brier_score",
    "calibration_rmse",
    "chunk_f1",
    "end_of_chunk",
    "entropy_histogram",
    "errors_in_top",
    "expected_calibration_error",
    "format_report",
    "paired_difference",
    "rank_order",
    "reliability_table",
    "report_table",
    "sentence_bootstrap",
    "split_tag",
    "start_of_chunk",
    "token_entropy",
]
