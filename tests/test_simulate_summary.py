"""Comparison measures on hand-made curves, and the JSON-folder result sink."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from cwal.simulate import JsonDirSink, Point, band, progress, recommend, summarize, words_to_reach
from cwal.simulate.summary import format_table, mean_over, per_seed


def curve(strategy: str, seed: int, words: list[int], f1: list[float]) -> list[dict]:
    return [
        {
            "strategy": strategy,
            "seed": seed,
            "step": i,
            "n_sentences": 50 + 100 * i,
            "n_tokens": w,
            "f1": y,
        }  # fmt: skip
        for i, (w, y) in enumerate(zip(words, f1, strict=True))
    ]


def test_words_to_reach_interpolates_the_first_crossing() -> None:
    x, y = [1000, 2000, 4000, 5000], [0.5, 0.7, 0.9, 0.8]
    assert words_to_reach(x, y, 0.8) == pytest.approx(3000)  # halfway from 0.7 to 0.9
    assert words_to_reach(x, y, 0.4) == 1000
    assert words_to_reach(x, y, 0.9) == 4000
    assert math.isnan(words_to_reach(x, y, 0.95))


def test_mean_over_is_the_normalised_area() -> None:
    assert mean_over([0, 10], [0.5, 0.5], 0, 10) == pytest.approx(0.5)
    assert mean_over([0, 10], [0.0, 1.0], 0, 10) == pytest.approx(0.5)
    assert mean_over([0, 10], [0.0, 1.0], 5, 10) == pytest.approx(0.75)
    assert math.isnan(mean_over([2, 10], [0.0, 1.0], 0, 10))  # the curve does not span it


@pytest.fixture
def curves() -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        rows += curve("random", seed, [1000, 3000, 5000], [0.60, 0.70, 0.80])
        rows += curve("kd-pc", seed, [1000, 2000, 6000], [0.60, 0.80, 0.90])
        rows += curve("min-margin", seed, [1000, 4000, 8000], [0.60, 0.70, 0.85 + 0.01 * seed])
        rows.append({"strategy": "full-data", "seed": seed, "step": 0, "n_sentences": 9000,
                     "n_tokens": 200_000, "f1": 0.9})  # fmt: skip
    return pd.DataFrame(rows)


def test_summary_table(curves: pd.DataFrame) -> None:
    table = summarize(curves, reach=0.95, beyond=3000)
    assert set(table.index) == {"random", "kd-pc", "min-margin"}
    kd, mm, rnd = table.loc["kd-pc"], table.loc["min-margin"], table.loc["random"]
    assert kd["final_f1"] == pytest.approx(0.9) and kd["seeds"] == 2
    assert mm["final_f1"] == pytest.approx(0.855)
    assert mm["final_f1_std"] == pytest.approx(math.sqrt(0.5e-4), rel=1e-6)
    # 95% of the full-data 0.9 is 0.855: kd-pc crosses it 1/2 of the way from 2000 to 6000
    assert kd["words_to_target"] == pytest.approx(2000 + 4000 * 0.055 / 0.1)
    assert kd["reached"] == 2
    assert math.isnan(mm["words_to_target"]) and mm["reached"] == 1  # only seed 1 gets there
    assert math.isnan(rnd["words_to_target"]) and rnd["reached"] == 0
    # Random ends at 0.80: kd-pc gets there at 2000 words, min-margin at 4000 + 4000 * 0.1/0.15
    assert kd["words_to_random"] == pytest.approx(2000)
    assert rnd["words_to_random"] == pytest.approx(5000)
    per_seed = [4000 + 4000 * 0.10 / 0.15, 4000 + 4000 * 0.10 / 0.16]
    assert mm["words_to_random"] == pytest.approx(sum(per_seed) / 2)
    # the area is taken over 1000..5000 words, the range every run covers
    assert rnd["auc"] == pytest.approx(0.70)
    assert kd["auc"] == pytest.approx(
        (0.5 * (0.6 + 0.8) * 1000 + 0.5 * (0.8 + 0.875) * 3000) / 4000
    )
    assert rnd["f1_beyond"] == pytest.approx(0.75)  # mean over 3000..5000
    assert table.index[0] == "kd-pc"  # sorted by area
    assert recommend(table)[0] == "kd-pc"
    text = format_table(table)
    assert "kd-pc" in text.splitlines()[2] and "90.00" in text


def test_per_seed_rows_are_what_the_summary_averages(curves: pd.DataFrame) -> None:
    rows = per_seed(curves, reach=0.95, beyond=3000).set_index(["strategy", "seed"])
    assert len(rows) == 6  # three strategies x two seeds, no full-data row
    mm0, mm1 = rows.loc[("min-margin", 0)], rows.loc[("min-margin", 1)]
    assert mm0["words_to_random"] == pytest.approx(4000 + 4000 * 0.10 / 0.15)
    assert mm1["words_to_random"] == pytest.approx(4000 + 4000 * 0.10 / 0.16)
    assert math.isnan(mm0["words_to_target"]) and mm1["words_to_target"] == pytest.approx(
        4000 + 4000 * 0.155 / 0.16
    )
    assert mm1["final_f1"] == pytest.approx(0.86) and mm1["final_words"] == 8000
    table = summarize(curves, reach=0.95, beyond=3000)
    for name, group in rows.groupby(level="strategy"):
        assert table.loc[name, "auc"] == pytest.approx(group["auc"].mean())
    assert per_seed(curves[curves["strategy"] == "full-data"]).empty


def test_recommend_falls_back_to_the_area(curves: pd.DataFrame) -> None:
    table = summarize(curves, reach=1.01)
    assert table["words_to_target"].isna().all()
    pick, why = recommend(table)
    assert pick == "kd-pc" and "area" in why


def test_band_spans_the_seeds(curves: pd.DataFrame) -> None:
    b = band(curves, x="n_tokens", points=5)
    mm = b[b["strategy"] == "min-margin"]
    last = mm.iloc[-1]
    assert (last["x"], last["lo"], last["hi"], last["f1"]) == (
        8000,
        0.85,
        0.86,
        pytest.approx(0.855),
    )
    assert set(b["strategy"]) == {"random", "kd-pc", "min-margin"}  # no full-data band
    by_sentences = band(curves, x="n_sentences")
    assert by_sentences["x"].max() == 250


def test_progress_counts_finished_and_partial_cells(curves: pd.DataFrame) -> None:
    statuses = {("random", 0): "done", ("kd-pc", 0): "running", ("full-data", 0): "running"}
    partial = curves[(curves["strategy"] == "kd-pc") & (curves["seed"] == 0)].iloc[:2]
    got = progress(pd.concat([partial]), statuses, initial=50, budget=250)
    assert got == pytest.approx((1 + 0.5 + 0) / 3)


def test_json_sink_round_trip(tmp_path: Path) -> None:
    sink = JsonDirSink(tmp_path / "out")
    assert sink.saved("kd-pc", 0) is None
    sink.record(
        "kd-pc", 0, Point(0, 50, 1200, {"f1": 0.5}), {"labeled": [3, 1], "rng": {"s": 2**100}}
    )
    sink.record("kd-pc", 0, Point(5, 100, 2500, {"f1": 0.6}), {"labeled": [3, 1, 7], "rng": {}})
    with pytest.raises(ValueError, match="already has a point"):
        sink.record("kd-pc", 0, Point(5, 100, 2500, {"f1": 0.6}), {})
    again = JsonDirSink(tmp_path / "out")  # a new process sees the same state
    saved = again.saved("kd-pc", 0)
    assert saved.status == "running" and saved.state["labeled"] == [3, 1, 7]
    again.finish("kd-pc", 0, "done")
    assert JsonDirSink(tmp_path / "out").saved("kd-pc", 0).status == "done"
    c = again.curves()
    assert c[["step", "n_sentences", "n_tokens", "f1"]].values.tolist() == [
        [0, 50, 1200, 0.5],
        [5, 100, 2500, 0.6],
    ]
    assert not list((tmp_path / "out").glob(".*tmp"))
    again.write_experiment({"config": {"budget": 10}})
    again.write_experiment({"config": {"budget": 10}})
    with pytest.raises(ValueError, match="another experiment"):
        again.write_experiment({"config": {"budget": 20}})


def test_recommend_prefers_the_area_among_strategies_reaching_the_target() -> None:
    table = pd.DataFrame(
        {"words_to_target": [2000.0, 3000.0, math.nan], "auc": [0.80, 0.85, 0.90]},
        index=["early", "steady", "never"],
    )
    pick, why = recommend(table)
    assert pick == "steady" and "3,000" in why
