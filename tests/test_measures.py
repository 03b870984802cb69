"""cwal.measures against independent truth: seqeval (conlleval oracle) and hand-computed values."""

from __future__ import annotations

import ast
import math
import random
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

import cwal.measures as measures
from cwal.measures import (
    average_precision,
    brier_score,
    calibration_rmse,
    chunk_f1,
    entropy_histogram,
    errors_in_top,
    expected_calibration_error,
    format_report,
    reliability_table,
    report_table,
    token_entropy,
)

# ----------------------------------------------------------------------------- chunk F1


def _random_corpus(rng: random.Random) -> tuple[list[list[str]], list[list[str]]]:
    """Random (often invalid) B/I/E/S/O sequences over 2-3 types, gold and pred aligned."""
    types = rng.sample(["NP", "VP", "PER", "LOC"], rng.choice([2, 3]))
    p_outside = rng.choice([0.1, 0.4, 0.7])

    def tag() -> str:
        if rng.random() < p_outside:
            return "O"
        return f"{rng.choice('BIES')}-{rng.choice(types)}"

    lengths = [rng.randint(0, 9) for _ in range(rng.randint(1, 6))]
    gold = [[tag() for _ in range(n)] for n in lengths]
    # predictions: mostly copies of gold with some tags replaced, so that chunks do match
    pred = [[t if rng.random() < 0.6 else tag() for t in sent] for sent in gold]
    return gold, pred


@pytest.mark.parametrize("seed", range(8))
def test_micro_scores_equal_seqeval_default_mode(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        gold, pred = _random_corpus(rng)
        report = chunk_f1(gold, pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = (
                precision_score(gold, pred, zero_division=0),
                recall_score(gold, pred, zero_division=0),
                f1_score(gold, pred, zero_division=0),
            )
        assert (report.precision, report.recall, report.f1) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_per_type_scores_equal_seqeval_classification_report(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(40):
        gold, pred = _random_corpus(rng)
        report = chunk_f1(gold, pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = classification_report(gold, pred, output_dict=True, zero_division=0)
        expected_types = {k: v for k, v in expected.items() if not k.endswith(" avg")}
        assert set(report.per_type) == set(expected_types)
        for kind, want in expected_types.items():
            got = report.per_type[kind]
            assert got["precision"] == pytest.approx(want["precision"], abs=1e-12)
            assert got["recall"] == pytest.approx(want["recall"], abs=1e-12)
            assert got["f1"] == pytest.approx(want["f1-score"], abs=1e-12)
            assert got["support"] == want["support"]


def test_hand_checked_iob2_example() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "I-ORG", "O"]]
    # gold chunks: PER[0:2] LOC[3] ORG[0:3]; pred chunks: PER[0:2] ORG[3] ORG[0:2]
    # correct: only PER -> P = R = F1 = 1/3; tokens equal: 3 + 2 of 7 -> accuracy 5/7
    report = chunk_f1(gold, pred)
    assert report.precision == pytest.approx(1 / 3)
    assert report.recall == pytest.approx(1 / 3)
    assert report.f1 == pytest.approx(1 / 3)
    assert report.token_accuracy == pytest.approx(5 / 7)
    assert report.counts == {
        "tokens": 7,
        "correct_tokens": 5,
        "gold_chunks": 3,
        "predicted_chunks": 3,
        "correct_chunks": 1,
    }
    assert report.per_type["PER"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "support": 1,
        "predicted": 1,
        "correct": 1,
    }
    # LOC: never predicted -> precision 0/0 = 0 (not NaN); ORG: 0 of 2 predicted correct
    assert report.per_type["LOC"]["precision"] == 0.0
    assert report.per_type["LOC"]["support"] == 1
    assert report.per_type["ORG"]["predicted"] == 2
    assert report.per_type["ORG"]["f1"] == 0.0


def test_iob1_i_after_o_and_type_change_start_chunks() -> None:
    # I- after O opens a chunk; I-VP after I-NP changes type -> a new chunk; B-NP after I-NP too
    gold = [["I-NP", "I-NP", "O", "I-NP", "I-VP", "I-NP", "B-NP"]]
    # chunks: NP[0:2] NP[3] VP[4] NP[5] NP[6]
    pred = [["I-NP", "I-NP", "O", "I-NP", "I-NP", "I-NP", "I-NP"]]
    # chunks: NP[0:2] NP[3:7] -> only NP[0:2] correct
    report = chunk_f1(gold, pred)
    assert report.counts["gold_chunks"] == 5
    assert report.counts["predicted_chunks"] == 2
    assert report.counts["correct_chunks"] == 1
    assert report.recall == pytest.approx(1 / 5)
    assert report.precision == pytest.approx(1 / 2)


def test_bioes_and_ioe_closing_tags() -> None:
    gold = [["S-X", "S-X", "I-X", "E-X", "E-X", "B-X", "E-X", "B-X"]]
    # S-X | S-X | I-X E-X | E-X (E after E starts) | B-X E-X | B-X -> 6 chunks
    report = chunk_f1(gold, gold)
    assert report.counts["gold_chunks"] == 6
    assert report.counts["correct_chunks"] == 6
    assert report.f1 == 1.0


def test_sentence_boundary_closes_chunks() -> None:
    # without the boundary the I-X would continue the B-X chunk (one chunk, not two)
    report = chunk_f1([["B-X"], ["I-X"]], [["B-X"], ["I-X"]])
    assert report.counts["gold_chunks"] == 2
    assert report.counts["correct_chunks"] == 2
    merged = chunk_f1([["B-X", "I-X"]], [["B-X", "I-X"]])
    assert merged.counts["gold_chunks"] == 1


def test_bracket_tags_are_one_token_chunks() -> None:
    # conlleval: "[" and "]" start a chunk and end it at the next token
    gold = [["[-NP", "]-NP", "O"]]
    assert chunk_f1(gold, gold).counts["gold_chunks"] == 2
    assert chunk_f1(gold, gold).counts["correct_chunks"] == 2
    # pred B-NP I-NP is one chunk NP[0:2]; gold ends its chunk after token 0 -> none correct
    report = chunk_f1(gold, [["B-NP", "I-NP", "O"]])
    assert (report.counts["predicted_chunks"], report.counts["correct_chunks"]) == (1, 0)
    assert report.precision == 0.0 and report.recall == 0.0


def test_no_predicted_chunks_gives_zero_not_nan() -> None:
    report = chunk_f1([["B-X", "O"]], [["O", "O"]])
    assert (report.precision, report.recall, report.f1) == (0.0, 0.0, 0.0)
    assert report.token_accuracy == 0.5
    empty = chunk_f1([], [])
    assert (empty.precision, empty.recall, empty.f1, empty.token_accuracy) == (0, 0, 0, 0)


def test_misaligned_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="sentences"):
        chunk_f1([["O"]], [])
    with pytest.raises(ValueError, match="sentence 1"):
        chunk_f1([["O"], ["O", "B-X"]], [["O"], ["O"]])


def test_report_table_and_text() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "I-ORG", "O"]]
    report = chunk_f1(gold, pred)
    table = report_table(report)
    assert list(table.index) == ["LOC", "ORG", "PER", "overall"]
    assert list(table.columns) == ["precision", "recall", "f1", "support", "predicted", "correct"]
    assert table.loc["overall", "support"] == 3
    assert table.loc["ORG", "predicted"] == 2
    assert "overall" not in report_table(report, overall=False).index
    text = format_report(report)
    assert "processed 7 tokens with 3 phrases; found: 3 phrases; correct: 1." in text
    # 5/7 = 71.43%, 1/3 = 33.33%
    assert "accuracy:  71.43%; precision:  33.33%; recall:  33.33%; FB1:  33.33" in text
    assert "              PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1" in text


