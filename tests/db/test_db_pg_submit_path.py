"""PostgreSQL's submit path: pooled connections are pinged only after sitting idle
(``PG_PING_IDLE_S``), and one the server dropped meanwhile is replaced before use; a submit
judges its tags on the settings read with the annotation lock only when they are still the
committed ones at its insert (else on the new ones).
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text

from db import engine as engine_mod
from db import imports
from db import repository as repo


@pytest.fixture
def postgres_only(backend):
    if backend.name != "postgres":
        pytest.skip("PostgreSQL's pool and annotation lock")


def test_a_dropped_idle_connection_is_replaced_before_use(postgres_only, engine, monkeypatch):
    monkeypatch.setattr(engine_mod, "PG_PING_IDLE_S", 0.0)
    with engine.connect() as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    with engine_mod.make_engine(engine.url.render_as_string(hide_password=False)).begin() as admin:
        admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    time.sleep(0.2)
    with engine.connect() as conn:  # the pool's one connection was the dropped one
        assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != pid


def test_a_submit_is_judged_by_settings_changed_after_its_first_read(
    postgres_only, engine, people, monkeypatch, tmp_path
):
    """The tag set shrinks between the submit's first read (with the lock) and its insert: the
    insert finds the settings changed, and the submit is judged again on the new ones."""
    pid = repo.create_project(engine, "guard", {"tagset": ["O", "B-X", "I-X"], "scheme": "IOB2"})
    path = tmp_path / "guard.jsonl"
    path.write_text('{"tokens": ["a", "b"], "tags": ["O", "O"]}', encoding="utf-8")
    imports.import_file(engine, pid, path, split="pool")
    (sid,) = repo.sentence_ids(engine, pid, "pool")
    assert repo.lease_next(engine, pid, people["ann"]) == sid
    from db.repository import annotations

    fast = annotations._fast

    def narrowed(conn, *args):
        with engine.begin() as other:  # commits before the insert runs; the context is older
            other.execute(
                text("UPDATE projects SET settings = :s WHERE id = :p"),
                {"s": '{"tagset":["O"],"scheme":"IOB2"}', "p": pid},
            )
        return fast(conn, *args)

    monkeypatch.setattr(annotations, "_fast", narrowed)
    with pytest.raises(repo.InvalidValueError, match="not in the tag set"):
        repo.submit_annotation(engine, sid, people["ann"], ["B-X", "I-X"])
    monkeypatch.setattr(annotations, "_fast", fast)
    assert repo.submit_annotation(engine, sid, people["ann"], ["O", "O"]) > 0
