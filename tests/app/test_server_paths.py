"""No server file path reaches a page: a damaged database is explained without its path."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.conftest import REPO
from tests.db.test_db_durability import _filled


def test_a_damaged_database_is_explained_without_its_path(tmp_path: Path, monkeypatch) -> None:
    from ui import state

    path = tmp_path / "cwal.sqlite3"
    _filled(path)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    monkeypatch.setenv("CWAL_DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.setenv("CWAL_HOME", str(tmp_path))
    state._engine.clear()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
    (error,) = at.error
    assert "damaged" in error.value and "cwal restore" in error.value
    assert str(tmp_path) not in error.value and "sqlite3" not in error.value
    state._engine.clear()
