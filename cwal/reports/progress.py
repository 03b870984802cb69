"""Dashboard data from the label log and the prediction log: how much is labeled, by whom, how
fast, which labels, and how accurate the model was (prequentially) while it was being taught.

Every function takes plain DataFrames (the store's queries build them) and returns a DataFrame.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
import pandas as pd

from cwal.io import schemes
from cwal.measures.chunks import chunk_f1

LOG_COLUMNS = ("id", "sentence_id", "status", "supersedes_id", "n_tokens")
PREQUENTIAL_WINDOW = 25  # labels in the running window of the prequential curves


def labeled_amount(log: pd.DataFrame, at_ids: Iterable[int]) -> pd.DataFrame:
    """Labeled sentences and words right after each annotation id of ``at_ids``.

    ``log`` holds the annotation rows (``id``, ``sentence_id``, ``status``, ``supersedes_id``,
    ``n_tokens``). A sentence counts as labeled at id X when it has a submission with id <= X
    that no ``undone`` row with id <= X retracts. Columns: ``annotation_id``, ``sentences``,
    ``words``.
    """
    at = sorted({int(x) for x in at_ids})
    counts: list[tuple[int, int]] = []
    live: dict[int, set[int]] = {}  # sentence -> its live submission ids
    length: dict[int, int] = {}
    sentences = words = 0
    k = 0
    rows = log.sort_values("id") if len(log) else log
    for rid, sid, status, sup, n in zip(
        rows["id"], rows["sentence_id"], rows["status"], rows["supersedes_id"], rows["n_tokens"],
        strict=True,
    ):  # fmt: skip
        while k < len(at) and at[k] < rid:
            counts.append((sentences, words))
            k += 1
        sid = int(sid)
        before = bool(live.get(sid))
        if status == "submitted":
            live.setdefault(sid, set()).add(int(rid))
            length[sid] = int(n)
        elif status == "undone" and pd.notna(sup):
            live.get(sid, set()).discard(int(sup))
        after = bool(live.get(sid))
        if after != before:
            sentences += 1 if after else -1
            words += length.get(sid, 0) if after else -length.get(sid, 0)
    counts += [(sentences, words)] * (len(at) - k)
    return pd.DataFrame(
        {
            "annotation_id": np.array(at, dtype=np.int64),
            "sentences": np.array([c[0] for c in counts], dtype=np.int64),
            "words": np.array([c[1] for c in counts], dtype=np.int64),
        }
    )


def labeled_sentences(log: pd.DataFrame) -> set[int]:
    """Ids of the sentences labeled after the last row of ``log`` (see :func:`labeled_amount`)."""
    if log.empty:
        return set()
    live: dict[int, set[int]] = {}
    for row in log.sort_values("id").itertuples(index=False):
        if row.status == "submitted":
            live.setdefault(int(row.sentence_id), set()).add(int(row.id))
        elif row.status == "undone" and pd.notna(row.supersedes_id):
            live.get(int(row.sentence_id), set()).discard(int(row.supersedes_id))
    return {sid for sid, ids in live.items() if ids}


def model_version(log: pd.DataFrame) -> int:
    """The live model's version: submissions plus undos of submissions (``cwal.live.replay``)."""
    if log.empty:
        return 0
    submitted = set(log.loc[log["status"] == "submitted", "id"].astype(int))
    undone = log.loc[log["status"] == "undone", "supersedes_id"].dropna().astype(int)
    return len(submitted) + int(undone.isin(submitted).sum())


def throughput(annotation_log: pd.DataFrame, freq: str = "D") -> pd.DataFrame:
    """Submitted (not retracted) sentences and median seconds per sentence, per annotator and
    period (``freq``: a pandas period alias, ``D`` days, ``W`` weeks).

    Columns: ``period`` (str), ``annotator``, ``sentences``, ``median_seconds`` (NaN: untimed).
    """
    cols = ["period", "annotator", "sentences", "median_seconds"]
    log = annotation_log
    if log.empty:
        return pd.DataFrame(columns=cols)
    done = log[(log["status"] == "submitted") & ~log["retracted"].astype(bool)]
    if done.empty:
        return pd.DataFrame(columns=cols)
    stamps = pd.to_datetime(done["created_at"], utc=True).dt.tz_localize(None)
    period = stamps.dt.to_period(freq).astype(str)
    grouped = done.assign(period=period).groupby(["period", "annotator"], sort=True)
    out = grouped.agg(sentences=("id", "size"), median_seconds=("seconds", "median"))
    return out.reset_index()[cols]


