"""Consolidation with ``consolidation_shards`` > 1: the off-thread retrain trains copies on shards
in worker processes and combines them; the checkpoint is that sharded retrain exactly."""

from __future__ import annotations

import pytest

from cwal.learners import SequenceLearner
from cwal.learners.shards import fit_shards
from cwal.live import LiveConfig
from cwal.live.consolidation import retrain_seed, training_set
from db.repository import get_checkpoint, list_checkpoints
from db.store import SqlStore

from .helpers import annotate, assert_same_model


def test_the_shards_setting_is_read_and_checked() -> None:
    assert LiveConfig().consolidation_shards == 1
    assert LiveConfig.from_settings({"consolidation_shards": 2}).consolidation_shards == 2
    with pytest.raises(ValueError, match="shards"):
        LiveConfig(consolidation_shards=0)


def test_sharded_consolidation_checkpoints_the_sharded_retrain(make_project) -> None:
    p = make_project(n=80, consolidation_interval=8, consolidation_shards=2)
    live = p.session()
    annotate(live, p, "ann", 10)
    live.wait_idle()
    status = live.status()
    assert status["consolidation_error"] is None and live.consolidations
    cp = list_checkpoints(p.engine, p.id)[-1]
    assert cp.info["shards"] == 2
    rows = SqlStore(p.engine).current_annotations(p.id, cp.last_annotation_id)
    seed = retrain_seed(p.id, cp.last_annotation_id)
    retrained = fit_shards(
        live.spec.fresh(), training_set(rows), epochs=cp.info["epochs"], seed=seed, shards=2
    )
    stored = SequenceLearner.from_bytes(get_checkpoint(p.engine, cp.id).state)
    assert_same_model(stored, retrained)
    assert status["model_version"] == status["labeled_sentences"] == 10
