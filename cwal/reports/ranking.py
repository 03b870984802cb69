"""Token rankings for leads: the pool tokens the model is least sure of, and the labeled tokens
whose human label the model disputes most (the paper's error retrieval applied to human labels:
rank by ascending confidence in the label, so likely mistakes come first)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

CONTEXT = 4  # tokens shown either side of the ranked one


def context(tokens: Sequence[str], position: int, width: int = CONTEXT) -> str:
    """A few tokens around ``position`` with the token itself in brackets (plain text)."""
    lo, hi = max(position - width, 0), min(position + width + 1, len(tokens))
    words = [f"[{t}]" if i == position else t for i, t in enumerate(tokens[lo:hi], lo)]
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(tokens) else "")


def _with_context(frame: pd.DataFrame, tokens: Mapping[int, Sequence[str]] | None) -> pd.DataFrame:
    if tokens is None or frame.empty:
        return frame.assign(context=pd.Series(dtype=str))
    ctx = [
        context(tokens[s], p) for s, p in zip(frame["sentence_id"], frame["position"], strict=True)
    ]
    return frame.assign(context=ctx)


def least_sure(
    pool: pd.DataFrame, n: int = 50, tokens: Mapping[int, Sequence[str]] | None = None
) -> pd.DataFrame:
    """The ``n`` tokens the model is least sure of (``key`` ascending: confidence, then Delta;
    ties to the lower sentence id and position). ``pool``: ``cwal.reports.token_frame`` rows.

    Columns: ``rank``, ``sentence_id``, ``position``, ``token``, ``predicted``, ``confidence``,
    ``entropy``, ``margin`` and, given the sentences' ``tokens``, ``context``.
    """
    cols = ["rank", "sentence_id", "position", "token", "predicted", "confidence", "entropy"]
    cols.append("margin")
    if pool.empty:
        return pd.DataFrame(columns=cols + (["context"] if tokens is not None else []))
    top = pool.sort_values(["key", "sentence_id", "position"], kind="stable").head(int(n))
    top = top.assign(rank=range(1, len(top) + 1))[cols].reset_index(drop=True)
    return _with_context(top, tokens)


def review_ranking(
    labeled: pd.DataFrame,
    *,
    annotators: Mapping[int, str] | None = None,
    annotator: str | None = None,
    label: str | None = None,
    n: int = 100,
    tokens: Mapping[int, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Labeled tokens the current model disputes, most disputed first.

    ``labeled``: ``token_frame`` rows with the given labels (``given``, ``p_given``, ``gap``).
    Only tokens with ``gap > 0`` (the model's best labeling differs there) are ranked: by
    ``p_given`` ascending (the calibrated chance the model gives the human label), then ``gap``
    descending (how far in score the model prefers its own labeling). ``annotators`` maps
    sentence id to the annotator of its current label; ``annotator`` and ``label`` (given or
    predicted) filter. Columns: ``rank``, ``sentence_id``, ``position``, ``token``, ``given``,
    ``predicted``, ``p_given``, ``gap``, ``annotator`` and, given ``tokens``, ``context``.
    """
    cols = ["rank", "sentence_id", "position", "token", "given", "predicted", "p_given", "gap"]
    cols.append("annotator")
    extra = ["context"] if tokens is not None else []
    if labeled.empty:
        return pd.DataFrame(columns=cols + extra)
    names = annotators or {}
    rows = labeled.assign(annotator=[names.get(int(s), "") for s in labeled["sentence_id"]])
    rows = rows[rows["gap"] > 0]
    if annotator is not None:
        rows = rows[rows["annotator"] == annotator]
    if label is not None:
        rows = rows[(rows["given"] == label) | (rows["predicted"] == label)]
    rows = rows.sort_values(
        ["p_given", "gap", "sentence_id", "position"],
        ascending=[True, False, True, True],
        kind="stable",
    ).head(int(n))
    rows = rows.assign(rank=range(1, len(rows) + 1))[cols].reset_index(drop=True)
    return _with_context(rows, tokens)
