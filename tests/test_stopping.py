"""The stopping signal: Cohen's kappa against scikit-learn, the window rule by hand, the kappa a
simulation records against models refit independently, and the per-strategy stop table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from test_simulate import SMALL, data  # noqa: F401 - the fixture

from cwal.learners import make
from cwal.measures.stopping import cohen_kappa, stop_point
from cwal.simulate import FULL_DATA, MemorySink, SimConfig, run_cell
from cwal.simulate.engine import _refit_seed, stop_set
from cwal.simulate.stopping import format_stops, stop_table


@pytest.mark.parametrize("seed", range(5))
def test_kappa_equals_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=200)
    b = np.where(rng.random(200) < 0.7, a, rng.integers(0, 4, size=200))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([2, 2, 2], [2, 2, 2]) == 1.0  # one label only, identical
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 0, 1]) == 1.0
    assert cohen_kappa([0, 0, 0, 0], [0, 0, 0, 1]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="same tokens"):
        cohen_kappa([0, 1], [0])
    with pytest.raises(ValueError, match="no tokens"):
        cohen_kappa([], [])


def test_stop_point_needs_a_window_in_a_row() -> None:
    assert stop_point([0.9, 0.995, 0.99, 0.98, 0.99, 0.999, 1.0], 0.99, 3) == 6
    assert stop_point([0.995, 0.995], 0.99, 3) == -1
    assert stop_point([math.nan, 1.0, 1.0, 1.0], 0.99, 3) == 3
    assert stop_point([], 0.99, 3) == -1


def test_a_simulation_records_the_kappa_of_consecutive_models(data) -> None:  # noqa: F811
    config = SimConfig(strategies=("random",), mode="retrain", epochs=2, **SMALL)
    sink = MemorySink()
    run_cell(data, config, "random", 0, sink)
    curves = sink.curves()
    labeled = sink.cells["random", 0]["state"]["labeled"]
    stops = stop_set(data, 0)
    assert len(stops) == min(1000, len(data.pool)) and len(set(stops.tolist())) == len(stops)
    enc = None
    tags = []
    for n in curves["n_sentences"]:  # refit each point's model from the labeled prefix
        model = make("cw", labels=data.labels, template="chunk")
        model.fit([data.pool[i] for i in labeled[:n]], epochs=2, seed=_refit_seed(0, n))
        enc = model.encode([data.pool[i] for i in stops])
        tags.append(model.predict_ids(enc))
    assert math.isnan(curves["kappa"].iloc[0])  # nothing to compare the first model with
    want = [cohen_kappa_score(tags[i - 1], tags[i]) for i in range(1, len(tags))]
    assert curves["kappa"].iloc[1:].to_numpy() == pytest.approx(want, abs=1e-12)


def test_stop_table_gives_words_and_f1_at_the_signal() -> None:
    rows = []
    for seed, kappas in ((0, [math.nan, 0.9, 0.99, 0.995, 1.0, 1.0]), (1, [math.nan] + [0.5] * 5)):
        for i, k in enumerate(kappas):
            rows.append(("epw", seed, 100 * (i + 1), 1000 * (i + 1), 0.5 + 0.08 * i, k))
        rows.append((FULL_DATA, seed, 9000, 90000, 0.9, math.nan))
    curves = pd.DataFrame(rows, columns=["strategy", "seed", "n_sentences", "n_tokens", "f1",
                                         "kappa"])  # fmt: skip
    table = stop_table(curves)
    r = table.loc["epw"]
    # seed 0 fires at the 5th point (0.99, 0.995, 1.0 in a row): 5,000 words, F1 0.82
    assert (r["seeds"], r["signalled"]) == (2, 1)
    assert r["signal_words"] == 5000 and r["signal_f1"] == pytest.approx(0.82)
    assert r["f1_gap"] == pytest.approx(0.08)
    # 99% of 0.9 = 0.891: crossed between 5,000 (0.82) and 6,000 (0.90) words in both seeds
    assert r["reached"] == 2 and r["words_to_99"] == pytest.approx(5000 + 1000 * 0.071 / 0.08)
    assert r["last_kappa"] == pytest.approx(0.75)  # seeds' last checks: 1.0 and 0.5
    assert "epw" in format_stops(table) and "0.7500" in format_stops(table)
