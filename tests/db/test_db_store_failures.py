"""The live store speaks the store's errors only: a database failure under any of its methods
reaches the live service (and the annotate screen) as ``StoreFailedError``, its message free of
SQL, the driver's error kept as the cause and in the log; errors raised on purpose pass as they
are."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from db import open_database
from db import repository as repo
from db.store import SqlStore


def test_a_database_failure_becomes_a_store_error_without_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = open_database(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    store = SqlStore(engine)

    def broken(*args, **kwargs):
        raise OperationalError("INSERT INTO annotations ...", {}, Exception("disk I/O error"))

    monkeypatch.setattr(repo, "submit_annotation", broken)
    failing = pytest.raises(repo.StoreFailedError)
    with caplog.at_level(logging.ERROR, logger="db.store"), failing as failed:
        store.submit(1, 1, ["O"], 1.0)
    assert "INSERT" not in str(failed.value) and "server log" in str(failed.value)
    assert isinstance(failed.value.__cause__, OperationalError)
    assert "disk I/O error" in caplog.text
    with pytest.raises(repo.NotFoundError):  # on purpose: unchanged
        store.settings(12345)
    engine.dispose()
