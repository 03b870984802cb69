"""Fixtures of the store tests: every test gets its own empty database on every backend.

SQLite always runs (a file in the test's tmp folder). PostgreSQL runs when
``CWAL_TEST_DATABASE_URL`` is set; each test then works in a fresh schema (reached through the
``search_path``) that is dropped afterwards, so concurrent runs never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text

from db.engine import make_engine, upgrade
from db.models import Base
from db.repository import add_user, create_project

PG_ENV = "CWAL_TEST_DATABASE_URL"
REPO = Path(__file__).resolve().parents[2]


@dataclass
class Backend:
    """An isolated database: ``url`` and ``schema`` let subprocesses connect to the same one."""

    name: str
    url: str
    schema: str | None

    def engine(self) -> Engine:
        return make_engine(self.url, schema=self.schema)


_admin: dict[str, Engine] = {}


def _pg_admin(url: str) -> Engine:
    if url not in _admin:
        _admin[url] = make_engine(url)
    return _admin[url]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """An empty database (no tables yet) on each available backend."""
    if request.param == "sqlite":
        yield Backend("sqlite", f"sqlite:///{tmp_path / 'store.sqlite3'}", None)
        return
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"PostgreSQL tests need {PG_ENV} (e.g. postgresql+psycopg://...)")
    schema = f"cwal_test_{uuid.uuid4().hex[:16]}"
    admin = _pg_admin(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield Backend("postgres", url, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def engine(backend: Backend) -> Iterator[Engine]:
    """A migrated engine on the test's own database."""
    eng = backend.engine()
    upgrade(eng)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture
def people(engine: Engine) -> dict[str, int]:
    """Three users: two annotators and a lead (name -> id)."""
    return {
        "ann": add_user(engine, "ann", "pw-ann"),
        "bob": add_user(engine, "bob", "pw-bob"),
        "lea": add_user(engine, "lea", "pw-lea", role="lead"),
    }


@pytest.fixture
def project(engine: Engine) -> int:
    """An empty chunking project with a closed tag set under strict IOB2."""
    return create_project(
        engine,
        "chunks",
        {"tagset": ["O", "B-NP", "I-NP", "B-VP", "I-VP"], "scheme": "IOB2", "strict_scheme": True},
    )


def conll_text(n: int, start: int = 0) -> str:
    """``n`` distinct 3-token sentences (word pos tag), valid under IOB2, as CoNLL text."""
    out = []
    for i in range(start, start + n):
        out.append(f"w{i}a DT B-NP\nw{i}b NN I-NP\nw{i}c VBZ B-VP\n")
    return "\n".join(out)


@pytest.fixture
def corpus(tmp_path: Path):
    """Writes a CoNLL file of ``n`` sentences and returns its path."""

    def write(n: int, name: str = "corpus.conll", start: int = 0) -> Path:
        path = tmp_path / name
        path.write_text(conll_text(n, start), encoding="utf-8")
        return path

    return write


def db_snapshot(engine: Engine) -> dict[str, list[tuple]]:
    """Every row of every table in key order: an independent view to compare before and after."""
    out: dict[str, list[tuple]] = {}
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            query = select(table).order_by(*table.primary_key)
            out[table.name] = [tuple(row) for row in conn.execute(query)]
    return out


@pytest.fixture
def snapshot():
    """``snapshot(engine)``: every row of every table (see ``db_snapshot``)."""
    return db_snapshot
