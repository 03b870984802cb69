"""Online backups and restores of the store (``python -m cwal backup / restore / check``).

SQLite: a backup is a consistent copy taken through SQLite's online backup API while the app
keeps running (annotators are not stopped); it is written to a temporary file, checked with
``PRAGMA quick_check`` and only then renamed into place. A restore replaces the database file
with a checked backup while the app is stopped, keeping the replaced file beside it (nothing is
deleted). PostgreSQL backups are the server's business: the error says how (``pg_dump``).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine

from cwal.errors import CwalError
from db.engine import DatabaseDamagedError, check_integrity, data_home, make_engine, sqlite_path

PG_HINT = (
    "backups of a PostgreSQL store are taken by the server's tools: "
    "'pg_dump --format=custom --file=cwal.dump URL', restored with 'pg_restore --clean -d URL "
    "cwal.dump'"
)


class BackupError(CwalError):
    """A backup or restore that cannot be done (PostgreSQL store, missing file, bad backup)."""


def default_backup_path(now: datetime | None = None) -> Path:
    """``CWAL_HOME/backups/cwal-YYYYmmdd-HHMMSS.sqlite3``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return data_home() / "backups" / f"cwal-{stamp}.sqlite3"


def _database_file(engine: Engine) -> Path:
    path = sqlite_path(engine)
    if path is None:
        if engine.url.get_backend_name() == "postgresql":
            raise BackupError(PG_HINT)
        raise BackupError("an in-memory database has no file to back up or restore")
    return path


def _check_file(path: Path) -> None:
    """``quick_check`` of a SQLite file opened read-only (DatabaseDamagedError when it fails)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise DatabaseDamagedError(str(path), str(exc)) from None
    if rows != ["ok"]:
        raise DatabaseDamagedError(str(path), "; ".join(rows))


def backup(engine: Engine, dest: str | os.PathLike | None = None) -> Path:
    """Copy the live SQLite store to ``dest`` (default :func:`default_backup_path`) without
    stopping writers; returns the checked backup's path. An existing ``dest`` is refused."""
    _database_file(engine)
    target = Path(dest) if dest is not None else default_backup_path()
    if target.exists():
        raise BackupError(f"{target} already exists; choose another file")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    raw = engine.raw_connection()
    try:
        out = sqlite3.connect(partial)
        try:
            raw.driver_connection.backup(out, pages=4096)
            out.execute("PRAGMA journal_mode = DELETE")
        finally:
            out.close()
    finally:
        raw.close()
    try:
        _check_file(partial)
    except DatabaseDamagedError:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return target


def restore(source: str | os.PathLike, url: str | None = None) -> Path | None:
    """Replace the database at ``url`` (default: the configured one) by the backup ``source``.

    Run it with the app stopped. The backup is checked first; the replaced file (if any) is kept
    as ``<name>.replaced-<time>`` and its path returned.
    """
    src = Path(source)
    if not src.is_file():
        raise BackupError(f"{src}: no such backup file")
    _check_file(src)
    engine = make_engine(url)
    try:
        target = _database_file(engine)
    finally:
        engine.dispose()
    kept = None
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    if target.exists():
        kept = target.with_name(f"{target.name}.replaced-{stamp}")
        os.replace(target, kept)
    for suffix in ("-wal", "-shm"):
        side = target.with_name(target.name + suffix)
        if side.exists():
            os.replace(side, side.with_name(f"{side.name}.replaced-{stamp}"))
    partial = target.with_name(target.name + ".restoring")
    with open(src, "rb") as reader, open(partial, "wb") as writer:
        while block := reader.read(1 << 20):
            writer.write(block)
        writer.flush()
        os.fsync(writer.fileno())
    os.replace(partial, target)
    return kept


def check(url: str | None = None) -> str:
    """One line on the store's health: ``quick_check`` for SQLite (raises when damaged)."""
    engine = make_engine(url)
    try:
        path = sqlite_path(engine)
        if path is None:
            return f"{engine.url.render_as_string(hide_password=True)}: checked by the server"
        if not path.exists():
            raise BackupError(f"{path}: no database file yet")
        check_integrity(engine)
        return f"{path}: ok"
    finally:
        engine.dispose()
