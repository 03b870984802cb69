"""The sentence bootstrap (cwal.measures.bootstrap) against hand-derived outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from cwal.measures import calibration_rmse, paired_difference, sentence_bootstrap


def test_resamples_whole_sentences() -> None:
    # sentence 1 = tokens (1, 1), sentence 2 = token (0): a resample of two sentences holds
    # 1+1 twice (mean 1), 0 twice (0) or one of each (2/3); a token bootstrap could give 1/3
    values = sentence_bootstrap(np.mean, [2, 1], np.array([1.0, 1.0, 0.0]), replicates=400)
    assert set(np.round(values, 9)) == {1.0, round(2 / 3, 9), 0.0}
    # each sentence is drawn with probability 1/2: one of each in about half the resamples
    assert 0.4 < np.mean(np.isclose(values, 2 / 3)) < 0.6


def test_seeded_and_checked() -> None:
    x = np.arange(10.0)
    a = sentence_bootstrap(np.mean, [3, 3, 4], x, replicates=20, seed=5)
    assert np.array_equal(a, sentence_bootstrap(np.mean, [3, 3, 4], x, replicates=20, seed=5))
    assert not np.array_equal(a, sentence_bootstrap(np.mean, [3, 3, 4], x, replicates=20, seed=6))
    with pytest.raises(ValueError, match="array 0 has 10 values for 9 tokens"):
        sentence_bootstrap(np.mean, [3, 3, 3], x)
    with pytest.raises(ValueError, match="lengths"):
        sentence_bootstrap(np.mean, [], x)


def test_paired_difference_of_a_constant_shift_has_no_spread() -> None:
    def mean_conf(conf: np.ndarray, ok: np.ndarray) -> float:
        return float(conf.mean())

    rng = np.random.default_rng(0)
    b = rng.random(50)
    d = paired_difference(mean_conf, [5] * 10, b + 0.1, b, np.ones(50, bool), replicates=200)
    assert d.value == pytest.approx(0.1) and d.low == pytest.approx(0.1)
    assert d.high == pytest.approx(0.1) and d.significant


def test_paired_difference_of_calibration_rmse() -> None:
    # 400 one-token sentences, 300 correct: confidence 0.75 everywhere lands in the bin of
    # centre 0.775, 1.0 everywhere in the bin of centre 0.975. At a resample's accuracy c the
    # difference is |c - 0.775| - (0.975 - c): exactly -0.2 while c <= 0.775, 2c - 1.75 above
    ok = np.array([True] * 300 + [False] * 100)
    good, bad = np.full(400, 0.75), np.ones(400)
    d = paired_difference(calibration_rmse, [1] * 400, good, bad, ok, replicates=300)
    assert d.value == pytest.approx(-0.2) and d.low == pytest.approx(-0.2)
    # c stays within a few standard deviations (0.022) of 0.75
    assert -0.2 < d.high < 2 * 0.85 - 1.75 < 0 and d.significant
    same = paired_difference(calibration_rmse, [1] * 400, good, good, ok, replicates=50)
    assert (same.value, same.low, same.high, same.significant) == (0.0, 0.0, 0.0, False)


def test_paired_difference_with_each_methods_own_labels() -> None:
    # the same confidences; method a's model is right on 30 of 40 tokens, b's on all of them:
    # at confidence 0.75 (bin centre 0.775) a is off by 0.025 and b by 0.225
    conf = np.full(40, 0.75)
    ok_a, ok_b = np.array([True] * 30 + [False] * 10), np.ones(40, bool)
    d = paired_difference(calibration_rmse, [4] * 10, conf, conf, ok_a, ok_b, replicates=50)
    assert d.value == pytest.approx(0.025 - 0.225)
