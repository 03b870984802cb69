"""Words-to-target ratios and their seed bootstrap on curves whose crossings are known by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cwal.simulate import FULL_DATA
from cwal.simulate.intervals import format_costs, word_costs


def frame(cross: dict[int, float]) -> pd.DataFrame:
    """Random rises 0.5 -> 0.7 -> 0.8 over 0 / 1000 / 2000 words (20 words a sentence) in every
    seed; "fast" reaches 0.8 at ``cross[seed]`` words and 0.9 at 2000 (10 words a sentence
    after the 50 initial ones); full-data F1 is 0.9."""
    rows = []
    for seed, c in cross.items():
        for x, y, n in ((500, 0.5, 50), (1000, 0.7, 75), (2000, 0.8, 125)):
            rows.append(("random", seed, n, x, y))
        for x, y in ((500, 0.5), (c, 0.8), (2000, 0.9)):
            rows.append(("fast", seed, 50 + (x - 500) / 10, x, y))
        rows.append((FULL_DATA, seed, 1000, 50_000, 0.9))
    return pd.DataFrame(rows, columns=["strategy", "seed", "n_sentences", "n_tokens", "f1"])


def test_ratio_to_randoms_words_and_its_seed_interval():
    table = word_costs(frame({0: 800, 1: 1000, 2: 1200}), replicates=500)
    fast = table.loc["fast"]
    # 0.8 is Random's final F1: fast needs (800 + 1000 + 1200) / 3 = 1000 words, Random 2000
    assert fast["words_random"] == pytest.approx(1000)
    assert fast["ratio_random"] == pytest.approx(0.5)
    # resampling 3 seeds: the mean crossing lies in [800, 1200], so the ratio in [0.4, 0.6]
    assert 0.4 - 1e-9 <= fast["ratio_random_lo"] < 0.5 < fast["ratio_random_hi"] <= 0.6 + 1e-9
    assert fast["mean_length"] == pytest.approx(10.0)
    assert table.loc["random", "mean_length"] == pytest.approx(20.0)
    # 95% of full-data F1 (0.855): fast gets there, Random never does: no ratio, no interval
    assert fast["reached_95"] == 3 and table.loc["random", "reached_95"] == 0
    assert fast["words_95"] == pytest.approx(1000 + 0.55 * 1000, rel=0.2)
    assert math.isnan(fast["ratio_95"]) and math.isnan(fast["ratio_95_lo"])
    text = format_costs(table)
    assert "fast" in text and "0.50 [" in text


def test_identical_seeds_give_a_point_interval_and_a_missing_seed_an_open_one():
    same = word_costs(frame({0: 1000, 1: 1000, 2: 1000}), replicates=200).loc["fast"]
    assert same["ratio_random_lo"] == same["ratio_random_hi"] == pytest.approx(0.5)
    curves = frame({0: 1000, 1: 1000, 2: 1000})
    late = (curves["strategy"] == "fast") & (curves["seed"] == 2)
    curves.loc[late, "f1"] = [0.5, 0.6, 0.7]  # seed 2 never reaches 0.8
    fast = word_costs(curves, replicates=400).loc["fast"]
    assert math.isnan(fast["ratio_random"]) and fast["reached_random"] == 2
    assert fast["ratio_random_lo"] == pytest.approx(0.5) and math.isinf(fast["ratio_random_hi"])
