"""Tables as users read them: human column names (never a snake_case field), F1, accuracy,
confidence and shares in percent. The frame itself keeps its fields (CSV downloads, selections
and the code that reads a picked row use them); only the shown headers and formats change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

NAMES = {
    "sentence_id": "Sentence",
    "annotation_id": "Label",
    "median_seconds": "Median seconds",
    "mean_seconds": "Mean seconds",
    "mean_confidence": "Mean confidence",
    "rmse": "RMSE",
    "ece": "ECE",
    "brier": "Brier score",
    "p_given": "Chance of the given label",
    "f1": "F1",
    "created_at": "Created",
    "user_id": "User",
    "n_tokens": "Tokens",
    "final_f1": "Final F1",
    "final_words": "Labeled words",
    "words_to_target": "Words to 95% of full-data F1",
    "words_to_random": "Words to Random's final F1",
    "auc": "AUC (mean F1)",
}
PERCENT = frozenset(
    {"accuracy", "mean_confidence", "confidence", "f1", "precision", "recall", "share",
     "token_share", "p_given", "final_f1", "auc", "agreement"}
)  # fmt: skip


def human(name: str) -> str:
    """``median_seconds`` -> ``Median seconds``; known fields by their names in ``NAMES``."""
    if name in NAMES:
        return NAMES[name]
    text = str(name).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def column_config(
    frame: pd.DataFrame, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Streamlit column settings naming every column of ``frame`` for people; the percent
    fields as percentages. ``overrides`` (per field) keep their own widget, with the human
    label when they have none."""
    config: dict[str, Any] = {}
    for name in frame.columns:
        label = human(name)
        given = (overrides or {}).get(name)
        if given is not None:
            if isinstance(given, dict) and not given.get("label"):
                given = {**given, "label": label}
            config[name] = given
        elif name in PERCENT and pd.api.types.is_numeric_dtype(frame[name]):
            config[name] = st.column_config.NumberColumn(label, format="percent")
        else:
            config[name] = st.column_config.Column(label)
    return config


def show(frame: pd.DataFrame, overrides: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
    """``st.dataframe`` of ``frame`` with :func:`column_config` (other arguments passed on)."""
    kwargs.setdefault("hide_index", True)
    return st.dataframe(frame, column_config=column_config(frame, overrides), **kwargs)
