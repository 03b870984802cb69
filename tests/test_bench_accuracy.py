"""bench/accuracy.py's seed and fold options: the per-seed summary, the epoch curves averaged
over seeds, and the first-fold dev split (the helpers, without training anything)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import accuracy  # noqa: E402


def run(runner: str, seed: int, f1: list[float], task: str = "ned") -> dict:
    return {
        "task": task,
        "runner": runner,
        "seed": seed,
        "f1": f1,
        "epoch_seconds": [1.0] * len(f1),
    }


def test_over_seeds_reports_the_spread_and_the_paired_difference_to_arow() -> None:
    rows = [
        run("arow", 0, [0.70, 0.80]),
        run("arow", 1, [0.70, 0.82]),
        run("arow", 2, [0.70, 0.81]),
        run("c-spv", 0, [0.60, 0.79]),
        run("c-spv", 1, [0.60, 0.80]),
        run("c-spv", 2, [0.60, 0.78]),
        {"task": "ned", "runner": "crfsuite", "f1": [0.9]},  # order-free: not a seeded row
    ]
    lines = {r["runner"]: r for r in accuracy.over_seeds(rows)}
    assert set(lines) == {"arow", "c-spv"}
    arow, cspv = lines["arow"], lines["c-spv"]
    assert (arow["n"], arow["min"], arow["max"]) == (3, 0.80, 0.82)
    assert arow["mean"] == pytest.approx(0.81) and arow["median"] == 0.81
    assert arow["sd"] == pytest.approx(statistics.stdev([0.80, 0.82, 0.81]))
    assert "d_ref" not in arow
    # paired by seed: -0.01, -0.02, -0.03
    assert cspv["d_ref"] == pytest.approx(-0.02)
    assert (cspv["d_min"], cspv["d_max"]) == (pytest.approx(-0.03), pytest.approx(-0.01))


def test_over_seeds_keeps_tasks_apart_and_a_single_seed_has_no_spread() -> None:
    rows = [run("arow", 0, [0.5], "np"), run("arow", 0, [0.9], "esp"), run("pa", 0, [0.4], "np")]
    lines = {(r["task"], r["runner"]): r for r in accuracy.over_seeds(rows)}
    assert lines[("np", "arow")]["mean"] == 0.5 and lines[("esp", "arow")]["mean"] == 0.9
    assert lines[("np", "arow")]["sd"] == 0.0
    assert lines[("np", "pa")]["d_ref"] == pytest.approx(-0.1)


def test_mean_curves_average_each_epoch_over_the_seeds() -> None:
    rows = [run("arow", 0, [0.6, 0.8]), run("arow", 1, [0.7, 0.9])]
    (line,) = accuracy.mean_curves(rows)
    assert line["ep1"] == pytest.approx(0.65) and line["ep2"] == pytest.approx(0.85)


def test_the_first_fold_holds_out_the_start_and_the_last_fold_the_end(monkeypatch) -> None:
    corpus = list(range(95))
    monkeypatch.setattr(accuracy.corpora, "load", lambda task, part, data_dir=None: corpus)
    train, held = accuracy.splits("ned", True, None, None, "last")
    assert held == corpus[-10:] and train == corpus[:-10]
    train, held = accuracy.splits("ned", True, None, None, "first")
    assert held == corpus[:10] and train == corpus[10:]
    train, _ = accuracy.splits("ned", True, None, 5, "first")
    assert train == corpus[10:15]  # the limit applies to the training part


def test_per_type_averages_each_type_over_the_seeds_and_keeps_tasks_apart() -> None:
    rows = [
        {"task": "esp", "runner": "cw", "per_type": {"PER": 0.8, "LOC": 0.6}},
        {"task": "esp", "runner": "cw", "per_type": {"PER": 0.9, "LOC": 0.7}},
        {"task": "chunk", "runner": "arow", "per_type": {"NP": 0.95}},
        {"task": "chunk", "runner": "crfsuite"},  # an older row without per-type scores
    ]
    lines = {(r["task"], r["runner"]): r for r in accuracy.per_type(rows)}
    assert set(lines) == {("esp", "cw"), ("chunk", "arow")}
    assert lines["esp", "cw"]["n"] == 2
    assert lines["esp", "cw"]["PER"] == pytest.approx(0.85)
    assert lines["esp", "cw"]["LOC"] == pytest.approx(0.65)
    assert lines["chunk", "arow"] == {"task": "chunk", "runner": "arow", "n": 1, "NP": 0.95}


def test_the_testa_fold_trains_on_everything_and_scores_the_official_dev_file(
    monkeypatch, tmp_path
) -> None:
    corpus = list(range(95))
    monkeypatch.setattr(accuracy.corpora, "load", lambda task, part, data_dir=None: corpus)
    (tmp_path / "conll2002").mkdir()
    (tmp_path / "conll2002" / "ned.testa").write_text("Jan B-PER\nwoont O\n\nHier O\n")
    train, held = accuracy.splits("ned", True, str(tmp_path), None, "testa")
    assert train == corpus and [s.tokens for s in held] == [["Jan", "woont"], ["Hier"]]
    with pytest.raises(SystemExit):
        accuracy.splits("chunk", True, str(tmp_path), None, "testa")  # CoNLL-2000 has none


def test_default_learners_are_the_clis_per_template() -> None:
    assert accuracy.learners_for("ned", ["default"]) == ["cw"]
    assert accuracy.learners_for("chunk", ["default", "cw", "arow"]) == ["arow", "cw"]
    assert accuracy.learners_for("np", ["pa"]) == ["pa"]
