"""Imports never block annotators and never show half a corpus: sentences are staged in short
transactions and published at once; a killed import is invisible, then resumed or deleted."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

import db.imports as imports_module
from db.import_pacing import FIRST_CHUNK, next_chunk
from db.imports import ImportRunningError, import_file
from db.models import Annotation, ImportBatch, Sentence
from db.repository import (
    add_user,
    count_sentences,
    create_project,
    discard_import,
    incomplete_imports,
    iter_sentences,
    list_sentences,
    project_counts,
    unlabeled_pool_ids,
)
from tests.db.test_db_concurrency import _count, _run_annotators, _spawn, _wait_for


def _killed_import(backend, engine, project: int, path: Path, tmp_path: Path) -> None:
    """Start an import in a process and SIGKILL it once a chunk is staged."""
    marker = tmp_path / f"{path.stem}.marker"
    proc = _spawn(backend, "import", project, path, marker)
    _wait_for(marker, proc)
    assert int(marker.read_text()) >= 200  # rows were committed before the kill
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_import_is_invisible_and_can_be_deleted(
    backend, engine, corpus, snapshot, tmp_path
):
    project = create_project(engine, "crash", {"tagset": None})
    import_file(engine, project, corpus(10, "earlier.conll", start=10**6))
    before = snapshot(engine)
    visible = [s.id for s in list_sentences(engine, project)]
    big = corpus(5000, "big.conll")
    _killed_import(backend, engine, project, big, tmp_path)
    # staged rows exist, yet no query shows them
    (unfinished,) = incomplete_imports(engine, project)
    staged = _count(engine, Sentence, Sentence.batch_id == unfinished.id)
    assert staged == unfinished.n_sentences >= 200 and not unfinished.complete
    assert [s.id for s in list_sentences(engine, project)] == visible
    assert count_sentences(engine, project) == 10
    assert project_counts(engine, project).pool == 10
    assert unlabeled_pool_ids(engine, project) == visible
    with pytest.raises(ImportRunningError, match="being imported"):  # written seconds ago
        import_file(engine, project, big)
    assert discard_import(engine, unfinished.id) == staged
    assert snapshot(engine) == before
    assert import_file(engine, project, big).n_sentences == 5000
    assert count_sentences(engine, project) == 5010


def test_a_killed_import_resumes_where_it_stopped(
    backend, engine, corpus, tmp_path, monkeypatch
) -> None:
    project = create_project(engine, "resume", {"tagset": None})
    big = corpus(3000, "big.conll")
    _killed_import(backend, engine, project, big, tmp_path)
    (unfinished,) = incomplete_imports(engine, project)
    monkeypatch.setattr(imports_module, "RUNNING_SECONDS", 0.0)  # the killed writer is gone
    result = import_file(engine, project, big)
    assert result.batch_id == unfinished.id and result.n_sentences == 3000
    assert incomplete_imports(engine, project) == []
    # independent truth: the file read again, sentence by sentence, in order, once each
    fresh = create_project(engine, "reference", {"tagset": None})
    import_file(engine, fresh, big)
    got = [(s.position, s.line, s.tokens, s.gold_tags) for s in iter_sentences(engine, project)]
    want = [(s.position, s.line, s.tokens, s.gold_tags) for s in iter_sentences(engine, fresh)]
    assert got == want and len(got) == 3000


def test_a_refused_file_leaves_nothing_staged(backend, engine, corpus, snapshot, tmp_path):
    project = create_project(engine, "refused", {"tagset": None})
    before = snapshot(engine)
    bad = tmp_path / "bad.conll"
    bad.write_text(corpus(1200, "ok.conll").read_text() + "lonely\n\n", encoding="utf-8")
    with pytest.raises(Exception, match="bad.conll"):
        import_file(engine, project, bad, chunk_size=100)  # 12 chunks written, then the error
    assert snapshot(engine) == before


@pytest.mark.slow
def test_annotators_submit_while_a_big_import_runs(backend, engine, corpus, tmp_path) -> None:
    """Eight annotators submit from the import's first staged chunk on; the importer stops
    before publishing until they are done (so the order is fixed, whatever the load), and
    then they must all have submitted while the import was open, none of them blocked."""
    project = create_project(engine, "busy", {"tagset": None})
    import_file(engine, project, corpus(8 * 30 + 50, "first.conll"))
    users = [add_user(engine, f"busy{k}", "pw") for k in range(8)]
    big = corpus(60_000, "big.conll", start=10**6)
    marker = tmp_path / "big.marker"
    importer = _spawn(backend, "bigimport", project, big, marker, 60_000)
    try:
        _wait_for(marker, importer, timeout=120)
        logs, _ = _run_annotators(backend, project, users, 30, tmp_path)
        # the annotators are done and the import is still unpublished: they ran while it did
        (running,) = incomplete_imports(engine, project)
        seen = {count_sentences(engine, project)}
        assert 0 < running.n_sentences <= 60_000 and seen == {290} and importer.poll() is None
    finally:
        marker.with_suffix(".release").touch()
    while importer.poll() is None:  # a reader during the import sees all of it or none
        seen.add(count_sentences(engine, project))
        time.sleep(0.05)
    importer.communicate(timeout=600)
    assert importer.returncode == 0
    assert json.loads(marker.with_suffix(".done").read_text())["n"] == 60_000
    submits = [e for events in logs for e in events if e["event"] == "submit"]
    assert len(submits) == 8 * 30  # 0 failed: every annotator process ended normally
    with engine.connect() as conn:
        stored = conn.execute(select(func.count()).select_from(Annotation)).scalar_one()
        batches = conn.execute(select(ImportBatch.state, ImportBatch.n_sentences)).all()
    assert stored == 8 * 30  # 0 lost
    assert sorted(batches) == [("done", 290), ("done", 60_000)]
    assert seen <= {290, 60_290}  # never half a corpus
    assert count_sentences(engine, project) == 60_290


def test_staging_batches_are_time_boxed() -> None:
    # the next chunk aims at the time box from the measured rate, at most doubling, 10..cap
    assert next_chunk(50, 0.010, 50.0, 500) == 100  # fast: doubles
    assert next_chunk(400, 0.020, 50.0, 500) == 500  # fast and large: the cap
    assert next_chunk(500, 0.200, 50.0, 500) == 125  # slow: a quarter of it fits 50 ms
    assert next_chunk(100, 5.0, 50.0, 500) == 10  # very slow (a busy disk): the floor


def test_an_import_writes_growing_chunks(engine, corpus) -> None:
    """SQLite: time-boxed chunks from FIRST_CHUNK up; PostgreSQL: fixed 500 (no write lock)."""
    project = create_project(engine, "paced", {"tagset": None})
    seen: list[int] = []
    result = import_file(engine, project, corpus(3000, "paced.conll"),
                         progress=lambda p: seen.append(p.sentences))  # fmt: skip
    sizes = [b - a for a, b in zip([0, *seen], seen, strict=False)]
    assert result.n_sentences == 3000 == seen[-1]
    if engine.dialect.name == "postgresql":
        assert sizes == [500] * 6
        return
    assert sizes[0] == FIRST_CHUNK and max(sizes) <= 500
    assert all(b <= 2 * a for a, b in zip(sizes, sizes[1:-1], strict=False))  # at most doubling
