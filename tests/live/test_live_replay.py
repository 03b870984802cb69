"""The live model is a function of the stored label log: replay, restart, crash, undo."""

from __future__ import annotations

import pytest

import cwal.live.replay as replay_module
from cwal.learners import SequenceLearner
from db.repository import annotation_history, get_checkpoint, list_checkpoints

from .conftest import SETTINGS
from .helpers import annotate, assert_same_model, online_reference

TAGS = SETTINGS["tagset"]


def test_replay_equals_an_uninterrupted_run(make_project) -> None:
    p = make_project()
    live = p.session()
    done = annotate(live, p, "ann", 12) + annotate(live, p, "bob", 8)
    reference = online_reference(p, [sid for _, sid in sorted(done)], TAGS)
    assert_same_model(live.model, reference)
    assert live.status()["model_version"] == 20
    live.close()
    restarted = p.session()  # no checkpoint: the whole log is replayed in id order
    assert_same_model(restarted.model, reference)
    assert restarted.status()["labeled_sentences"] == 20


def test_restart_after_consolidation_serves_identically(make_project) -> None:
    p = make_project(consolidation_interval=7)
    live = p.session()
    annotate(live, p, "ann", 17)
    live.wait_idle()
    assert live.status()["checkpoint_id"] is not None
    before = live.preview(5)
    preds = [live.model.predict_one(s.tokens) for s in before]
    live.close()
    again = p.session()
    assert_same_model(again.model, live.model)
    after = again.preview(5)
    assert [s.sentence_id for s in after] == [s.sentence_id for s in before]
    assert [s.confidence for s in after] == [s.confidence for s in before]
    assert [again.model.predict_one(s.tokens) for s in before] == preds
    # a fresh annotator after the restart is served the sentence suggested before it
    assert again.next(p.users["dan"])[0].sentence_id == before[0].sentence_id


def test_a_crash_between_store_and_update_loses_nothing(make_project, monkeypatch) -> None:
    p = make_project()
    live = p.session()
    done = annotate(live, p, "ann", 5)
    (sug,) = live.next(p.users["ann"])

    def crash(model, row):
        raise RuntimeError("process died after the commit")

    monkeypatch.setattr(replay_module, "learn", crash)
    version = live.status()["model_version"]
    # the update runs on the learner thread: the submit returns the committed label's id
    aid = live.submit(sug.sentence_id, p.gold[sug.sentence_id], p.users["ann"])
    assert live.learner.wait(timeout=60)
    assert "died" in live.status()["learn_error"]
    assert live.status()["model_version"] == version  # the update failed, nothing half-applied
    monkeypatch.undo()
    (stored,) = annotation_history(p.engine, sug.sentence_id)
    assert stored.id == aid
    assert stored.tags == p.gold[sug.sentence_id]
    reference = online_reference(p, [sid for _, sid in done] + [sug.sentence_id], TAGS)
    assert_same_model(p.session().model, reference)  # a restarted process
    live.sync()  # the survivor catches up on its next call
    assert_same_model(live.model, reference)


def test_undo_rebuilds_the_model_without_the_label(make_project) -> None:
    p = make_project()
    live = p.session()
    done = annotate(live, p, "ann", 4)
    assert live.undo(p.users["ann"]) == done[-1][1]
    reference = online_reference(p, [sid for _, sid in done[:3]], TAGS)
    assert_same_model(live.model, reference)
    assert live.status()["labeled_sentences"] == 3
    assert live.next(p.users["ann"])[0].sentence_id == done[-1][1]  # leased back to them
    assert_same_model(p.session().model, reference)


def test_undo_of_a_label_a_checkpoint_covers(make_project) -> None:
    p = make_project(consolidation_interval=3)
    live = p.session()
    done = annotate(live, p, "ann", 3)
    live.wait_idle()  # consolidated after the third label
    done += annotate(live, p, "ann", 1)
    live.wait_idle()
    (cp,) = list_checkpoints(p.engine, p.id)
    assert cp.last_annotation_id == done[2][0]  # retrained on the first three labels
    live.undo(p.users["ann"])  # the 4th: after the checkpoint, replay from it
    assert_same_model(live.model, SequenceLearner.from_bytes(get_checkpoint(p.engine, cp.id).state))
    live.undo(p.users["ann"])  # the 3rd: the checkpoint reflects it, so it is no longer valid
    live.wait_idle()  # the undos count as updates: a consolidation on the two labels left may run
    newer = [c for c in list_checkpoints(p.engine, p.id) if c.id != cp.id]
    if newer:  # retrained from scratch on exactly the two remaining labels
        assert newer[-1].info["n_train"] == 2
        reference = SequenceLearner.from_bytes(get_checkpoint(p.engine, newer[-1].id).state)
        assert live.status()["checkpoint_id"] == newer[-1].id
    else:  # rebuilt online from the two remaining labels, no checkpoint
        reference = online_reference(p, [sid for _, sid in done[:2]], TAGS)
        assert live.status()["checkpoint_id"] is None
    assert_same_model(live.model, reference)
    assert_same_model(p.session().model, reference)


