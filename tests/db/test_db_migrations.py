"""Migrations build the schema the models describe, and tear it down again."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, Integer, MetaData, Table, inspect, text

from db.engine import (
    current_revision,
    data_home,
    database_url,
    downgrade,
    make_engine,
    open_database,
    upgrade,
)
from db.models import Base

TABLES = {
    "memberships",
    "label_changes",
    "sign_in_failures",
    "sign_in_sessions",
    "adjudications",
    "guidelines",
    "flags",
    "users",
    "projects",
    "import_batches",
    "sentences",
    "annotations",
    "leases",
    "checkpoints",
    "project_clusters",
    "predictions",
    "simulation_runs",
    "curve_points",
}


def _tables(engine) -> set[str]:
    with engine.connect() as conn:
        return set(inspect(conn).get_table_names()) - {"alembic_version"}


def _diff(engine, metadata: MetaData) -> list:
    with engine.connect() as conn:
        return compare_metadata(MigrationContext.configure(conn), metadata)


def test_upgrade_from_empty_then_downgrade_to_base(backend):
    engine = backend.engine()
    try:
        assert _tables(engine) == set()
        assert current_revision(engine) is None
        upgrade(engine)
        assert _tables(engine) == TABLES
        head = current_revision(engine)
        assert head is not None
        upgrade(engine)  # idempotent: the app runs it at every start
        assert current_revision(engine) == head
        downgrade(engine, "base")
        assert _tables(engine) == set()
        assert current_revision(engine) is None
        upgrade(engine)
        assert _tables(engine) == TABLES
    finally:
        engine.dispose()


def test_models_match_migrations(engine):
    assert _diff(engine, Base.metadata) == []


def test_comparison_detects_a_drift(engine):
    """The comparison above is able to fail: a model with an extra column or table differs."""
    drifted = MetaData(naming_convention=Base.metadata.naming_convention)
    for table in Base.metadata.tables.values():
        table.to_metadata(drifted)
    drifted.tables["users"].append_column(Column("nickname", Integer, nullable=True))
    Table("extra", drifted, Column("id", Integer, primary_key=True))
    kinds = {
        entry[0] if isinstance(entry, tuple) else entry[0][0] for entry in _diff(engine, drifted)
    }
    assert {"add_column", "add_table"} <= kinds


def test_open_database_migrates(backend):
    engine = open_database(backend.url, schema=backend.schema)
    try:
        assert _tables(engine) == TABLES
    finally:
        engine.dispose()


def test_sqlite_connection_settings(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'sub' / 'x.sqlite3'}")
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 10_000
        assert (tmp_path / "sub" / "x.sqlite3").exists()
    finally:
        engine.dispose()


def test_default_url_lives_in_cwal_home(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("CWAL_DATABASE_URL", raising=False)
    monkeypatch.setenv("CWAL_HOME", str(tmp_path / "home"))
    assert data_home() == tmp_path / "home"
    assert database_url() == f"sqlite:///{tmp_path / 'home' / 'cwal.sqlite3'}"
    engine = open_database()
    try:
        assert _tables(engine) == TABLES
        assert (tmp_path / "home" / "cwal.sqlite3").exists()
    finally:
        engine.dispose()
    monkeypatch.setenv("CWAL_DATABASE_URL", "sqlite:///elsewhere.db")
    assert database_url() == "sqlite:///elsewhere.db"


def test_unsupported_backend_and_bad_schema_are_refused():
    with pytest.raises(ValueError, match="unsupported"):
        make_engine("mysql://x@localhost/db")
    with pytest.raises(ValueError, match="schema"):
        make_engine("postgresql+psycopg://u@localhost/db", schema="x; DROP TABLE users")
    with pytest.raises(ValueError, match="schema"):
        make_engine("sqlite:///x.db", schema="s")
