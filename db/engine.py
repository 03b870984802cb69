"""Where the store lives and how to connect: URL resolution, engine set-up, migrations, transactions.

``CWAL_DATABASE_URL`` selects the database; without it a SQLite file under ``CWAL_HOME`` (default
``~/.cwal``) is used. SQLite runs in WAL mode with ``synchronous=FULL`` (a confirmed write survives
power loss), foreign keys and a busy timeout; every write transaction starts with ``BEGIN
IMMEDIATE`` so that writers queue instead of failing on a lock upgrade, and ``open_database``
runs ``PRAGMA quick_check`` first, so a damaged file stops the start with a clear message
(``DatabaseDamagedError``) instead of losing writes later. PostgreSQL is reached through psycopg 3.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DatabaseError, DisconnectionError

from cwal.errors import CwalError

if TYPE_CHECKING:  # alembic is imported only when migrating (it is slow to import)
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 60_000
_SCHEMA_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
# psycopg prepares a statement after 5 runs, and PostgreSQL then switches to a generic plan
# when its estimate looks no worse: on a young table (statistics of an empty one) that plan
# scanned the whole pool for every hand-out (100 ms instead of 1). Plans stay per-call.
PG_PLANS = "-cplan_cache_mode=force_custom_plan"
PG_PING_IDLE_S = 10.0
"""A pooled PostgreSQL connection idle this long is pinged before use (a server restart or a
dropped link is found then); one in steady use is not (a round trip less per checkout)."""
_IDLE_SINCE = "cwal_idle_since"
_WRITE = "cwal_write"
_BUSY_MS = "cwal_busy_ms"


def data_home() -> Path:
    """The data folder: ``CWAL_HOME`` or ``~/.cwal`` (created on demand)."""
    return Path(os.environ.get("CWAL_HOME") or Path.home() / ".cwal")


def database_url() -> str:
    """The configured URL: ``CWAL_DATABASE_URL``, else a SQLite file in :func:`data_home`."""
    url = os.environ.get("CWAL_DATABASE_URL")
    if url:
        return url
    return f"sqlite:///{data_home() / 'cwal.sqlite3'}"


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's own handling is off), so that
    # DDL is transactional and write transactions can be IMMEDIATE.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode = WAL")
    # FULL syncs the WAL at every commit: a submit the annotator saw confirmed survives power
    # loss too (NORMAL survives a process crash but may drop the last commits on power loss).
    cursor.execute("PRAGMA synchronous = FULL")
    cursor.close()


class DatabaseDamagedError(CwalError):
    """The database file fails SQLite's integrity check (truncated, overwritten, bit-flipped)."""

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(
            f"the database {where} is damaged ({problem}); nothing was written to it. Restore "
            f"the last backup with 'python -m cwal restore BACKUP', or move the file away to "
            f"start with an empty database"
        )


