"""A label rename and a submit interleaved, on SQLite and PostgreSQL: the submit reads the tag set
under the same lock as its insert, so it never stores a type name the rename has just retired.

The rename is held open (after rewriting the stored tags, before committing) while an annotator
submits tags in the old names; once the submit is waiting, the rename commits. The submit must
then be judged against the renamed tag set: the old name is refused, the new one is stored."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select, text

from db import imports
from db import repository as repo
from db.models import Annotation
from db.repository import labels

TAGSET = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
JSONL = '{"tokens": ["Ann", "Lee", "in", "Rome"], "tags": ["B-PER", "I-PER", "O", "B-LOC"]}'


@pytest.fixture
def pool(engine, tmp_path):
    pid = repo.create_project(engine, "race", {"tagset": TAGSET, "scheme": "IOB2"})
    path = tmp_path / "pool.jsonl"
    path.write_text(JSONL, encoding="utf-8")
    imports.import_file(engine, pid, path, split="pool")
    return pid, repo.sentence_ids(engine, pid, "pool")[0]


def _waiting_for_lock(engine) -> bool:
    """PostgreSQL: some session of this database waits for an advisory lock."""
    with engine.connect() as conn:
        query = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        return conn.execute(text(query)).scalar_one() > 0


def _rename_held_open(engine, monkeypatch, pid, lead):
    """Start renaming PER to PERSON in a thread that stops before its commit; returns the thread,
    the event that lets it commit, and its outcome."""
    inside, go, outcome = threading.Event(), threading.Event(), {}
    rewrite = labels._rewrite

    def slow_rewrite(*args, **kwargs):
        done = rewrite(*args, **kwargs)
        inside.set()
        go.wait(20)
        return done

    monkeypatch.setattr(labels, "_rewrite", slow_rewrite)

    def rename():
        try:
            outcome["rewritten"] = repo.update_label_type(engine, pid, lead, "PER", rename="PERSON")
        except Exception as exc:  # noqa: BLE001 - reported by the test
            outcome["error"] = exc

    thread = threading.Thread(target=rename)
    thread.start()
    assert inside.wait(20), "the rename never reached its rewrite"
    return thread, go, outcome


@pytest.mark.parametrize("name", ["PER", "PERSON"])
def test_a_submit_during_a_rename_is_judged_by_the_renamed_tag_set(
    engine, backend, people, pool, monkeypatch, name
):
    pid, sid = pool
    tags = [f"B-{name}", f"I-{name}", "O", "B-LOC"]
    thread, go, renamed = _rename_held_open(engine, monkeypatch, pid, people["lea"])
    submitted: dict = {}

    def submit():
        try:
            submitted["id"] = repo.submit_annotation(engine, sid, people["ann"], tags)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            submitted["error"] = exc

    worker = threading.Thread(target=submit)
    worker.start()
    deadline = time.monotonic() + 20
    if backend.name == "postgres":  # wait until the submit is blocked by the rename's lock
        while not _waiting_for_lock(engine) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _waiting_for_lock(engine), "the submit never waited for the rename"
    else:  # SQLite: the rename holds the write lock, the submit retries until it is free
        time.sleep(0.3)
    assert worker.is_alive() and not submitted, "the submit went ahead of an open rename"
    go.set()
    thread.join(30)
    worker.join(30)
    assert "error" not in renamed, renamed

    with engine.connect() as conn:
        stored = conn.execute(select(Annotation.tags).where(Annotation.sentence_id == sid)).all()
    if name == "PER":  # the retired name: refused, nothing stored
        assert isinstance(submitted.get("error"), repo.InvalidValueError), submitted
        assert "not in the tag set" in str(submitted["error"])
        assert stored == []
    else:  # the new name: stored as given
        assert "error" not in submitted, submitted
        assert [row.tags for row in stored] == [["B-PERSON", "I-PERSON", "O", "B-LOC"]]
    settings = repo.get_project(engine, pid).settings
    assert "B-PER" not in settings["tagset"] and "B-PERSON" in settings["tagset"]