def annotator_pace(annotation_log: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: sentences submitted (not retracted), skips, median and mean seconds per
    timed sentence. Columns: ``annotator``, ``sentences``, ``skipped``, ``median_seconds``,
    ``mean_seconds``."""
    cols = ["annotator", "sentences", "skipped", "median_seconds", "mean_seconds"]
    log = annotation_log
    if log.empty:
        return pd.DataFrame(columns=cols)
    live = log[~log["retracted"].astype(bool)]
    sub = live[live["status"] == "submitted"]
    names = sorted(set(live["annotator"]))
    out = pd.DataFrame({"annotator": names})
    out["sentences"] = out["annotator"].map(sub.groupby("annotator").size()).fillna(0)
    skips = live[live["status"] == "skipped"].groupby("annotator").size()
    out["skipped"] = out["annotator"].map(skips).fillna(0)
    secs = sub.dropna(subset=["seconds"]).groupby("annotator")["seconds"]
    out["median_seconds"] = out["annotator"].map(secs.median())
    out["mean_seconds"] = out["annotator"].map(secs.mean())
    out[["sentences", "skipped"]] = out[["sentences", "skipped"]].astype(np.int64)
    return out[cols]


def label_distribution(tag_lists: Iterable[Sequence[str]], scheme: str = "IOB2") -> pd.DataFrame:
    """Mentions and tokens per label type in labeled sentences (chunks read under ``scheme``,
    repaired when invalid); ``O`` gets a tokens count and no mentions.

    Columns: ``label``, ``mentions``, ``tokens``, ``token_share``; types by mentions, ``O`` last.
    """
    mentions: dict[str, int] = {}
    tokens: dict[str, int] = {}
    total = 0
    for tags in tag_lists:
        tags = list(tags)
        total += len(tags)
        try:
            found = schemes.spans(tags, scheme)
        except ValueError:
            found = schemes.spans(schemes.repair(tags, scheme), scheme)
        inside = 0
        for typ, start, end in found:
            mentions[typ] = mentions.get(typ, 0) + 1
            tokens[typ] = tokens.get(typ, 0) + end - start
            inside += end - start
        if len(tags) > inside:
            tokens["O"] = tokens.get("O", 0) + len(tags) - inside
    labels = sorted(mentions, key=lambda t: (-mentions[t], t))
    if "O" in tokens:
        labels.append("O")
    out = pd.DataFrame(
        {
            "label": labels,
            "mentions": [mentions.get(t, 0) for t in labels],
            "tokens": [tokens.get(t, 0) for t in labels],
        }
    )
    out["token_share"] = out["tokens"] / total if total else 0.0
    return out


def prequential_curve(tokens: pd.DataFrame, window: int = PREQUENTIAL_WINDOW) -> pd.DataFrame:
    """Accuracy the model had on each sentence just before learning it, from the first labeled
    sentence on: one point per prediction, over a running window of the last ``window``
    predictions (tokens and chunks pooled), the measured token accuracy next to the accuracy its
    calibrated confidence expected (mean confidence), and the span F1 of the window, with no
    gold data needed.

    ``tokens``: one row per logged token (``prediction_id``, ``confidence``, ``correct``, and
    ``annotation_id``, the label that answered it; with ``predicted`` and ``truth`` tags for the
    span F1). Span F1 is :func:`cwal.measures.chunk_f1` (conlleval's chunks, micro-averaged) over
    the window's sentences; NaN while the window holds no chunk, given or predicted (an all-O
    start), or without tags. Columns: ``annotation_id`` (the point's), ``predictions`` (in the
    window), ``tokens``, ``accuracy``, ``expected``, ``span_f1``.
    """
    cols = ["annotation_id", "predictions", "tokens", "accuracy", "expected", "span_f1"]
    if tokens.empty:
        return pd.DataFrame(columns=cols)
    width = max(int(window), 1)
    per = (
        tokens.groupby("prediction_id")
        .agg(
            annotation_id=("annotation_id", "max"),
            tokens=("correct", "size"),
            hits=("correct", "sum"),
            confidence=("confidence", "sum"),
        )
        .sort_index()
    )
    per = per.join(_chunk_counts(tokens))
    sums = ["tokens", "hits", "confidence", "gold_chunks", "predicted_chunks", "correct_chunks"]
    run = per[sums].rolling(width, min_periods=1).sum()
    found = run["gold_chunks"] + run["predicted_chunks"]
    f1 = 2 * run["correct_chunks"] / found.where(found > 0)
    out = pd.DataFrame(
        {
            "annotation_id": per["annotation_id"].to_numpy(),
            "predictions": np.minimum(np.arange(1, len(per) + 1), width),
            "tokens": run["tokens"].astype(int).to_numpy(),
            "accuracy": (run["hits"] / run["tokens"]).to_numpy(),
            "expected": (run["confidence"] / run["tokens"]).to_numpy(),
            "span_f1": f1.to_numpy(dtype=np.float64),
        }
    )
    return out[cols]


def _chunk_counts(tokens: pd.DataFrame) -> pd.DataFrame:
    """Per ``prediction_id``: gold, predicted and correct chunks (:func:`chunk_f1` counts); NaN
    without ``predicted`` and ``truth`` columns. The tokens of a prediction are read in
    ``position`` order when given, else in row order."""
    names = ["gold_chunks", "predicted_chunks", "correct_chunks"]
    ids = pd.unique(tokens["prediction_id"])
    if not {"predicted", "truth"} <= set(tokens.columns):
        return pd.DataFrame(np.nan, index=pd.Index(ids, name="prediction_id"), columns=names)
    rows = (
        tokens.sort_values(["prediction_id", "position"], kind="stable")
        if ("position" in tokens.columns)
        else tokens
    )
    counts = {}
    for pid, part in rows.groupby("prediction_id", sort=False):
        c = chunk_f1([part["truth"].tolist()], [part["predicted"].tolist()]).counts
        counts[pid] = [c["gold_chunks"], c["predicted_chunks"], c["correct_chunks"]]
    frame = pd.DataFrame.from_dict(counts, orient="index", columns=names, dtype=np.float64)
    frame.index.name = "prediction_id"
    return frame


def learning_curve(points: pd.DataFrame, measures: Sequence[str]) -> pd.DataFrame:
    """Curve points in long form for a chart: one row per (point, measure) with a value.

    ``points`` has ``sentences``, ``words`` and one column per measure (NaN: not measured).
    Columns: ``sentences``, ``words``, ``measure``, ``value``.
    """
    present = [m for m in measures if m in points.columns]
    if points.empty or not present:
        return pd.DataFrame(columns=["sentences", "words", "measure", "value"])
    long = points.melt(
        id_vars=["sentences", "words"], value_vars=present, var_name="measure", value_name="value"
    )
    return long.dropna(subset=["value"]).reset_index(drop=True)


def prediction_tokens(predictions: pd.DataFrame) -> pd.DataFrame:
    """The prediction log joined with the labels given, one row per token.

    ``predictions``: one row per logged prediction with ``id``, ``strategy`` (the confidence
    method), ``tags``, ``confidences``, ``truth`` and ``annotation_id`` (the store's
    ``calibration_frame``). Columns: ``prediction_id``, ``sentence_id``, ``annotation_id``,
    ``method``, ``position``, ``confidence``, ``predicted``, ``truth``, ``correct``.
    """
    cols = ["prediction_id", "sentence_id", "annotation_id", "method", "position"]
    cols += ["confidence", "predicted", "truth", "correct"]
    if predictions.empty:
        return pd.DataFrame(columns=cols)
    n = predictions["tags"].map(len).to_numpy()
    keep = n == predictions["truth"].map(len).to_numpy()  # else relabeled to another length
    rows, n = predictions[keep], n[keep]
    if (rows["confidences"].map(len).to_numpy() != n).any():
        raise ValueError("a logged prediction has not as many confidences as tags")
    predicted = np.array(list(chain.from_iterable(rows["tags"])), dtype=object)
    truth = np.array(list(chain.from_iterable(rows["truth"])), dtype=object)
    starts = np.repeat(np.cumsum(n) - n, n)
    frame = pd.DataFrame(
        {
            "prediction_id": np.repeat(rows["id"].to_numpy(), n),
            "sentence_id": np.repeat(rows["sentence_id"].to_numpy(), n),
            "annotation_id": np.repeat(rows["annotation_id"].to_numpy(), n),
            "method": np.repeat(rows["strategy"].to_numpy(), n),
            "position": np.arange(len(predicted), dtype=np.int64) - starts,
            "confidence": np.fromiter(
                chain.from_iterable(rows["confidences"]), np.float64, len(predicted)
            ),
            "predicted": predicted,
            "truth": truth,
            "correct": predicted == truth,
        }
    )
    return frame[cols]


MEASURES = {
    "eval_f1": "F1 on the evaluation split",
    "eval_accuracy": "token accuracy on the evaluation split",
    "pool_estimate": "expected accuracy on the unlabeled pool (calibrated)",
    "prequential": "prequential token accuracy (labels as they came)",
    "prequential_expected": "expected on those sentences (calibrated)",
    "prequential_f1": "prequential span F1 (labels as they came)",
}
LEARNING = ("prequential", "prequential_f1", "eval_accuracy", "eval_f1")  # the learning curve
TRUST = ("prequential", "prequential_expected", "pool_estimate")  # measured against expected


def accuracy_curves(
    points: pd.DataFrame, prequential: pd.DataFrame, amounts: pd.DataFrame
) -> pd.DataFrame:
    """Measured and expected accuracy against labeled sentences and words, in long form.

    ``points``: model points (``sentences``, ``words``, ``eval_f1``, ``eval_accuracy``,
    ``pool_estimate``); ``prequential``: :func:`prequential_curve` rows; ``amounts``:
    :func:`labeled_amount` at their annotation ids. Columns: ``sentences``, ``words``,
    ``measure`` (a :data:`MEASURES` label), ``value``.
    """
    model = points.rename(columns=MEASURES)
    preq = prequential.merge(amounts, on="annotation_id", how="left").rename(
        columns={
            "accuracy": MEASURES["prequential"],
            "expected": MEASURES["prequential_expected"],
            "span_f1": MEASURES["prequential_f1"],
        }
    )
    parts = [
        learning_curve(model, [MEASURES[m] for m in ("eval_f1", "eval_accuracy", "pool_estimate")]),
        learning_curve(
            preq, [MEASURES[m] for m in ("prequential", "prequential_expected", "prequential_f1")]
        ),  # fmt: skip
    ]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=["sentences", "words", "measure", "value"])
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["measure", "sentences"], kind="stable").reset_index(drop=True)