def sqlite_path(engine: Engine) -> Path | None:
    """The file of a SQLite engine (None for PostgreSQL and in-memory databases)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    if url.database.startswith("file:"):
        return None
    return Path(url.database).expanduser()


def check_integrity(engine: Engine) -> None:
    """``PRAGMA quick_check`` on a SQLite file (structure of every page and index; seconds for a
    million sentences); raises ``DatabaseDamagedError`` naming the file and the first problem."""
    path = sqlite_path(engine)
    if path is None:
        return
    try:
        with engine.connect() as conn:
            rows = [r[0] for r in conn.exec_driver_sql("PRAGMA quick_check(5)")]
    except DatabaseError as exc:
        raise DatabaseDamagedError(str(path), str(exc.orig)) from None
    if rows != ["ok"]:
        raise DatabaseDamagedError(str(path), "; ".join(rows))


def _sqlite_on_begin(conn: Connection) -> None:
    options = conn.get_execution_options()
    write = options.get(_WRITE, False)
    # Every transaction waits as long as its user asked: an annotator's write less per try (see
    # write_transaction), everything else SQLITE_BUSY_TIMEOUT_MS. The timeout belongs to the
    # pooled DBAPI connection, which the next user gets as the last one left it, so it is set
    # whenever it differs from what this use wants -- only then: a statement per transaction
    # cost ~2 ms under load (bench/service.py).
    busy = int(options.get(_BUSY_MS, SQLITE_BUSY_TIMEOUT_MS))
    info = conn.connection.info
    if info.get(_BUSY_MS, SQLITE_BUSY_TIMEOUT_MS) != busy:
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {busy}")
        info[_BUSY_MS] = busy
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _mark_idle(_dbapi_connection: Any, record: Any) -> None:
    record.info[_IDLE_SINCE] = time.monotonic()


def _ping_if_idle(dialect: Any, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """PostgreSQL: ping a pooled connection that sat idle for ``PG_PING_IDLE_S`` before handing
    it out; a dead one is replaced (the pool retries with a new connection). A busy pool's
    connections skip the round trip that ``pool_pre_ping`` paid on every checkout."""
    since = record.info.get(_IDLE_SINCE)
    if since is None or time.monotonic() - since < PG_PING_IDLE_S:
        return
    try:
        alive = dialect.do_ping(dbapi_connection)
    except Exception as exc:  # noqa: BLE001 - any failure means the connection is unusable
        raise DisconnectionError(f"pooled connection failed its ping: {exc}") from exc
    if not alive:
        raise DisconnectionError("pooled connection failed its ping")


def make_engine(url: str | None = None, *, schema: str | None = None, echo: bool = False) -> Engine:
    """An engine for ``url`` (default :func:`database_url`), configured for concurrent use.

    ``schema`` (PostgreSQL only) puts every table in that schema through the ``search_path``;
    tests use it to isolate runs from each other.
    """
    url_obj = make_url(url or database_url())
    backend = url_obj.get_backend_name()
    if backend == "sqlite":
        if schema is not None:
            raise ValueError("schema is only supported on PostgreSQL")
        database = url_obj.database
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url_obj,
            echo=echo,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        )
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    if backend == "postgresql":
        if url_obj.get_driver_name() in ("", "psycopg2"):
            url_obj = url_obj.set(drivername="postgresql+psycopg")
        options = [] if os.environ.get("CWAL_BENCH_GENERIC_PLANS") else [PG_PLANS]
        if schema is not None:
            if not _SCHEMA_RE.match(schema):
                raise ValueError(f"invalid schema name {schema!r}")
            options.append(f"-csearch_path={schema}")
        connect_args: dict[str, Any] = {"options": " ".join(options)} if options else {}
        engine = create_engine(url_obj, echo=echo, connect_args=connect_args)
        event.listen(engine.pool, "checkin", _mark_idle)
        event.listen(engine.pool, "checkout", functools.partial(_ping_if_idle, engine.dialect))
        return engine
    raise ValueError(f"unsupported database {backend!r}: use sqlite or postgresql")


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection inside a (deferred) transaction that is rolled back at the end."""
    with engine.connect() as conn, conn.begin():
        yield conn


@contextmanager
def write_transaction(engine: Engine, *, busy_ms: int | None = None) -> Iterator[Connection]:
    """A connection inside a write transaction: committed when the block ends, else rolled back.

    On SQLite it takes the database write lock up front (``BEGIN IMMEDIATE``), which serializes
    writers and makes read-then-write sequences atomic. ``busy_ms`` (SQLite) bounds the wait for
    the lock before "database is locked" (default ``SQLITE_BUSY_TIMEOUT_MS``): annotators' writes
    pass a shorter one and retry with a bounded backoff (``retry_busy``). (Polling from Python
    every few ms instead was measured: no better under load, bench/service.py import cells.)
    (A lock of the process's own, taken before ``BEGIN IMMEDIATE`` so that a released write lock
    wakes the next writer at once instead of at the busy handler's next poll, was measured too:
    submit p95 66.7 / 31.5 ms with it, 32.2 / 29.1 without, bench/service.py --quick, SQLite.)
    """
    with engine.connect() as conn:
        conn.execution_options(**{_WRITE: True})
        if busy_ms is not None:
            conn.execution_options(**{_BUSY_MS: busy_ms})
        with conn.begin():
            yield conn


def _alembic_config(conn: Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = conn
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to ``revision``; the app calls this at start (idempotent)."""
    from alembic import command

    with engine.connect() as conn:
        conn.execution_options(**{_WRITE: True})
        command.upgrade(_alembic_config(conn), revision)
        conn.commit()


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Revert migrations down to ``revision`` (``base`` drops every table)."""
    from alembic import command

    with engine.connect() as conn:
        conn.execution_options(**{_WRITE: True})
        command.downgrade(_alembic_config(conn), revision)
        conn.commit()


def current_revision(engine: Engine) -> str | None:
    """The migration revision the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def open_database(url: str | None = None, *, schema: str | None = None) -> Engine:
    """The engine the app uses: configured from the environment, checked (SQLite) and migrated
    to head. A damaged SQLite file raises ``DatabaseDamagedError`` before anything is written."""
    engine = make_engine(url, schema=schema)
    path = sqlite_path(engine)
    if path is not None and path.exists() and path.stat().st_size > 0:
        check_integrity(engine)
    try:
        upgrade(engine)
    except DatabaseError as exc:
        if path is None:
            raise
        raise DatabaseDamagedError(str(path), str(exc.orig)) from None
    return engine
