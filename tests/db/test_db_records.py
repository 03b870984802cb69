"""Checkpoints, the prediction log, simulation runs and the dashboard counters."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from db.imports import import_file
from db.repository import (
    CurvePointInput,
    DuplicateError,
    InvalidValueError,
    NotFoundError,
    PredictionRecord,
    add_curve_point,
    add_curve_points,
    annotation_log,
    annotator_stats,
    calibration_frame,
    create_simulation_run,
    curve_points,
    delete_simulation_run,
    finish_simulation_run,
    get_checkpoint,
    get_simulation_run,
    latest_checkpoint,
    lease_next,
    list_checkpoints,
    list_sentences,
    list_simulation_runs,
    log_prediction,
    log_predictions,
    prediction_log,
    project_counts,
    prune_checkpoints,
    save_checkpoint,
    skip,
    submit_annotation,
    undo_last,
)

T0 = datetime(2030, 3, 2, 15, 0, tzinfo=UTC)
GOOD = ["B-NP", "I-NP", "B-VP"]


@pytest.fixture
def sids(engine, project, corpus) -> list[int]:
    import_file(engine, project, corpus(5))
    return [s.id for s in list_sentences(engine, project)]


def _model_bytes(seed: int) -> bytes:
    """What an engine's save() produces: an .npz archive with arrays and a JSON entry."""
    buffer = io.BytesIO()
    rng = np.random.default_rng(seed)
    np.savez(buffer, W=rng.normal(size=(300, 5)), A=rng.normal(size=(7, 5)))
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("meta.json", json.dumps({"learner": "arow", "seed": seed}))
    return buffer.getvalue()


def test_checkpoints_round_trip_bytes(engine, project):
    assert latest_checkpoint(engine, project) is None
    states = [_model_bytes(seed) for seed in range(3)]
    ids = [
        save_checkpoint(engine, project, state, last_annotation_id=10 * k, info={"f1": 0.5 + k})
        for k, state in enumerate(states)
    ]
    latest = latest_checkpoint(engine, project)
    assert (latest.id, latest.state, latest.last_annotation_id) == (ids[2], states[2], 20)
    arrays = np.load(io.BytesIO(latest.state))
    assert arrays["W"].shape == (300, 5)
    assert get_checkpoint(engine, ids[0]).state == states[0]
    listed = list_checkpoints(engine, project)
    assert [(c.id, c.state, c.info) for c in listed] == [
        (i, None, {"f1": 0.5 + k}) for k, i in enumerate(ids)
    ]
    assert prune_checkpoints(engine, project, keep=1) == 2
    assert [c.id for c in list_checkpoints(engine, project)] == [ids[2]]
    with pytest.raises(InvalidValueError):
        save_checkpoint(engine, project, "not bytes", None)
    with pytest.raises(NotFoundError):
        get_checkpoint(engine, 99999)


def test_prediction_log_and_calibration(engine, project, people, sids):
    log_prediction(engine, sids[0], 1, GOOD, [0.9, 0.8, 0.6], "least-confidence", served_at=T0)
    log_predictions(
        engine,
        [
            PredictionRecord(sids[1], 1, ["O", "O", "O"], [0.5, 0.7, 0.9], "random", score=0.4),
            PredictionRecord(sids[2], 2, GOOD, [0.99, 0.98, 0.97], "random", user_id=people["ann"]),
        ],
    )
    log = prediction_log(engine, project)
    assert list(log["sentence_id"]) == sids[:3]
    assert list(log["model_version"]) == [1, 1, 2]
    assert log.loc[0, "confidences"] == [0.9, 0.8, 0.6]
    assert list(prediction_log(engine, project, model_version=2)["sentence_id"]) == [sids[2]]
    assert list(prediction_log(engine, project, strategy="random")["model_version"]) == [1, 2]

    submit_annotation(engine, sids[0], people["ann"], ["B-NP", "I-NP", "O"], now=T0)
    submit_annotation(engine, sids[1], people["ann"], GOOD, now=T0)
    frame = calibration_frame(engine, project)
    assert list(frame["sentence_id"]) == sids[:2]  # sids[2] is not labeled yet
    tokens = calibration_frame(engine, project, per_token=True)
    assert list(tokens["correct"]) == [True, True, False, False, False, False]
    assert list(tokens["confidence"]) == [0.9, 0.8, 0.6, 0.5, 0.7, 0.9]


