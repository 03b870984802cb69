"""The live service's parts against independent truth: the feature cache, row snapshots,
replay bookkeeping, pending submissions, candidate sampling and the settings."""

from __future__ import annotations

import numpy as np
import pytest

from cwal.learners import make
from cwal.live import LiveConfig, kd
from cwal.live.consolidation import PrequentialRecord
from cwal.live.pending import Pending
from cwal.live.pool import PoolCache
from cwal.live.protocol import CheckpointMeta, LogRow, PoolSentence
from cwal.live.ranking import rank, sample_candidates, unlabeled_ids
from cwal.live.replay import valid_base

from .conftest import synthetic


def _trained(n: int = 40):
    data = synthetic(n, seed=3)
    model = make("arow", template="ner")
    for s in data:
        model.learn_one(s.tokens, s.tags)
    return model


def test_pool_cache_encodes_like_the_model_as_its_index_grows() -> None:
    model = _trained()
    pool = [PoolSentence(i, s.tokens, s.columns) for i, s in enumerate(synthetic(60, seed=9))]
    cache = PoolCache("ner")
    cache.add(pool[:30])
    cache.sync(model.features_)
    for s in synthetic(10, seed=11) + [type(synthetic(1)[0])(["Zorro", "Xu"], ["B-PER", "I-PER"])]:
        model.learn_one(s.tokens, s.tags)  # new features arrive online
    cache.add(pool[30:])
    ids = [i for i in range(60) if i % 3]
    cache.sync(model.features_)
    got = cache.encode(ids)
    want = model.encode([pool[i] for i in ids])
    for name in ("feat_ids", "tok_offsets", "sent_offsets"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


def test_row_snapshot_equals_the_full_averaged_model() -> None:
    model = _trained()
    ids = np.array([0, 5, 17, len(model.features_) - 1])
    W, A, SW, SA = kd.take_rows(model, ids)
    fullW, fullA = model.averaged()
    fullSW, fullSA = model.covariance()
    assert model.UW_.dtype == np.float32 and W.dtype == np.float64  # float64 from float32 sums
    np.testing.assert_allclose(W, fullW[ids], rtol=0, atol=1e-15)
    np.testing.assert_allclose(A, fullA, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(SW, fullSW[ids])
    np.testing.assert_array_equal(SA, fullSA)
    # and confidence from a snapshot is confidence from the model itself (KD draws aside: Delta)
    sents = synthetic(5, seed=4)
    rows = kd.rows_for(model, model.encode(sents))
    conf = kd.confidence(rows, "kd-pc", 1e-9, k=5, seed=1, rank="votes")
    flat = [model.labels_[i] for i in conf.labels]
    assert flat == [t for p in model.predict(sents) for t in p]
    assert np.all(conf.confidence == 1.0)  # a vanishing scale: every draw agrees


def test_prediction_of_a_bioes_trained_model_is_in_the_training_scheme() -> None:
    from cwal.io import schemes
    from cwal.live.scoring import prediction

    data = synthetic(40, seed=3)
    model = make("arow", template="ner", encoding="bioes")
    for s in data:
        model.learn_one(s.tokens, s.tags)
    assert any(t.startswith(("S-", "E-")) for t in model.labels_)  # BIOES inside
    sents = synthetic(8, seed=5)
    for s, want in zip(sents, model.predict(sents), strict=True):
        tags, conf = prediction(kd.rows_for(model, model.encode([s])))
        assert tags == want and len(conf) == len(s.tokens)
        assert schemes.is_valid(tags, "IOB2") and not any(t[:2] in ("S-", "E-") for t in tags)


def test_valid_base_skips_checkpoints_an_undo_invalidated() -> None:
    cps = [CheckpointMeta(1, 10, {}), CheckpointMeta(2, 20, {}), CheckpointMeta(3, 30, {})]
    assert valid_base(cps, []).id == 3
    assert valid_base(cps, [(25, 31)]).id == 2  # 25 undone after checkpoint 3 covered it
    assert valid_base(cps, [(25, 28)]).id == 3  # undone before checkpoint 3 was written
    assert valid_base(cps, [(5, 40)]) is None  # every checkpoint covers label 5
    assert valid_base([], []) is None


def test_a_submission_is_pending_until_a_catch_up_applies_it() -> None:
    watermark = [10]
    pending = Pending(lambda: watermark[0])

    def row(i: int, sentence: int, user: int) -> LogRow:
        return LogRow(i, sentence, user, "submitted", ["O"], None)

    pending.begin(5, 1)  # being stored: its row, whatever its id, is this process's
    assert pending.is_pending(row(11, 5, 1)) and not pending.is_pending(row(11, 5, 2))
    pending.end(5, 1, 11)  # stored as 11 > watermark 10: pending by id from now on
    assert pending.is_pending(row(11, 5, 1)) and pending.behind(1) and not pending.behind(2)
    pending.begin(6, 1)
    pending.end(6, 1, None)  # a failed submit stores nothing and leaves nothing behind
    assert not pending.is_pending(row(12, 6, 1))
    watermark[0] = 11
    pending.applied()
    assert not pending.is_pending(row(11, 5, 1)) and not pending.behind(1)
    pending.begin(7, 2)
    pending.end(7, 2, 9)  # already applied when its submit returned: never pending by id
    assert not pending.is_pending(row(9, 7, 2)) and not pending.behind(2)


def test_candidate_sample_is_deterministic_and_unlabeled() -> None:
    pool = np.arange(100, 400, dtype=np.int64)
    labeled = set(range(100, 300, 2))
    free = unlabeled_ids(pool, labeled)
    a = sample_candidates(free, 50, [1, 7])
    b = sample_candidates(free, 50, [1, 7])
    c = sample_candidates(free, 50, [1, 8])
    assert a.tolist() == b.tolist() != c.tolist()
    assert len(set(a.tolist())) == 50 and not set(a.tolist()) & labeled
    everything = sample_candidates(free, 10_000, [1, 7])
    assert sorted(everything.tolist()) == sorted(set(pool.tolist()) - labeled)


def test_rank_orders_by_score_then_length_then_draw_order() -> None:
    ids = np.array([5, 3, 9, 1])  # the candidates in draw order
    assert rank(ids, np.array([0.5, 0.2, 0.2, 0.9]), np.array([3, 4, 2, 1])) == [9, 3, 5, 1]
    assert rank(ids, np.zeros(4), np.array([2, 2, 2, 2])) == [5, 3, 9, 1]
    assert rank(ids, np.array([0.1, 0.3, 0.1, 0.1]), np.array([2, 1, 2, 2])) == [5, 9, 1, 3]


def test_s_is_tuned_to_the_calibrated_scale() -> None:
    record = PrequentialRecord()
    rng = np.random.default_rng(0)
    n = len(kd.S_GRID)
    good = 7  # at this scale the confidence equals the accuracy; elsewhere it is off
    for _ in range(40):
        truth = rng.uniform(0.05, 0.95, 25)
        correct = rng.uniform(size=25) < truth
        grid = np.clip(truth[None, :] + (np.arange(n)[:, None] - good) * 0.08, 0, 1)
        record.add(grid, grid[::-1].copy(), correct)
    s_pc, s_fixed = record.tune()
    assert s_pc == kd.S_GRID[good] and s_fixed == kd.S_GRID[n - 1 - good]
    assert PrequentialRecord().tune() == (None, None)


def test_settings_choose_the_strategy_and_knobs() -> None:
    cfg = LiveConfig.from_settings(
        {
            "strategy": "kd-fixed",
            "consolidation_interval": 7,
            "lease_ttl_seconds": 60,
            "strategy_params": {"k": 20, "candidates": 300, "seed_strategy": "shortest"},
        }  # fmt: skip
    )
    assert (cfg.strategy, cfg.k, cfg.candidates, cfg.seed_strategy) == (
        "kd-fixed",
        20,
        300,
        "shortest",
    )
    assert (cfg.consolidation_interval, cfg.lease_ttl) == (7, 60.0)
    assert LiveConfig.from_settings({"strategy": "least-confidence"}).strategy == "kd-pc"
    assert LiveConfig.from_settings({"strategy": "min-conf-margin"}).strategy == "min-conf-margin"
    with pytest.raises(ValueError, match="not served live"):
        LiveConfig.from_settings({"strategy": "no-such-strategy"})


def test_generations_are_the_first_entries_each_consolidation_predicted() -> None:
    """Consolidations trained on 50, 100 and 150 labels; the live model was built on the second:
    entries 49 and 99 (entry j was predicted by a model that had learned j + 1 labels) start its
    two generations; the third (a later checkpoint) is not its ancestor, a checkpoint without a
    label count (an import) is no generation."""
    from cwal.live.recorder import generations

    points = [CheckpointMeta(1, 10, {"n_train": 50}), CheckpointMeta(2, 20, {"n_train": 100}),
              CheckpointMeta(3, 30, {"n_train": 150}), CheckpointMeta(4, 5, {})]  # fmt: skip
    assert generations(points, points[1]) == (49, 99)
    assert generations(points, points[0]) == (49,)
    assert generations(points[3:], points[3]) == (0,)  # no count at all: from the start
