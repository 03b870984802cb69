"""Fixtures for the app tests: a fresh SQLite store per test, users, the demo project, AppTest."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from db import open_database
from db import repository as repo

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def _kernels_ready(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """AppTest runs serve from the live session at once: the model's code is taken as prepared
    (``ui.prepare``'s own tests and the browser tests, on a real server, prepare it for real)."""
    from ui import prepare

    monkeypatch.setattr(prepare, "start", lambda: None)
    was = prepare._READY.is_set()
    prepare._READY.set()
    yield
    if not was:
        prepare._READY.clear()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    """An empty, migrated store that the app (``CWAL_DATABASE_URL``) and the test share."""
    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    monkeypatch.setenv("CWAL_DATABASE_URL", url)
    monkeypatch.setenv("CWAL_HOME", str(tmp_path))
    engine = open_database(url)
    yield SimpleNamespace(url=url, engine=engine, tmp=tmp_path)
    from cwal.live import close_all
    from ui import state

    close_all()  # closes the live sessions (their background threads) of this test
    state._engine.clear()
    engine.dispose()


@pytest.fixture
def users(store: SimpleNamespace) -> SimpleNamespace:
    """A lead and an annotator."""
    lead = repo.add_user(store.engine, "lena", PASSWORD, role="lead")
    ann = repo.add_user(store.engine, "arno", PASSWORD, role="annotator")
    return SimpleNamespace(
        lead=repo.get_user(store.engine, lead), annotator=repo.get_user(store.engine, ann)
    )


@pytest.fixture
def fake_live(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Replace the live service by the repository-backed stand-in; returns the sessions made."""
    from tests.app.fakes import FakeSession
    from ui import state

    made: dict = {}

    def open_fake(engine, project_id):
        made[project_id] = FakeSession(engine, project_id)
        return made[project_id]

    monkeypatch.setattr(state, "open_live_session", open_fake)
    return made


@pytest.fixture
def demo(store: SimpleNamespace, users: SimpleNamespace) -> int:
    """The demo project's id."""
    from db.service import Service

    project_id = Service(store.engine).create_demo_project(users.lead)
    repo.set_member(store.engine, project_id, users.annotator.id, "annotator")
    return project_id


def app(page: str = "app.py", user: repo.UserInfo | None = None) -> AppTest:
    """An AppTest of ``page`` (a path under the repository), signed in as ``user``."""
    at = AppTest.from_file(str(REPO / page), default_timeout=60)
    if user is not None:
        at.session_state["cw_user_id"] = user.id
    return at


def editor_data(at: AppTest) -> dict:
    """The JSON payload the token editor was mounted with in the last run."""
    import json

    from ui.editor import NAME  # other components (``ui.preload``) may be mounted too

    found = [e for e in at.get("bidi_component") if e.proto.component_name == NAME]
    assert len(found) == 1, f"expected one token editor, found {len(found)}"
    proto = found[0].proto
    kind = proto.WhichOneof("data")
    return json.loads(proto.mixed.json if kind == "mixed" else proto.json)
