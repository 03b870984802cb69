"""The lead pages' data functions (``cwal.reports``) against hand-computed examples; the store's
views built from them are in test_reports_views.py."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from cwal import reports
from cwal.confidence import estimate
from cwal.confidence.calibration import MarginMap
from cwal.decode import emissions
from cwal.io import Sentence
from cwal.learners import make
from cwal.live import LogRow, PoolSentence
from cwal.measures import chunk_f1

NAN = float("nan")


def _log(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(reports.progress.LOG_COLUMNS))


LOG = _log(
    [
        (1, 10, "submitted", None, 3),
        (2, 11, "submitted", None, 5),
        (3, 10, "submitted", 1, 3),  # a re-label supersedes id 1
        (4, 11, "skipped", None, 5),  # someone else's skip changes nothing
        (5, 11, "undone", 2, 5),  # sentence 11 is unlabeled again
        (6, 12, "submitted", None, 2),
        (7, 10, "undone", 3, 3),  # id 1 is current again: still labeled
        (8, 13, "skipped", None, 4),
        (9, 13, "undone", 8, 4),  # the undo of a skip does not change the model
    ]
)


def test_labeled_amount_replays_relabels_and_undos() -> None:
    got = reports.labeled_amount(LOG, [7, 0, 1, 2, 3, 5, 6])
    assert got["annotation_id"].tolist() == [0, 1, 2, 3, 5, 6, 7]
    assert got["sentences"].tolist() == [0, 1, 2, 2, 1, 2, 2]
    assert got["words"].tolist() == [0, 3, 8, 8, 3, 5, 5]
    assert reports.labeled_sentences(LOG) == {10, 12}
    assert reports.labeled_sentences(LOG[LOG["id"] <= 4]) == {10, 11}
    assert reports.model_version(LOG) == 6  # 4 submissions + 2 undos of submissions
    assert reports.labeled_amount(LOG.iloc[:0], [3])["words"].tolist() == [0]


def _annotation_log() -> pd.DataFrame:
    t = [datetime(2026, 1, d, h, tzinfo=UTC) for d, h in ((1, 10), (1, 11), (2, 9), (2, 9), (2, 9))]
    return pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5],
            "annotator": ["ann", "ann", "bob", "ann", "bob"],
            "status": ["submitted", "submitted", "submitted", "submitted", "skipped"],
            "created_at": t,
            "seconds": [10.0, 20.0, None, 30.0, None],
            "retracted": [False, False, False, True, False],
        }
    )


def test_throughput_per_day_and_annotator() -> None:
    got = reports.throughput(_annotation_log())
    assert got["period"].tolist() == ["2026-01-01", "2026-01-02"]
    assert got["annotator"].tolist() == ["ann", "bob"]
    assert got["sentences"].tolist() == [2, 1]
    assert got["median_seconds"].iloc[0] == 15.0 and math.isnan(got["median_seconds"].iloc[1])
    assert reports.throughput(_annotation_log().iloc[:0]).empty


def test_annotator_pace() -> None:
    got = reports.annotator_pace(_annotation_log()).set_index("annotator")
    assert got.loc["ann", "sentences"] == 2 and got.loc["ann", "skipped"] == 0  # id 4 retracted
    assert got.loc["ann", "median_seconds"] == 15.0 and got.loc["ann", "mean_seconds"] == 15.0
    assert got.loc["bob", "sentences"] == 1 and got.loc["bob", "skipped"] == 1
    assert math.isnan(got.loc["bob", "median_seconds"])


def test_label_distribution() -> None:
    got = reports.label_distribution([["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-PER"]])
    assert got["label"].tolist() == ["PER", "LOC", "O"]
    assert got["mentions"].tolist() == [2, 1, 0]
    assert got["tokens"].tolist() == [3, 1, 2]
    assert got["token_share"].tolist() == pytest.approx([3 / 6, 1 / 6, 2 / 6])
    repaired = reports.label_distribution([["I-ORG", "O"]])  # invalid IOB2: read as B-ORG
    assert repaired["label"].tolist() == ["ORG", "O"] and repaired["mentions"].tolist() == [1, 0]


PREDICTIONS = pd.DataFrame(
    {
        "id": [1, 2, 3],
        "sentence_id": [7, 8, 9],
        "annotation_id": [11, 12, 14],
        "strategy": ["kd-pc"] * 3,
        "tags": [["O", "B-PER"], ["O"], ["O", "O", "B-LOC"]],
        "confidences": [[0.9, 0.4], [0.8], [1.0, 1.0, 0.7]],
        "truth": [["O", "O"], ["O"], ["O", "O", "B-LOC"]],
    }
)


def test_prediction_tokens_and_prequential_curve() -> None:
    tokens = reports.prediction_tokens(PREDICTIONS)
    assert len(tokens) == 6
    assert tokens["correct"].tolist() == [True, False, True, True, True, True]
    assert tokens["method"].unique().tolist() == ["kd-pc"]
    curve = reports.prequential_curve(tokens, window=2)  # a point from the first prediction on
    assert curve["annotation_id"].tolist() == [11, 12, 14]
    assert curve["predictions"].tolist() == [1, 2, 2]
    assert curve["tokens"].tolist() == [2, 3, 4]
    assert curve["accuracy"].tolist() == pytest.approx([1 / 2, 2 / 3, 1.0])
    assert curve["expected"].tolist() == pytest.approx([0.65, 0.7, 0.875])


# A hand example for the running span F1: (predicted, given) per served sentence, in order.
SPAN_SENTENCES = [
    (["O", "O"], ["O", "O"]),  # no chunk either side
    (["B-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"]),  # 1 chunk, right
    (["B-PER", "O", "B-LOC"], ["B-PER", "I-PER", "B-ORG"]),  # 2 given, 2 found, none right
    (["O", "B-LOC", "I-LOC"], ["O", "B-LOC", "I-LOC"]),  # 1 chunk, right
]


def test_prequential_span_f1_is_the_chunk_f1_of_the_window() -> None:
    from seqeval.metrics import f1_score  # the independent oracle (IOB2, default mode)

    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "sentence_id": [5, 6, 7, 8],
            "annotation_id": [21, 22, 23, 24],
            "strategy": ["kd-pc"] * 4,
            "tags": [p for p, _ in SPAN_SENTENCES],
            "confidences": [[0.5] * len(p) for p, _ in SPAN_SENTENCES],
            "truth": [g for _, g in SPAN_SENTENCES],
        }
    )
    curve = reports.prequential_curve(reports.prediction_tokens(frame), window=2)
    # by hand: window {1}: no chunk -> NaN; {1,2}: 1/1/1 -> 1; {2,3}: gold 3, found 3, right 1
    # -> 1/3; {3,4}: gold 3, found 3, right 1 -> 1/3
    got = curve["span_f1"].tolist()
    assert math.isnan(got[0])
    assert got[1:] == pytest.approx([1.0, 1 / 3, 1 / 3])
    for i in range(1, 4):  # seqeval on the same windows
        window = SPAN_SENTENCES[max(0, i - 1) : i + 1]
        want = f1_score([g for _, g in window], [p for p, _ in window])
        assert got[i] == pytest.approx(want)
    assert curve["accuracy"].tolist() == pytest.approx([1.0, 1.0, 4 / 6, 4 / 6])
    # without tags (a token frame of confidences only) the span F1 is unknown, not 0
    bare = reports.prediction_tokens(frame).drop(columns=["predicted", "truth"])
    assert reports.prequential_curve(bare, window=2)["span_f1"].isna().all()


def test_prediction_tokens_drop_relabeled_lengths_and_number_positions() -> None:
    logged = PREDICTIONS.assign(created_at=pd.Timestamp("2024-05-01", tz="UTC"))
    longer = {"id": 5, "sentence_id": 9, "annotation_id": 15, "strategy": "kd-pc",
              "tags": ["O"], "confidences": [0.5], "truth": ["O", "O"]}  # fmt: skip
    logged = pd.concat([logged.iloc[:2], pd.DataFrame([longer]), logged.iloc[2:]])
    tokens = reports.prediction_tokens(logged)
    assert tokens["prediction_id"].tolist() == [1, 1, 2, 3, 3, 3]  # id 5 no longer fits
    assert tokens["position"].tolist() == [0, 1, 0, 0, 1, 2]
    assert tokens["annotation_id"].tolist() == [11, 11, 12, 14, 14, 14]
    assert tokens["confidence"].tolist() == [0.9, 0.4, 0.8, 1.0, 1.0, 0.7]
    assert tokens["truth"].tolist() == ["O", "O", "O", "O", "O", "B-LOC"]
    assert reports.prediction_tokens(PREDICTIONS.iloc[:0]).empty
    broken = PREDICTIONS.assign(confidences=[[0.9], [0.8], [1.0, 1.0, 0.7]])
    with pytest.raises(ValueError, match="confidences"):
        reports.prediction_tokens(broken)


def test_accuracy_curves_in_long_form() -> None:
    points = pd.DataFrame(
        {
            "sentences": [50, 100],
            "words": [600, 1300],
            "eval_f1": [0.5, 0.6],
            "eval_accuracy": [0.9, 0.92],
            "pool_estimate": [0.95, NAN],
        }  # fmt: skip
    )
    preq = pd.DataFrame(
        {"annotation_id": [12], "accuracy": [0.8], "expected": [0.85], "span_f1": [0.4]}
    )
    amounts = pd.DataFrame({"annotation_id": [12], "sentences": [20], "words": [250]})
    got = reports.accuracy_curves(points, preq, amounts)
    m = reports.MEASURES
    by = {(r.measure, r.sentences): (r.words, r.value) for r in got.itertuples()}
    assert by == {
        (m["eval_f1"], 50): (600, 0.5),
        (m["eval_f1"], 100): (1300, 0.6),
        (m["eval_accuracy"], 50): (600, 0.9),
        (m["eval_accuracy"], 100): (1300, 0.92),
        (m["pool_estimate"], 50): (600, 0.95),  # the NaN point is left out
        (m["prequential"], 20): (250, 0.8),
        (m["prequential_expected"], 20): (250, 0.85),
        (m["prequential_f1"], 20): (250, 0.4),
    }
    assert reports.accuracy_curves(points.iloc[:0], preq.iloc[:0], amounts.iloc[:0]).empty


def test_reliability_per_method() -> None:
    tokens = pd.DataFrame(
        {
            "method": ["kd-pc"] * 5 + ["delta"] * 2,
            "confidence": [0.02, 0.03, 0.97, 0.99, 0.5, 3.0, 0.1],
            "correct": [False, False, True, False, True, True, False],
        }
    )
    table, summary = reports.reliability(tokens)
    assert summary["method"].tolist() == ["kd-pc"]  # Delta is relative: no diagram
    assert len(table) == 20 and table["count"].sum() == 5
    used = table[table["count"] > 0].set_index("bin")
    assert used["count"].to_dict() == {1: 2, 11: 1, 20: 2}
    assert used["accuracy"].to_dict() == {1: 0.0, 11: 1.0, 20: 0.5}
    rmse = math.sqrt((2 * 0.025**2 + 1 * (0.525 - 1) ** 2 + 2 * (0.975 - 0.5) ** 2) / 5)
    ece = (2 * 0.025 + 1 * 0.5 + 2 * abs(0.98 - 0.5)) / 5
    row = summary.iloc[0]
    assert row["rmse"] == pytest.approx(rmse) and row["ece"] == pytest.approx(ece)
    assert row["tokens"] == 5 and row["accuracy"] == pytest.approx(0.4)


def test_confusion_matrix() -> None:
    tokens = pd.DataFrame(
        {
            "predicted": ["O", "O", "B-PER", "B-PER", "O"],
            "truth": ["O", "O", "O", "B-PER", "B-PER"],
        }
    )
    got = reports.confusion_matrix(tokens)
    assert list(zip(got["given"], got["predicted"], got["count"], strict=True)) == [
        ("O", "O", 2),
        ("O", "B-PER", 1),
        ("B-PER", "O", 1),
        ("B-PER", "B-PER", 1),
    ]
    assert got["share"].tolist() == pytest.approx([2 / 3, 1 / 3, 0.5, 0.5])


def test_entropy_histograms_share_one_range() -> None:
    tokens = pd.DataFrame({"group": ["a", "a", "b"], "entropy": [0.0, 0.5, 1.0]})
    got = reports.entropy_histograms(tokens, bins=2)
    a, b = got[got["group"] == "a"], got[got["group"] == "b"]
    assert a["lo"].tolist() == [0.0, 0.5] and b["hi"].tolist() == [0.5, 1.0]
    assert a["count"].tolist() == [1, 1] and a["fraction"].tolist() == [0.5, 0.5]
    assert b["count"].tolist() == [0, 1] and b["fraction"].tolist() == [0.0, 1.0]


def test_context() -> None:
    words = list("abcdefghij")
    assert reports.context(words, 5, width=2) == "… d e [f] g h …"
    assert reports.context(words, 0, width=2) == "[a] b c …"


def test_least_sure_orders_by_key_then_position() -> None:
    pool = pd.DataFrame(
        {
            "sentence_id": [1, 1, 2, 2],
            "position": [0, 1, 0, 1],
            "token": ["x", "y", "z", "w"],
            "predicted": ["O", "B-PER", "O", "O"],
            "confidence": [1.0, 0.5, 0.5, 0.9],
            "entropy": [0.0, 0.69, 0.69, 0.3],
            "margin": [3.0, 0.1, 0.1, 1.2],
            "key": [1.0, 0.0, 0.0, 0.5],
        }
    )
    got = reports.least_sure(pool, 3, {1: ["x", "y"], 2: ["z", "w"]})
    assert list(zip(got["sentence_id"], got["position"], strict=True)) == [(1, 1), (2, 0), (2, 1)]
    assert got["rank"].tolist() == [1, 2, 3]
    assert got["context"].tolist() == ["x [y]", "[z] w", "z [w]"]


def test_review_ranking_ranks_disputed_labels_and_filters() -> None:
    labeled = pd.DataFrame(
        {
            "sentence_id": [1, 1, 2, 2, 3],
            "position": [0, 1, 0, 1, 0],
            "token": ["a", "b", "c", "d", "e"],
            "given": ["B-PER", "O", "O", "B-LOC", "B-ORG"],
            "predicted": ["O", "O", "B-LOC", "B-LOC", "B-PER"],
            "p_given": [0.1, 1.0, 0.1, 1.0, 0.0],
            "gap": [2.0, 0.0, 5.0, 0.0, 1.0],
        }
    )
    who = {1: "ann", 2: "bob", 3: "ann"}
    got = reports.review_ranking(labeled, annotators=who)
    # p_given ascending, then the larger score gap; agreeing tokens (gap 0) are not ranked
    assert list(zip(got["sentence_id"], got["position"], strict=True)) == [(3, 0), (2, 0), (1, 0)]
    assert got["annotator"].tolist() == ["ann", "bob", "ann"]
    assert reports.review_ranking(labeled, annotators=who, annotator="bob")["token"].tolist() == [
        "c"
    ]
    by_label = reports.review_ranking(labeled, annotators=who, label="B-PER")
    assert by_label["token"].tolist() == ["e", "a"]  # given or predicted B-PER
    assert reports.review_ranking(labeled, n=1)["token"].tolist() == ["e"]


# ----- the model side -----------------------------------------------------------------------
TRAIN = [
    Sentence(["Anna", "met", "Bo", "in", "Oslo"], ["B-PER", "O", "B-PER", "O", "B-LOC"]),
    Sentence(["Carl", "Berg", "left", "Rome"], ["B-PER", "I-PER", "O", "B-LOC"]),
    Sentence(["Oslo", "is", "cold"], ["B-LOC", "O", "O"]),
]
LABELS = ["O", "B-PER", "I-PER", "B-LOC"]


@pytest.fixture(scope="module")
def trained():
    model = make("arow", labels=LABELS, template="ner")
    for _ in range(3):
        for s in TRAIN:
            model.learn_one(s.tokens, s.tags)
    return reports.ModelState(model, version=9, s=0.5, k=40, method="kd-pc")


def test_disagreement_matches_brute_force(trained) -> None:
    model = trained.model
    sent = Sentence(["Anna", "left", "Oslo"])
    enc = model.encode([sent])
    given = ["O", "B-PER", "B-LOC"]
    ids = reports.given_ids(model, [given])
    got = reports.disagreement(model, enc, ids)
    W, A = model.averaged()
    E = emissions(enc.feat_ids, enc.tok_offsets, W)
    L = len(model.labels_)

    def score(y: tuple[int, ...]) -> float:
        s = A[L, y[0]] + A[L + 1, y[-1]] + sum(E[p, y[p]] for p in range(3))
        return s + sum(A[y[p - 1], y[p]] for p in range(1, 3))

    scores = {y: score(y) for y in itertools.product(range(L), repeat=3)}
    best = max(scores.values())
    for p in range(3):
        forced = max(v for y, v in scores.items() if y[p] == ids[p])
        assert got[p] == pytest.approx(best - forced)
    predicted = model.predict([sent])[0]
    agree = [int(t == g) for t, g in zip(predicted, given, strict=True)]
    assert [g == pytest.approx(0.0) for g in got] == [bool(a) for a in agree]
    unknown = reports.disagreement(model, enc, np.array([-1, 0, 0]))
    assert math.isinf(unknown[0])


def test_token_frame_reads_kd_distribution(trained) -> None:
    sents = [PoolSentence(5, ["Bo", "met", "Anna"], {}), PoolSentence(6, ["Rome"], {})]
    enc = trained.model.encode([Sentence(s.tokens) for s in sents])
    given = {5: ["B-PER", "B-PER", "B-PER"], 6: ["B-LOC"]}
    frame = reports.token_frame(trained, enc, sents, given=given, seed=3)
    conf = estimate(trained.model, enc, "kd-pc", k=40, s=0.5, seed=3)
    assert frame["sentence_id"].tolist() == [5, 5, 5, 6]
    assert frame["position"].tolist() == [0, 1, 2, 0]
    flat = [t for tags in trained.model.predict([Sentence(s.tokens) for s in sents]) for t in tags]
    assert frame["predicted"].tolist() == flat
    assert frame["delta"].tolist() == pytest.approx(conf.margin.tolist())
    shaded = trained.calibration(conf.margin, flat)  # Delta and the predicted tags
    assert frame["confidence"].tolist() == pytest.approx(shaded.tolist())
    gid = reports.given_ids(trained.model, [given[5], given[6]])
    expected = conf.distribution[np.arange(4), gid]
    assert frame["p_given"].tolist() == pytest.approx(expected.tolist())
    assert frame["agrees"].tolist() == [
        p == g for p, g in zip(flat, given[5] + given[6], strict=True)
    ]
    empty = reports.token_frame(reports.ModelState(trained.model, 0, 0.5, 40, "kd-pc"), enc, sents)
    assert empty.empty  # an untrained model (version 0) says nothing


def test_evaluate_and_pool_estimate(trained) -> None:
    gold = [Sentence(["Bo", "left", "Oslo"], ["B-PER", "O", "B-LOC"]), TRAIN[1]]
    enc = trained.model.encode(gold)
    got = reports.evaluate(trained, enc, [s.tags for s in gold])
    report = chunk_f1([s.tags for s in gold], trained.model.predict(gold))
    assert got == {"f1": report.f1, "accuracy": report.token_accuracy}
    cal = MarginMap(a=-0.5, b=1.0, e=-1.0)
    est = reports.pool_estimate(trained.model, gold, cal)
    delta = estimate(trained.model, enc, "delta").margin
    entity = [t != "O" for tags in trained.model.predict(gold) for t in tags]
    by_hand = [
        1 / (1 + math.exp(0.5 + x - math.log1p(d))) if np.isfinite(d) else 1.0
        for d, x in zip(delta, entity, strict=True)
    ]
    assert est["pool_estimate"] == pytest.approx(float(np.mean(by_hand)))
    assert (est["pool_tokens"], est["pool_sentences"]) == (7, 2)


def test_rebuild_replays_the_label_log_as_the_live_service() -> None:
    settings = {"learner": "arow", "feature_template": "ner", "tagset": LABELS}
    rows = [
        LogRow(1, 1, 1, "submitted", TRAIN[0].tags, None, TRAIN[0].tokens, {}),
        LogRow(2, 2, 1, "submitted", ["O"] * 4, None, TRAIN[1].tokens, {}),
        LogRow(3, 2, 1, "undone", None, 2, TRAIN[1].tokens, {}),
        LogRow(4, 3, 1, "submitted", TRAIN[2].tags, None, TRAIN[2].tokens, {}),
    ]
    state = reports.rebuild(settings, None, None, rows)
    assert state.version == 4 and state.trained and state.checkpoint_id is None
    twin = make("arow", labels=LABELS, template="ner")
    for s in (TRAIN[0], TRAIN[2]):  # the undone submission is never learned
        twin.learn_one(s.tokens, s.tags)
    for got, want in zip(state.model.averaged(), twin.averaged(), strict=True):
        np.testing.assert_allclose(got, want)
