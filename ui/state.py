"""Process-wide resources (the migrated engine, one live session per project) and per-browser
session keys. Heavy objects are ``st.cache_resource``; nothing a user writes is ever cached."""

from __future__ import annotations

import logging

import streamlit as st

from cwal.live import ProjectSession
from db import Database, database_url, open_database
from db import repository as repo
from db.engine import DatabaseDamagedError
from db.repository.views import idle_gate
from db.service import Service
from db.store import SqlStore, close_session, live_session

LOG = logging.getLogger(__name__)
PROJECT_KEY = "cw_project_id"
USER_KEY = "cw_user_id"  # the signed-in user's id (``ui.auth`` sets and checks it)


@st.cache_resource(show_spinner="Opening the database…")
def _engine(url: str) -> Database:
    return open_database(url)


def engine() -> Database:
    """The engine for ``CWAL_DATABASE_URL`` (migrated to head on first use in this process)."""
    return _engine(database_url())


def service() -> Service:
    """The app's actions (``db.service``) over this process's store; settings or file changes
    restart the project's live session."""
    return Service(engine(), restart=reload_live)


def check_database() -> None:
    """Open the store once; a damaged database file stops every page with what to do."""
    try:
        engine()
    except DatabaseDamagedError as exc:
        LOG.error("cwal cannot start: %s", exc)  # the server's log names the file
        st.error(
            f"cwal cannot start: the database is damaged ({exc.problem}); nothing was written "
            "to it. The server's log names the file: restore the last backup with "
            "'python -m cwal restore BACKUP', or move the file away to start with an empty one."
        )  # no server path on the page
        st.stop()


def open_live_session(engine: Database, project_id: int) -> ProjectSession:
    """A new live session of the project over the SQL store (``live`` keeps one per project)."""
    # its idle feature extraction waits while a page is run or drawn (or the lead views warmed)
    return ProjectSession(SqlStore(engine), project_id, idle_gate=idle_gate)


def live(project_id: int) -> ProjectSession:
    """The one live session of a project in this process (``db.store.live_session``: shared by
    every browser session, and the lead pages read its model). After a lead renamed, merged or
    deleted types (in any process) a new session is built from the rewritten log."""
    current = engine()
    return live_session(current, project_id, lambda: open_live_session(current, project_id))


def reload_live(project_id: int) -> None:
    """Close the project's live session; the next page that needs it opens a fresh one (after
    new files or new settings, which a running session does not pick up)."""
    close_session(engine(), project_id)


def projects() -> list[repo.ProjectInfo]:
    """The projects the signed-in user may open (every one for an administrator), fresh from
    the store; none when signed out."""
    user_id = st.session_state.get(USER_KEY)
    return [] if user_id is None else service().projects_of(user_id)


def current_project() -> repo.ProjectInfo | None:
    """The project chosen in the sidebar (the first one by default), or None when none exists."""
    available = projects()
    if not available:
        return None
    chosen = st.session_state.get(PROJECT_KEY)
    for project in available:
        if project.id == chosen:
            return project
    st.session_state[PROJECT_KEY] = available[0].id
    return available[0]


def choose_project(project_id: int) -> None:
    """Make ``project_id`` the current project of this browser session."""
    st.session_state[PROJECT_KEY] = project_id
