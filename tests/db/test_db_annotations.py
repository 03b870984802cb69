"""The annotation log is append-only; current state, replay and undo are derived from it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from db.imports import import_file
from db.models import Annotation
from db.repository import (
    InvalidValueError,
    NotFoundError,
    annotation_history,
    annotations_after,
    current_annotations,
    last_annotation_id,
    list_sentences,
    retractions,
    skip,
    submit_annotation,
    undo_last,
    update_project_settings,
)

T0 = datetime(2030, 5, 1, 9, 0, tzinfo=UTC)
GOOD = ["B-NP", "I-NP", "B-VP"]
OTHER = ["B-NP", "B-NP", "O"]


@pytest.fixture
def sids(engine, project, corpus) -> list[int]:
    import_file(engine, project, corpus(4))
    return [s.id for s in list_sentences(engine, project)]


def _rows(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Annotation)).scalar_one()


def test_submission_is_committed_before_return(backend, engine, people, sids):
    annotation_id = submit_annotation(engine, sids[0], people["ann"], GOOD, seconds=4.5, now=T0)
    other = backend.engine()  # a separate pool: sees only committed rows
    try:
        [row] = annotation_history(other, sids[0])
    finally:
        other.dispose()
    assert (row.id, row.user_id, row.annotator, row.status) == (
        annotation_id,
        people["ann"],
        "ann",
        "submitted",
    )
    assert (row.tags, row.seconds, row.created_at, row.supersedes_id) == (GOOD, 4.5, T0, None)


def test_resubmission_supersedes_without_deleting(engine, project, people, sids):
    first = submit_annotation(engine, sids[0], people["ann"], GOOD, now=T0)
    second = submit_annotation(engine, sids[0], people["lea"], OTHER, now=T0)
    history = annotation_history(engine, sids[0])
    assert [(h.id, h.supersedes_id, h.tags) for h in history] == [
        (first, None, GOOD),
        (second, first, OTHER),
    ]
    [current] = current_annotations(engine, project)
    assert (current.id, current.annotator, current.tags) == (second, "lea", OTHER)


def test_undo_appends_a_row_and_restores_the_previous_state(engine, project, people, sids):
    a1 = submit_annotation(engine, sids[0], people["ann"], GOOD, now=T0)
    a2 = submit_annotation(engine, sids[1], people["ann"], GOOD, now=T0)
    b1 = submit_annotation(engine, sids[0], people["bob"], OTHER, now=T0)
    assert _rows(engine) == 3
    undo = undo_last(engine, project, people["bob"], now=T0)
    assert (undo.undone_id, undo.sentence_id, undo.undone_status) == (b1, sids[0], "submitted")
    assert _rows(engine) == 4  # nothing deleted: one more row
    assert {c.sentence_id: c.id for c in current_annotations(engine, project)} == {
        sids[0]: a1,
        sids[1]: a2,
    }
    assert undo_last(engine, project, people["ann"], now=T0).undone_id == a2
    assert undo_last(engine, project, people["ann"], now=T0).undone_id == a1
    assert undo_last(engine, project, people["ann"], now=T0) is None
    assert current_annotations(engine, project) == []
    assert [h.status for h in annotation_history(engine, sids[0])] == [
        "submitted",
        "submitted",
        "undone",
        "undone",
    ]


def test_skip_is_recorded_and_can_be_undone(engine, project, people, sids):
    skip_id = skip(engine, sids[2], people["ann"], seconds=2.0, now=T0)
    [row] = annotation_history(engine, sids[2])
    assert (row.id, row.status, row.tags, row.seconds) == (skip_id, "skipped", None, 2.0)
    assert current_annotations(engine, project) == []
    undo = undo_last(engine, project, people["ann"], now=T0)
    assert (undo.undone_id, undo.undone_status) == (skip_id, "skipped")


def test_annotations_after_replays_in_id_order(engine, project, people, sids):
    a = submit_annotation(engine, sids[0], people["ann"], GOOD, now=T0)
    s = skip(engine, sids[1], people["bob"], now=T0)
    b = submit_annotation(engine, sids[0], people["bob"], OTHER, now=T0)
    u = undo_last(engine, project, people["bob"], now=T0).undo_id
    events = list(annotations_after(engine, project))
    assert [(e.id, e.status, e.supersedes_id) for e in events] == [
        (a, "submitted", None),
        (s, "skipped", None),
        (b, "submitted", a),
        (u, "undone", b),
    ]
    first = events[0]
    assert first.tokens == ["w0a", "w0b", "w0c"]
    assert first.columns == {"pos": ["DT", "NN", "VBZ"]}
    assert first.to_sentence().tags == GOOD
    assert [e.id for e in annotations_after(engine, project, s)] == [b, u]
    assert [e.id for e in annotations_after(engine, project, 0, limit=1)] == [a]
    assert last_annotation_id(engine, project) == u


def test_invalid_tags_are_refused_and_store_nothing(engine, project, people, sids):
    bad = {
        "wrong length": ["B-NP"],
        "outside the tag set": ["B-NP", "I-NP", "B-XX"],
        "I- after O under strict IOB2": ["O", "I-NP", "B-VP"],
        "not strings": ["B-NP", None, "O"],
    }
    for tags in bad.values():
        with pytest.raises(InvalidValueError):
            submit_annotation(engine, sids[0], people["ann"], tags)
    with pytest.raises(InvalidValueError):
        submit_annotation(engine, sids[0], people["ann"], GOOD, seconds=-1)
    with pytest.raises(InvalidValueError):
        submit_annotation(engine, sids[0], people["ann"], GOOD, seconds=float("nan"))
    assert _rows(engine) == 0
    update_project_settings(engine, project, {"strict_scheme": False})
    submit_annotation(engine, sids[0], people["ann"], bad["I- after O under strict IOB2"])
    assert _rows(engine) == 1


def test_unknown_sentence_or_user_is_not_found(engine, people, sids):
    with pytest.raises(NotFoundError, match="sentence"):
        submit_annotation(engine, 10**9, people["ann"], GOOD)
    with pytest.raises(NotFoundError, match="user"):
        submit_annotation(engine, sids[0], 10**9, GOOD)
    with pytest.raises(NotFoundError, match="user"):
        skip(engine, sids[0], 10**9)
    assert _rows(engine) == 0


def test_state_as_of_an_annotation_id_and_retractions(engine, project, people, sids):
    a = submit_annotation(engine, sids[0], people["ann"], GOOD, now=T0)
    b = submit_annotation(engine, sids[1], people["ann"], GOOD, now=T0)
    c = submit_annotation(engine, sids[0], people["bob"], OTHER, now=T0)
    u = undo_last(engine, project, people["ann"], now=T0).undo_id  # retracts b
    s = skip(engine, sids[2], people["bob"], now=T0)
    v = undo_last(engine, project, people["bob"], now=T0).undo_id  # retracts the skip

    def state(upto):
        return {x.sentence_id: x.id for x in current_annotations(engine, project, upto_id=upto)}

    assert state(a) == {sids[0]: a}
    assert state(b) == {sids[0]: a, sids[1]: b}
    assert state(c) == {sids[0]: c, sids[1]: b}
    assert state(u) == {sids[0]: c} == state(None)
    assert retractions(engine, project) == [(b, u)]  # the undone skip is not a retraction
    assert retractions(engine, project, after_id=u) == []
    assert v > s > u