# ----------------------------------------------------------------------- ranking measures

CONF = np.array([0.9, 0.1, 0.5, 0.3, 0.8])
OK = np.array([False, True, True, False, True])
# ascending order: idx1 (ok), idx3 (err), idx2 (ok), idx4 (ok), idx0 (err) -> errors at ranks 2, 5


def test_average_precision_hand_computed() -> None:
    # AP = (1/2 + 2/5) / 2 = 0.45
    assert average_precision(CONF, OK) == pytest.approx(0.45)
    # a perfect ranking: errors at ranks 1, 2 -> (1/1 + 2/2) / 2 = 1
    assert average_precision(CONF, ~np.array([False, True, False, True, False])) == 1.0


def test_average_precision_with_no_errors_is_zero() -> None:
    assert average_precision(CONF, np.ones(5, dtype=bool)) == 0.0


def test_average_precision_ties() -> None:
    conf = np.array([0.2, 0.2, 0.2, 0.9])
    ok = np.array([True, False, True, False])
    # the tied error at rank r in {1,2,3}, the other at rank 4: AP = (1/r + 2/4) / 2
    assert average_precision(conf, ok, ties="pessimistic") == pytest.approx((1 / 3 + 0.5) / 2)
    assert average_precision(conf, ok, ties="optimistic") == pytest.approx((1 + 0.5) / 2)
    seen = {round(average_precision(conf, ok, seed=s), 9) for s in range(60)}
    assert seen == {round((1 / r + 0.5) / 2, 9) for r in (1, 2, 3)}
    assert average_precision(conf, ok, seed=7) == average_precision(conf, ok, seed=7)
    # the tiebreak orders the tied tokens idx1 (0.1), idx2 (0.3), idx0 (0.5) before any tie rule,
    # but never overrides confidence (idx3 stays last despite its tiebreak 0.0)
    tiebreak = np.array([0.5, 0.1, 0.3, 0.0])
    for ties in ("random", "pessimistic", "optimistic"):
        ap = average_precision(conf, ok, tiebreak=tiebreak, ties=ties)
        assert ap == pytest.approx(0.75)
    with pytest.raises(ValueError, match="ties"):
        average_precision(conf, ok, ties="average")  # type: ignore[arg-type]


