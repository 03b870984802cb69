"""Durability of the embedded store: FULL sync, damage detected at start, backup and restore,
bounded retries when the database is busy."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

import db.repository.base as base_module
from cwal.errors import CorpusError
from db.backup import BackupError, backup, restore
from db.engine import (
    SQLITE_BUSY_TIMEOUT_MS,
    DatabaseDamagedError,
    make_engine,
    open_database,
    read_transaction,
    write_transaction,
)
from db.imports import import_bytes
from db.models import Annotation
from db.repository import (
    DatabaseBusyError,
    add_user,
    create_project,
    sentence_ids,
    submit_annotation,
)

REPO = Path(__file__).resolve().parents[2]

CONLL = "".join(f"w{i} O\nx{i} B-PER\n\n" for i in range(300)).encode()


def _filled(path: Path) -> tuple[int, list[int]]:
    """A SQLite store at ``path`` with 300 sentences and 5 labels; (annotator id, sentence ids)."""
    eng = open_database(f"sqlite:///{path}")
    user = add_user(eng, "ann", "pw")
    pid = create_project(eng, "p", {"scheme": "IOB2", "tagset": ["O", "B-PER", "I-PER"]})
    import_bytes(eng, pid, CONLL, "a.conll")
    ids = sentence_ids(eng, pid)
    for sid in ids[:5]:
        submit_annotation(eng, sid, user, ["O", "B-PER"])
    eng.dispose()
    return user, ids


def _labels(url: str) -> int:
    eng = make_engine(url)
    with eng.connect() as conn:
        n = conn.execute(select(func.count()).select_from(Annotation)).scalar_one()
    eng.dispose()
    return n


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cwal", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_sqlite_commits_are_synced_fully(tmp_path: Path) -> None:
    eng = make_engine(f"sqlite:///{tmp_path / 's.sqlite3'}")
    with eng.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_a_truncated_database_file_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "cwal.sqlite3"
    _filled(path)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(DatabaseDamagedError) as err:
        open_database(f"sqlite:///{path}")
    assert str(path) in str(err.value) and "cwal restore" in str(err.value)
    assert path.stat().st_size == size // 2  # nothing written to it


def test_a_bit_flip_in_a_table_page_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "cwal.sqlite3"
    _filled(path)
    raw = sqlite3.connect(path)
    page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    root = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sentences'").fetchone()[0]
    raw.close()
    with open(path, "r+b") as f:  # page type byte: 0x05 (interior table page) -> 0x0D (leaf)
        f.seek((root - 1) * page_size)
        kind = f.read(1)[0]
        assert kind == 0x05, "300 sentences fill more than one page"
        f.seek((root - 1) * page_size)
        f.write(bytes([kind ^ 0x08]))
    with pytest.raises(DatabaseDamagedError, match="damaged"):
        open_database(f"sqlite:///{path}")
    cli = _cli("check", "--db", f"sqlite:///{path}")
    assert cli.returncode == 2 and "damaged" in cli.stderr and "Traceback" not in cli.stderr


def test_online_backup_while_writing_then_restore(tmp_path: Path) -> None:
    path = tmp_path / "cwal.sqlite3"
    url = f"sqlite:///{path}"
    user, ids = _filled(path)
    eng = open_database(url)
    stop = threading.Event()

    def writer() -> None:  # an annotator keeps submitting during the backup
        for sid in ids[5:200]:
            if stop.is_set():
                return
            submit_annotation(eng, sid, user, ["O", "B-PER"])

    t = threading.Thread(target=writer)
    t.start()
    dest = backup(eng, tmp_path / "b" / "copy.sqlite3")
    stop.set()
    t.join()
    in_backup = _labels(f"sqlite:///{dest}")
    assert 5 <= in_backup <= _labels(url)  # a consistent snapshot of committed labels
    with pytest.raises(BackupError, match="already exists"):
        backup(eng, dest)
    eng.dispose()
    with open(path, "r+b") as f:  # the live file is then destroyed
        f.truncate(1000)
    kept = restore(dest, url)
    assert kept is not None and kept.exists() and kept.stat().st_size == 1000
    open_database(url).dispose()  # passes the start check again
    assert _labels(url) == in_backup


def test_backup_and_restore_commands(tmp_path: Path) -> None:
    path = tmp_path / "cwal.sqlite3"
    _filled(path)
    url = f"sqlite:///{path}"
    out = tmp_path / "copy.sqlite3"
    made = _cli("backup", "--db", url, "--out", str(out))
    assert made.returncode == 0 and out.exists(), made.stderr
    assert _cli("check", "--db", url).stdout.strip().endswith(": ok")
    path.unlink()
    back = _cli("restore", str(out), "--db", url)
    assert back.returncode == 0, back.stderr
    assert _labels(url) == 5
    missing = _cli("restore", str(tmp_path / "nope.sqlite3"), "--db", url)
    assert missing.returncode == 2 and "no such backup file" in missing.stderr


def test_backup_of_postgresql_names_pg_dump() -> None:
    eng = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(BackupError, match="pg_dump"):
        backup(eng)


def test_a_busy_database_is_retried_then_reported(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cwal.sqlite3"
    user, ids = _filled(path)
    monkeypatch.setattr(base_module, "BUSY_WAIT_S", 1.0)
    monkeypatch.setattr(base_module, "BUSY_TRY_MS", 100)  # (imported by name: patch the users)
    monkeypatch.setattr("db.repository.annotations.BUSY_TRY_MS", 100)
    eng = make_engine(f"sqlite:///{path}")
    holder = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock ...

    def release() -> None:
        time.sleep(0.3)
        holder.execute("COMMIT")  # ... for a while

    t = threading.Thread(target=release)
    t.start()
    submit_annotation(eng, ids[10], user, ["O", "B-PER"])  # retried until the lock is free
    t.join()
    holder.execute("BEGIN IMMEDIATE")  # now the lock is never released
    with pytest.raises(DatabaseBusyError, match="not saved"):
        submit_annotation(eng, ids[11], user, ["O", "B-PER"])
    holder.execute("ROLLBACK")
    holder.close()
    eng.dispose()
    assert _labels(f"sqlite:///{path}") == 6


def test_uploads_over_the_size_limit_and_deep_json_are_refused(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "cwal.sqlite3"
    _filled(path)
    eng = make_engine(f"sqlite:///{path}")
    monkeypatch.setenv("CWAL_MAX_UPLOAD_MB", "0.001")  # 1,048 bytes
    big = b"".join(b"tok O\n\n" for _ in range(200))  # 1,400 bytes
    with pytest.raises(CorpusError, match="over the upload limit of 0 MB") as err:
        import_bytes(eng, 1, big, "big.conll")
    assert err.value.path == "big.conll"
    monkeypatch.delenv("CWAL_MAX_UPLOAD_MB")
    deep = b'{"tokens": ["a"], "tags": ["O"]}\n{"tokens": ["b"], "x": ' + b"[" * 50_000
    deep += b"]" * 50_000 + b"}\n"
    with pytest.raises(CorpusError, match="nested deeper than 32") as err:
        import_bytes(eng, 1, deep, "deep.jsonl")
    assert err.value.line == 2
    assert len(sentence_ids(eng, 1)) == 300  # nothing added
    eng.dispose()


def test_each_use_of_a_pooled_connection_waits_as_long_as_it_asked(tmp_path: Path) -> None:
    """SQLite's busy timeout belongs to the connection, which the pool hands to the next user:
    an annotator's short per-try wait must not stay for the next reader or default writer (the
    recorder), nor a default 60 s wait for the next annotator."""
    eng = make_engine(f"sqlite:///{tmp_path / 'cwal.sqlite3'}")

    def busy(conn) -> int:
        return conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one()

    def raw(conn) -> int:
        return id(conn.connection.dbapi_connection)

    uses = [
        (lambda: write_transaction(eng, busy_ms=2000), 2000),  # an annotator's submit
        (lambda: read_transaction(eng), SQLITE_BUSY_TIMEOUT_MS),  # then a reader
        (lambda: write_transaction(eng, busy_ms=2000), 2000),
        (lambda: write_transaction(eng), SQLITE_BUSY_TIMEOUT_MS),  # then the recorder
        (lambda: write_transaction(eng, busy_ms=150), 150),
        (eng.connect, SQLITE_BUSY_TIMEOUT_MS),  # a plain (autobegun) read
        (lambda: write_transaction(eng, busy_ms=2000), 2000),
    ]
    seen = set()
    try:
        for use, wanted in uses:
            with use() as conn:
                assert busy(conn) == wanted
                seen.add(raw(conn))
        assert len(seen) == 1  # one pooled connection served every use
    finally:
        eng.dispose()
