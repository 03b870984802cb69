"""Exports stream the latest annotation per sentence, filter it, and re-import to the same state."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest

from db.exports import export_annotations, iter_export
from db.imports import import_file
from db.repository import (
    InvalidValueError,
    create_project,
    current_annotations,
    list_sentences,
    skip,
    submit_annotation,
    undo_last,
)

T0 = datetime(2030, 7, 1, 8, 0, tzinfo=UTC)
GOOD = ["B-NP", "I-NP", "B-VP"]
ALT = ["B-NP", "B-NP", "O"]


@pytest.fixture
def annotated(engine, project, people, corpus):
    """Six sentences: ann labels 0-2 (1 on day two), bob relabels 0 and labels 3, lea skips 4,
    bob's label of 3 is undone; 5 stays untouched."""
    import_file(engine, project, corpus(6))
    s = [x.id for x in list_sentences(engine, project)]
    submit_annotation(engine, s[0], people["ann"], GOOD, now=T0)
    submit_annotation(engine, s[1], people["ann"], ALT, now=T0 + timedelta(days=1))
    submit_annotation(engine, s[2], people["ann"], GOOD, now=T0)
    submit_annotation(engine, s[0], people["bob"], ALT, now=T0 + timedelta(days=1))
    submit_annotation(engine, s[3], people["bob"], GOOD, now=T0)
    undo_last(engine, project, people["bob"], now=T0)
    skip(engine, s[4], people["lea"], now=T0)
    return s


def _conll(engine, project, **filters) -> str:
    out = io.StringIO()
    export_annotations(engine, project, out, "conll", **filters)
    return out.getvalue()


def test_export_writes_the_latest_annotation_per_sentence(engine, project, annotated):
    text = _conll(engine, project)
    assert text == (
        "w0a DT B-NP\nw0b NN B-NP\nw0c VBZ O\n\n"  # bob's relabel wins
        "w1a DT B-NP\nw1b NN B-NP\nw1c VBZ O\n\n"
        "w2a DT B-NP\nw2b NN I-NP\nw2c VBZ B-VP\n\n"
    )


def test_export_filters(engine, project, people, annotated):
    by_ann = [
        s.meta["sentence_id"] for s in iter_export(engine, project, annotator_ids=[people["ann"]])
    ]
    assert by_ann == [annotated[1], annotated[2]]
    day_two = iter_export(engine, project, since=T0 + timedelta(hours=12))
    assert [s.meta["sentence_id"] for s in day_two] == annotated[:2]
    day_one = iter_export(engine, project, until=T0 + timedelta(hours=12))
    assert [s.meta["sentence_id"] for s in day_one] == [annotated[2]]
    skipped = list(iter_export(engine, project, status="skipped"))
    assert [(s.meta["sentence_id"], s.tags) for s in skipped] == [(annotated[4], None)]
    either = [s.meta["sentence_id"] for s in iter_export(engine, project, status=None)]
    assert either == annotated[:3] + [annotated[4]]
    with pytest.raises(InvalidValueError):
        list(iter_export(engine, project, status="undone"))


@pytest.mark.parametrize("fmt", ["conll", "jsonl"])
def test_exported_file_reimports_to_the_same_annotations(
    engine, project, people, annotated, tmp_path, fmt
):
    path = tmp_path / f"export.{fmt}"
    assert export_annotations(engine, project, path, fmt) == 3
    copy = create_project(engine, "copy")
    import_file(engine, copy, path, tags_as="annotations", annotator_id=people["lea"])
    original = [(c.tokens, c.columns, c.tags) for c in current_annotations(engine, project)]
    again = [(c.tokens, c.columns, c.tags) for c in current_annotations(engine, copy)]
    assert again == original
    if fmt == "jsonl":
        first = json.loads(path.read_text().splitlines()[0])
        assert first["annotator"] == "bob" and first["sentence_id"] == annotated[0]


def test_export_streams_instead_of_loading_the_project(engine, people, tmp_path):
    """Peak memory of an export stays far below that of materializing all its annotations."""
    project = create_project(engine, "big", {"tagset": None})
    path = tmp_path / "big.conll"
    n = 6000
    with path.open("w") as out:
        for i in range(n):
            out.write("".join(f"tok{i}_{p} NN O\n" for p in range(20)) + "\n")
    import_file(engine, project, path, tags_as="annotations", annotator_id=people["ann"])

    tracemalloc.start()
    try:
        rows = current_annotations(engine, project)
        _, peak_list = tracemalloc.get_traced_memory()
        assert len(rows) == n
        del rows
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        written = export_annotations(engine, project, tmp_path / "out.conll", "conll")
        _, peak_stream = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert written == n
    assert peak_stream - base < 0.25 * peak_list, (peak_stream - base, peak_list)
