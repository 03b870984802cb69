"""The dashboard's learning curve: the model at evenly spread checkpoints and the current one,
scored on the evaluation split and read on the pool sample unlabeled at the time.

A checkpoint's point is cached per process under its id (a checkpoint never changes); the curve
is cached, and may be served late, like the pool view (``db.repository.analysis``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from cwal import reports
from cwal.live import CheckpointMeta
from db.repository.analysis import log_frames, pool_sample_ids, pool_view, split_sentences
from db.repository.checkpoints import CheckpointInfo, current_checkpoints, get_checkpoint
from db.repository.projects import get_project
from db.repository.views import POINTS, VIEWS, feature_cache, model_key, project_key

CURVE_CHECKPOINTS = 24  # held-out points: every retrain up to 24, then evenly spread (+ newest)
COLUMNS = ["checkpoint_id", "version", "sentences", "words", "eval_f1", "eval_accuracy"]
COLUMNS.append("pool_estimate")


def curve_points(engine: Engine, project_id: int, max_lag: int = 0) -> pd.DataFrame:
    """One row per evaluated model: ``checkpoint_id`` (None: the current model), ``version``,
    ``sentences`` and ``words`` labeled, ``eval_f1`` and ``eval_accuracy`` (NaN without gold),
    ``pool_estimate`` (mean calibrated KD confidence on the pool sample unlabeled at the time). Up to
    ``CURVE_CHECKPOINTS + 1`` checkpoints, evenly spread; cached (and ``max_lag``) like the
    pool view."""
    mkey = model_key(engine, project_id)
    make = lambda: _curve_points(engine, project_id)  # noqa: E731
    return VIEWS.get_recent(("curve", mkey[:-2]), mkey[-2], ("curve", mkey), make, max_lag)


def _curve_points(engine: Engine, project_id: int) -> pd.DataFrame:
    log = log_frames(engine, project_id).labels
    metas = current_checkpoints(engine, project_id)
    if len(metas) > CURVE_CHECKPOINTS + 1:
        pick = np.linspace(0, len(metas) - 1, CURVE_CHECKPOINTS + 1).round().astype(int)
        metas = [metas[i] for i in sorted(set(pick.tolist()))]
    project = project_key(engine, project_id)
    rows = [
        POINTS.get(("cp", project, c.id), lambda c=c: _checkpoint_point(engine, c, log))
        for c in metas
    ]
    view = pool_view(engine, project_id)
    if view.state.trained:
        at = int(log["id"].max()) if len(log) else 0
        amount = reports.labeled_amount(log, [at]).iloc[0]
        scores = view.eval_scores or {}
        rows.append(
            {
                "checkpoint_id": None,
                "version": view.state.version,
                "sentences": int(amount["sentences"]),
                "words": int(amount["words"]),
                "eval_f1": scores.get("f1", np.nan),
                "eval_accuracy": scores.get("accuracy", np.nan),
                "pool_estimate": view.pool_estimate,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _checkpoint_point(engine: Engine, meta: CheckpointInfo, log: pd.DataFrame) -> dict[str, Any]:
    project_id = meta.project_id
    settings = get_project(engine, project_id).settings
    x = meta.last_annotation_id or 0
    cp = get_checkpoint(engine, meta.id)
    state = reports.checkpoint_state(settings, CheckpointMeta(meta.id, x, dict(meta.info)),
                                     cp.state or b"")  # fmt: skip
    cache = feature_cache(engine, project_id, settings.get("feature_template", "chunk"))
    amount = reports.labeled_amount(log, [x]).iloc[0]
    row: dict[str, Any] = {
        "checkpoint_id": meta.id,
        "version": state.version,
        "sentences": int(amount["sentences"]),
        "words": int(amount["words"]),
        "eval_f1": np.nan,
        "eval_accuracy": np.nan,
        "pool_estimate": meta.info.get("pool_estimate", np.nan),
    }
    evals = [(s, g) for s, g in split_sentences(engine, project_id, "eval") if g is not None]
    if evals:
        enc = cache.encode(state.model, [s for s, _ in evals])
        scores = reports.evaluate(state, enc, [g for _, g in evals]) or {}
        row["eval_f1"] = scores.get("f1", np.nan)
        row["eval_accuracy"] = scores.get("accuracy", np.nan)
    if "pool_estimate" not in meta.info:
        then = log[log["id"] <= x]
        labeled = reports.labeled_sentences(then)
        ids = [i for i in pool_sample_ids(engine, project_id) if i not in labeled]
        pool = [s for s, _ in split_sentences(engine, project_id, "pool", ids)]
        if pool and state.trained:
            enc = cache.encode(state.model, pool)
            frame = reports.token_frame(state, enc, pool, seed=meta.id)
            row["pool_estimate"] = state.expected_accuracy(
                frame["delta"].to_numpy(), frame["predicted"].to_numpy()
            )
    return row