def test_random_ranking_gives_ap_near_error_rate() -> None:
    rng = np.random.default_rng(3)
    ok = rng.random(20000) >= 0.1
    ap = average_precision(np.full(ok.size, 0.5), ok)
    assert abs(ap - np.mean(~ok)) < 0.01


def test_average_precision_accepts_margins_outside_unit_interval() -> None:
    # Delta's margins: -3 (err) < 2 (ok) < 7 (err) -> errors at ranks 1, 3: (1 + 2/3) / 2
    assert average_precision(np.array([7.0, -3.0, 2.0]), np.array([0, 0, 1])) == pytest.approx(
        (1 + 2 / 3) / 2
    )


def test_errors_in_top() -> None:
    assert [errors_in_top(CONF, OK, n) for n in (0, 1, 2, 4, 5, 100)] == [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError, match="n must be"):
        errors_in_top(CONF, OK, -1)


@pytest.mark.parametrize(
    "func",
    [average_precision, errors_in_top, reliability_table, calibration_rmse,
     expected_calibration_error, brier_score],
)  # fmt: skip
def test_bad_confidence_input_is_rejected(func) -> None:
    with pytest.raises(ValueError, match="empty"):
        func(np.array([]), np.array([], dtype=bool))
    with pytest.raises(ValueError, match="length"):
        func(np.array([0.5, 0.5]), np.array([True]))
    with pytest.raises(ValueError, match="NaN"):
        func(np.array([0.5, np.nan]), np.array([True, False]))
    with pytest.raises(ValueError, match="boolean"):
        func(np.array([0.5, 0.5]), np.array([2, 0]))


# ------------------------------------------------------------------ calibration measures

# four bins of width 0.25: centers 0.125, 0.375, 0.625, 0.875
CAL_CONF = np.array([0.0, 0.1, 0.3, 0.3, 0.6, 0.99, 1.0])
CAL_OK = np.array([False, True, True, False, True, True, True])
# bin1 {0.0, 0.1}: n=2 c=1/2 mean .05 | bin2 {0.3, 0.3}: n=2 c=1/2 mean .3
# bin3 {0.6}: n=1 c=1 mean .6          | bin4 {0.99, 1.0}: n=2 c=1 mean .995


def test_reliability_table_hand_computed() -> None:
    table = reliability_table(CAL_CONF, CAL_OK, bins=4)
    assert list(table.columns) == [
        "bin", "lo", "hi", "center", "count", "accuracy", "mean_confidence",
    ]  # fmt: skip
    assert table["bin"].tolist() == [1, 2, 3, 4]
    assert table["center"].tolist() == pytest.approx([0.125, 0.375, 0.625, 0.875])
    assert table["count"].tolist() == [2, 2, 1, 2]
    assert table["accuracy"].tolist() == pytest.approx([0.5, 0.5, 1.0, 1.0])
    assert table["mean_confidence"].tolist() == pytest.approx([0.05, 0.3, 0.6, 0.995])


def test_reliability_table_default_bins_and_edges() -> None:
    conf = np.array([0.0, 0.0499, 0.05, 0.5, 1.0])
    table = reliability_table(conf, np.array([True, False, True, True, False]))
    assert len(table) == 20
    assert table["center"].to_numpy() == pytest.approx(np.arange(1, 21) / 20 - 1 / 40)
    counts = dict(zip(table["bin"], table["count"], strict=True))
    # 0.0 and 0.0499 -> bin 1; 0.05 -> bin 2 (lower edge inclusive); 0.5 -> bin 11; 1.0 -> bin 20
    assert {b: n for b, n in counts.items() if n} == {1: 2, 2: 1, 11: 1, 20: 1}
    assert table.loc[table["bin"] == 20, "accuracy"].item() == 0.0
    assert table.loc[table["bin"] == 5, "accuracy"].isna().item()