def test_a_ranking_is_by_the_model_its_sample_was_drawn_for(make_project, monkeypatch) -> None:
    p = make_project()
    live = p.session()
    annotate(live, p, "ann", 3)
    live.wait_idle()
    real, moved = live.ranker._sample, []

    def sample_then_the_model_moves():
        out = real()
        if not moved:  # a label lands between drawing the sample and scoring it
            moved.append(next(i for i in p.gold if not live.live.labeled.get(i)))
            live.store.submit(moved[0], p.users["bob"], p.gold[moved[0]], None)
            live.sync()
        return out

    monkeypatch.setattr(live.ranker, "_sample", sample_then_the_model_moves)
    live.submit(*_gold_for(live, p, "ann"))
    live.wait_idle()
    assert moved
    before = live.preview(4)
    again = p.session()
    after = again.preview(4)
    assert [(s.sentence_id, s.confidence) for s in after] == [
        (s.sentence_id, s.confidence) for s in before
    ]


def _gold_for(live, p, user):
    (sug,) = live.next(p.users[user])
    return sug.sentence_id, p.gold[sug.sentence_id], p.users[user]


def test_one_calibrated_confidence_from_the_first_label(make_project) -> None:
    """The shading, the logged record and the lead views' estimate all go through one map:
    Delta through sigmoid(a + b log1p(Delta)) fitted on the store's prequential record."""
    import numpy as np

    from cwal import reports
    from cwal.confidence import estimate
    from cwal.confidence.calibration import MarginMap
    from cwal.io import Sentence
    from db.repository import calibration_frame, calibration_keys
    from db.repository.analysis import current_reading
    from db.store import live_session

    p = make_project(consolidation_interval=7)
    live = live_session(p.engine, p.id)  # the session the lead views read
    annotate(live, p, "ann", 10)
    live.wait_idle()
    record = calibration_keys(p.engine, p.id)
    assert len(record) == 9  # every label but the first (the model knew nothing yet)
    frame = calibration_frame(p.engine, p.id)
    for (_, correct, tags), row in zip(record, frame.itertuples(), strict=True):
        assert correct == [a == b for a, b in zip(row.tags, row.truth, strict=True)]
        assert tags == list(row.tags)  # the predicted tags: the map's entity term
    # consolidated after 7 labels: the entries from the one predicted by that model on get a
    # shift of their own (entry j was predicted by a model that had learned j + 1 labels)
    first = min(c.info["n_train"] for c in live.store.checkpoints(p.id))
    assert live.live.base is not None and first >= 7  # the watermark when it retrained
    fitted = MarginMap.fit(record, consolidated=first - 1)
    assert live.calibration == fitted and fitted.labels == 9
    assert fitted != MarginMap.fit(record)
    (sug,) = live.next(p.users["bob"])
    margin = estimate(live.model, [Sentence(sug.tokens, None, sug.columns)], "delta").margin
    assert np.allclose(sug.confidence, fitted(margin, sug.predicted))
    assert sug.least_confident == int(np.argmin(margin))
    state = current_reading(p.engine, p.id, [[]])[0]
    assert state.calibration == fitted
    expected = float(np.mean(fitted(margin, sug.predicted)))
    assert state.expected_accuracy(margin, sug.predicted) == expected
    assert reports.pool_estimate(live.model, [Sentence(sug.tokens)], fitted)["pool_estimate"] == (
        pytest.approx(expected)
    )
    live.close()


def test_a_reload_while_a_label_is_recorded_counts_it_once(make_project, monkeypatch) -> None:
    """A consolidation refits the calibration on the store's record while the recorder logs a
    label: the map must be the one a restart fits (once flaky: the label counted twice)."""
    import threading

    from cwal.confidence.calibration import MarginMap
    from db.repository import calibration_keys

    p = make_project()
    live = p.session()
    annotate(live, p, "ann", 3)
    live.wait_idle()
    log = live.store.log_predictions
    reloads: list[threading.Thread] = []

    def log_then_reload(project_id, rows):  # a consolidation's reload lands in between
        log(project_id, rows)
        reloads.append(threading.Thread(target=live.recorder.reload))
        reloads[-1].start()
        reloads[-1].join(0.5)

    monkeypatch.setattr(live.store, "log_predictions", log_then_reload)
    annotate(live, p, "ann", 2)
    live.wait_idle()
    for t in reloads:
        t.join(30)
    assert reloads  # the two labels' rows are logged in one write or two (recorder batches)
    record = calibration_keys(p.engine, p.id)
    assert live.calibration == MarginMap.fit(record) and live.calibration.labels == len(record)
    again = p.session()
    assert again.calibration == live.calibration  # as a restart reads it
    again.close()
    live.close()


def test_the_record_is_logged_in_batches_and_whole_after_close(make_project, monkeypatch) -> None:
    """The recorder logs its rows in batches (one write for many labels), and none is lost:
    every label but the first has its row once the session is idle, and closing the session
    logs what was pending."""
    from cwal.live import recorder
    from db.repository import calibration_keys

    monkeypatch.setattr(recorder, "LOG_EVERY_S", 30.0)  # only the close (or a reload) logs
    p = make_project()
    live = p.session()
    log, calls = live.store.log_predictions, []

    def counted(project_id, rows):
        calls.append(len(rows))
        log(project_id, rows)

    monkeypatch.setattr(live.store, "log_predictions", counted)
    annotate(live, p, "ann", 8)
    assert calibration_keys(p.engine, p.id) == []  # still pending: no write per label
    live.wait_idle()
    assert sum(calls) == len(calibration_keys(p.engine, p.id)) == 7
    assert len(calls) < 7
    annotate(live, p, "ann", 3)
    live.close()  # what the recorder was given is logged before its thread ends
    assert sum(calls) == len(calibration_keys(p.engine, p.id)) > 7
