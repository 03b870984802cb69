"""The isotonic calibration map: pool-adjacent-violators against scikit-learn's isotonic
regression, hand-computed maps, JSON round trips, and the live record's maps per scale."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from cwal.confidence.calibration import CalibrationMap, isotonic
from cwal.live.consolidation import PrequentialRecord
from cwal.live.kd import S_GRID


@pytest.mark.parametrize("seed", range(5))
def test_isotonic_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=40).cumsum() * rng.choice([-1, 1])
    weights = rng.uniform(0.1, 5.0, size=40)
    want = IsotonicRegression().fit_transform(np.arange(40), values, sample_weight=weights)
    assert np.allclose(isotonic(values, weights), want)


def test_map_of_a_hand_computed_example():
    """Confidence 0.5: 1 of 2 right; 0.8: 0 of 2 (a violation, pooled with 0.5: 1 of 4);
    1.0: 5 of 6."""
    conf = np.array([0.5, 0.5, 0.8, 0.8, 1, 1, 1, 1, 1, 1])
    ok = np.array([1, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    cal = CalibrationMap.fit(conf, ok)
    assert cal.x == (0.5, 0.8, 1.0)
    assert np.allclose(cal.y, [0.25, 0.25, 5 / 6])
    assert np.allclose(
        cal(np.array([0.0, 0.5, 0.9, 1.0])), [0.25, 0.25, 0.25 + 0.5 * (5 / 6 - 0.25), 5 / 6]
    )
    assert cal.tokens == 10
    # the mean mapped confidence of the fitted tokens is their accuracy
    assert np.isclose(cal(conf).mean(), ok.mean())


def test_map_keeps_the_order_and_round_trips_through_json():
    rng = np.random.default_rng(3)
    conf = rng.integers(0, 51, size=2000) / 50
    ok = rng.random(2000) < conf**2
    cal = CalibrationMap.fit(conf, ok)
    grid = np.linspace(0, 1, 101)
    assert np.all(np.diff(cal(grid)) >= 0)
    back = CalibrationMap.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back == cal


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {},
        {"x": [0.5, 0.4], "y": [0.1, 0.2]},
        {"x": [0.1, 0.2], "y": [0.5, 0.4]},
        {"x": [0.1], "y": [0.5, 0.6]},
        {"x": "ab", "y": "cd"},
    ],  # fmt: skip
)
def test_a_missing_or_malformed_map_reads_as_none(bad):
    assert CalibrationMap.from_dict(bad) is None


def test_fit_refuses_bad_input():
    with pytest.raises(ValueError):
        CalibrationMap.fit(np.array([]), np.array([]))
    with pytest.raises(ValueError):
        CalibrationMap.fit(np.array([0.5, np.nan]), np.array([1, 0]))


def test_the_live_record_maps_each_method_at_its_scale():
    record = PrequentialRecord()
    assert record.calibration(S_GRID[2], S_GRID[3]) == {}
    n = len(S_GRID)
    correct = np.array([True, False, True, True])
    grid_pc = np.tile(np.linspace(0.1, 1.0, n)[:, None], (1, 4))
    grid_pc[4] = [1.0, 0.2, 0.6, 0.6]  # the scale chosen for KD-PC below
    grid_fixed = np.full((n, 4), 0.5)
    record.add(grid_pc, grid_fixed, correct)
    maps = record.calibration(S_GRID[4], S_GRID[1])
    pc = CalibrationMap.from_dict(maps["calibration_pc"])
    assert pc.x == (0.2, 0.6, 1.0) and np.allclose(pc.y, [0.0, 1.0, 1.0])
    fixed = CalibrationMap.from_dict(maps["calibration_fixed"])
    assert fixed.x == (0.5,) and np.allclose(fixed.y, [0.75])
    assert "calibration_pc" not in record.calibration(0.123, S_GRID[1])  # off the grid