def test_calibration_rmse_hand_computed() -> None:
    # sum n_j (b_j - c_j)^2 = 2(.125-.5)^2 + 2(.375-.5)^2 + (.625-1)^2 + 2(.875-1)^2
    #                       = .28125 + .03125 + .140625 + .03125 = .484375; / 7 -> sqrt
    assert calibration_rmse(CAL_CONF, CAL_OK, bins=4) == pytest.approx(math.sqrt(0.484375 / 7))


def test_expected_calibration_error_hand_computed() -> None:
    # (2|.05-.5| + 2|.3-.5| + 1|.6-1| + 2|.995-1|) / 7 = (.9 + .4 + .4 + .01) / 7
    assert expected_calibration_error(CAL_CONF, CAL_OK, bins=4) == pytest.approx(1.71 / 7)


def test_brier_score_hand_computed() -> None:
    # (0 + .81 + .49 + .09 + .16 + .0001 + 0) / 7
    assert brier_score(CAL_CONF, CAL_OK) == pytest.approx(1.5501 / 7)


def test_all_tokens_in_one_bin() -> None:
    conf = np.full(4, 0.97)
    ok = np.array([True, True, True, False])
    # one bin (j = 20, b = .975), c = 3/4: RMSE = |.975 - .75|, ECE = |.97 - .75|
    assert calibration_rmse(conf, ok) == pytest.approx(0.225)
    assert expected_calibration_error(conf, ok) == pytest.approx(0.22)
    assert reliability_table(conf, ok)["count"].tolist() == [0] * 19 + [4]


def test_perfectly_calibrated_bins_give_zero_rmse() -> None:
    # 40 tokens at .125 with 5 correct, 40 at .875 with 35 correct (bins=4): c_j = b_j
    conf = np.repeat([0.125, 0.875], 40)
    ok = np.concatenate([np.arange(40) < 5, np.arange(40) < 35])
    assert calibration_rmse(conf, ok, bins=4) == pytest.approx(0.0, abs=1e-12)
    assert expected_calibration_error(conf, ok, bins=4) == pytest.approx(0.0, abs=1e-12)


def test_calibration_rejects_confidence_outside_unit_interval() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration_rmse(np.array([0.5, 1.2]), np.array([True, False]))
    with pytest.raises(ValueError, match="bins"):
        reliability_table(np.array([0.5]), np.array([True]), bins=0)


# ------------------------------------------------------------------------------ entropy


def test_token_entropy_hand_computed() -> None:
    dist = np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25] * 4, [0.7, 0.2, 0.1, 0.0]])
    # ln 2; 0 (0 log 0 = 0); ln 4; .7*.356675 + .2*1.609438 + .1*2.302585 = .8018186
    want = [math.log(2), 0.0, math.log(4), 0.8018186]
    assert token_entropy(dist) == pytest.approx(want, abs=1e-7)


def test_token_entropy_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="2-D"):
        token_entropy(np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="empty"):
        token_entropy(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="sums to"):
        token_entropy(np.array([[0.5, 0.4]]))
    with pytest.raises(ValueError, match="non-negative"):
        token_entropy(np.array([[1.5, -0.5]]))


def test_entropy_histogram() -> None:
    h = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    table = entropy_histogram(h, bins=2, range=(0.0, 1.0))
    # [0, .5): 0, .1 -> 2; [.5, 1]: .5, .9, 1.0 -> 3
    assert table["count"].tolist() == [2, 3]
    assert table["fraction"].tolist() == pytest.approx([0.4, 0.6])
    assert table["center"].tolist() == pytest.approx([0.25, 0.75])
    default = entropy_histogram(np.array([0.0, 0.4, 0.8]), bins=4)  # range (0, .8)
    assert default["hi"].iloc[-1] == pytest.approx(0.8)
    assert default["count"].tolist() == [1, 0, 1, 1]
    zeros = entropy_histogram(np.zeros(3), bins=5)  # all certain -> range (0, 1)
    assert zeros["count"].tolist() == [3, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="empty"):
        entropy_histogram(np.array([]))
    with pytest.raises(ValueError, match="increasing"):
        entropy_histogram(h, range=(1.0, 1.0))


# ------------------------------------------------------------------------------- module


def test_public_names_are_exported_and_seqeval_free() -> None:
    for name in measures.__all__:
        assert hasattr(measures, name), name
    assert isinstance(report_table(chunk_f1([["B-X"]], [["B-X"]])), pd.DataFrame)
    package = Path(measures.__file__).parent
    for source in package.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
        assert "seqeval" not in imported, source
        assert imported <= {"__future__", "collections", "dataclasses", "itertools", "typing"} | {
            "numpy",
            "pandas",
            "threadpoolctl",  # one BLAS thread for the bootstrap's small products
            "cwal",
        }, source