def test_bad_predictions_are_refused(engine, sids):
    cases = [
        (GOOD, [0.9, 0.8]),  # fewer confidences than tags
        (["O"], [0.5]),  # fewer tags than tokens
        (GOOD, [0.9, float("nan"), 0.1]),
    ]
    for tags, conf in cases:
        with pytest.raises(InvalidValueError):
            log_prediction(engine, sids[0], 1, tags, conf, "random")
    with pytest.raises(NotFoundError):
        log_prediction(engine, 10**9, 1, GOOD, [1, 1, 1], "random")


def test_simulation_runs_and_curves(engine, project):
    run = create_simulation_run(engine, "cw vs random", {"seed": 1}, project_id=project, now=T0)
    other = create_simulation_run(engine, "baseline", {"seed": 2})
    add_curve_points(
        engine,
        run,
        [CurvePointInput(k, 10 * k, 230 * k, {"f1": 0.1 * k, "ece": 0.05}) for k in range(1, 4)],
    )
    add_curve_point(engine, other, 1, 10, 230, {"f1": 0.2})
    with pytest.raises(DuplicateError):
        add_curve_point(engine, run, 2, 0, 0, {"f1": 0.0})
    with pytest.raises(InvalidValueError):
        add_curve_point(engine, run, 9, 0, 0, {"step": 1.0})
    curve = curve_points(engine, run)
    assert list(curve["step"]) == [1, 2, 3]
    assert list(curve["f1"]) == pytest.approx([0.1, 0.2, 0.3])
    both = curve_points(engine, [run, other])
    assert list(both["run_id"]) == [run, run, run, other]
    assert curve_points(engine, 999).empty
    finish_simulation_run(engine, run, now=T0 + timedelta(minutes=5))
    info = get_simulation_run(engine, run)
    assert (info.status, info.finished_at, info.config) == (
        "done",
        T0 + timedelta(minutes=5),
        {"seed": 1},
    )
    assert [r.id for r in list_simulation_runs(engine, status="running")] == [other]
    assert [r.id for r in list_simulation_runs(engine, project)] == [run]
    delete_simulation_run(engine, run)
    assert curve_points(engine, run).empty
    with pytest.raises(NotFoundError):
        get_simulation_run(engine, run)


def test_counters_per_annotator(engine, project, people, sids):
    yesterday = T0 - timedelta(days=1)
    submit_annotation(engine, sids[0], people["ann"], GOOD, seconds=30, now=yesterday)
    submit_annotation(engine, sids[1], people["ann"], GOOD, seconds=10, now=T0)
    submit_annotation(engine, sids[2], people["ann"], GOOD, seconds=20, now=T0)
    undo_last(engine, project, people["ann"], now=T0)  # sids[2] no longer counts
    submit_annotation(engine, sids[3], people["bob"], GOOD, now=T0)  # no time recorded
    skip(engine, sids[4], people["bob"], now=T0)
    stats = {s.name: s for s in annotator_stats(engine, project, now=T0 + timedelta(hours=1))}
    ann, bob = stats["ann"], stats["bob"]
    assert (ann.today, ann.total, ann.skipped, ann.seconds_total) == (1, 2, 0, 40.0)
    assert ann.seconds_per_sentence == 20.0 and ann.sentences_per_hour == 180.0
    assert (bob.today, bob.total, bob.skipped, bob.seconds_per_sentence) == (1, 1, 1, None)
    earlier_start = T0 - timedelta(hours=25)  # a day start that includes yesterday's work
    stats = {s.name: s for s in annotator_stats(engine, project, day_start=earlier_start)}
    assert stats["ann"].today == 2

    lease_next(engine, project, people["lea"], now=T0)
    counts = project_counts(engine, project, now=T0)
    assert (counts.pool, counts.eval, counts.labeled, counts.unlabeled) == (5, 0, 3, 2)
    assert (counts.leased, counts.annotations) == (1, 6)
    log = annotation_log(engine, project)
    assert list(log["status"]) == ["submitted"] * 3 + ["undone", "submitted", "skipped"]
    assert list(log["retracted"]) == [False, False, True, False, False, False]
