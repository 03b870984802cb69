"""A one-page Streamlit app for the editor's browser tests: the real token editor and the real
annotate controller, fed by the repository-backed stand-in live service (no model to train).

    CWAL_DATABASE_URL=... CWAL_TEST_USER=<id> streamlit run tests/app/editor_app.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from db import repository as repo  # noqa: E402
from tests.app.fakes import FakeSession  # noqa: E402
from ui import state  # noqa: E402
from ui.annotate import Annotator  # noqa: E402
from ui.editor import token_editor  # noqa: E402


@st.cache_resource
def service(project_id: int) -> FakeSession:
    session = FakeSession(state.engine(), project_id)
    session.predicts = bool(os.environ.get("CWAL_TEST_PREDICTS"))
    return session


user = repo.get_user(state.engine(), int(os.environ["CWAL_TEST_USER"]))
st.session_state[state.USER_KEY] = user.id  # the projects listed are this user's
project = state.projects()[0]
annotator = Annotator(service(project.id), user, project, st.session_state)


def on_action() -> None:
    annotator.handle((st.session_state.get("editor") or {}).get("action"))


token_editor(annotator.payload(), key="editor", on_action=on_action)
