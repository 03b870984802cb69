"""bench/active_learning.py's issue-25 targets judged from word costs (no training): one strategy
at <= 0.5 of Random's words with the interval's upper end <= 0.6, KD-Fixed and KD-PC <= 0.65."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import pytest

from cwal.simulate import FULL_DATA
from cwal.simulate.intervals import word_costs

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import active_learning  # noqa: E402


def curves(crossings: dict[str, list[float]]) -> pd.DataFrame:
    """Random rises to 0.8 at 2,000 words; each other strategy reaches 0.8 at its seed's
    crossing and 0.85 at 2,000."""
    rows = []
    for seed in range(3):
        rows += [("random", seed, 50, 500, 0.5), ("random", seed, 100, 2000, 0.8)]
        for name, cross in crossings.items():
            rows += [(name, seed, 50, 500, 0.5), (name, seed, 80, cross[seed], 0.8),
                     (name, seed, 100, 2000, 0.85)]  # fmt: skip
        rows.append((FULL_DATA, seed, 900, 9000, 0.9))
    return pd.DataFrame(rows, columns=["strategy", "seed", "n_sentences", "n_tokens", "f1"])


def test_targets_met_by_a_strategy_at_under_half_with_a_tight_interval() -> None:
    costs = word_costs(curves({"errors-per-word": [800, 900, 1000], "kd-pc": [1200] * 3,
                               "kd-fixed": [1250] * 3}), replicates=300)  # fmt: skip
    t = active_learning.cost_targets(costs, 3)
    assert t["best"]["strategy"] == "errors-per-word" and t["best"]["met"]
    assert abs(t["best"]["ratio"] - 0.45) < 1e-9 and t["best"]["interval"][1] <= 0.6
    assert t["kd"]["met"]  # 0.60 and 0.625 of Random's words


def test_targets_missed_when_the_interval_is_wide_or_kd_is_slow() -> None:
    costs = word_costs(curves({"errors-per-word": [500, 1000, 1500], "kd-pc": [1400] * 3,
                               "kd-fixed": [1250] * 3}), replicates=300)  # fmt: skip
    t = active_learning.cost_targets(costs, 3)
    assert t["best"]["strategy"] == "errors-per-word" and not t["best"]["met"]
    assert t["best"]["interval"][1] > 0.6  # one seed at 1,500 words: 0.75
    assert not t["kd"]["met"] and abs(t["kd"]["ratio"]["kd-pc"] - 0.7) < 1e-9


def test_strategy_params_merge_over_the_kd_flags_and_name_listed_strategies() -> None:
    args = argparse.Namespace(s=0.2, k=None, rank=None, strategies=["kd-pc", "kd-fixed", "errors-per-word"],
                              strategy_params='{"errors-per-word": {"rank": "z-delta"}, "kd-pc": {"k": 9}}')  # fmt: skip
    assert active_learning.strategy_params(args) == {
        "kd-pc": {"s": 0.2, "k": 9},
        "kd-fixed": {"s": 0.2},
        "errors-per-word": {"rank": "z-delta"},
    }
    args.strategy_params = '{"random": {"x": 1}}'
    with pytest.raises(SystemExit, match="not in --strategies"):
        active_learning.strategy_params(args)
