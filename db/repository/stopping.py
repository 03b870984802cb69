"""The dashboard's stopping signal: do successive consolidated models still change their tags?

The stop set is the project's fixed pool sample (``analysis.pool_sample_ids``, the sentences the
pool estimate is read on, labeled or not: Bloodgood & Vijay-Shanker fix it once). Each of the last
``WINDOW + 1`` checkpoints tags it (cached per checkpoint: a checkpoint never changes) and
``cwal.measures.stopping`` compares consecutive taggings with Cohen's kappa.
"""

from __future__ import annotations

import hashlib

import numpy as np
from sqlalchemy import Engine

from cwal import reports
from cwal.live import CheckpointMeta
from cwal.measures.stopping import WINDOW, Signal, cohen_kappa, stabilizing
from db.repository.analysis import pool_sample_ids, split_sentences
from db.repository.checkpoints import CheckpointInfo, current_checkpoints, get_checkpoint
from db.repository.projects import get_project
from db.repository.views import POINTS, feature_cache, project_key


def stopping_signal(engine: Engine, project_id: int) -> Signal:
    """Kappas between the tags of the last ``WINDOW + 1`` checkpoints on the stop set, oldest
    first, and whether they all reach the threshold (``cwal.measures.stopping.Signal``)."""
    metas = current_checkpoints(engine, project_id)[-(WINDOW + 1) :]
    ids = pool_sample_ids(engine, project_id)
    if len(metas) < 2 or not ids:
        return stabilizing([], [m.info.get("version", m.id) for m in metas])
    stop_key = hashlib.sha1(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest()
    key = project_key(engine, project_id)
    tags = [
        POINTS.get(("stop-tags", key, stop_key, m.id), lambda m=m: _tags(engine, m, ids))
        for m in metas
    ]
    versions = [int(m.info.get("version", m.id)) for m in metas]
    return stabilizing([cohen_kappa(a, b) for a, b in zip(tags, tags[1:], strict=False)], versions)


def _tags(engine: Engine, meta: CheckpointInfo, ids: list[int]) -> np.ndarray:
    """A checkpoint model's labels (names: two models may number them differently) on every
    token of the stop set."""
    settings = get_project(engine, meta.project_id).settings
    cp = get_checkpoint(engine, meta.id)
    cpm = CheckpointMeta(meta.id, meta.last_annotation_id or 0, dict(meta.info))
    state = reports.checkpoint_state(settings, cpm, cp.state or b"")
    pool = [s for s, _ in split_sentences(engine, meta.project_id, "pool", ids)]
    cache = feature_cache(engine, meta.project_id, settings.get("feature_template", "chunk"))
    ids_of = state.model.predict_ids(cache.encode(state.model, pool))
    return np.asarray(state.model.labels_, dtype=object)[ids_of].astype(str)
