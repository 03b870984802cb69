"""One session per project per process: the web app holds this registry (``st.cache_resource``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from cwal.live.session import ProjectSession

_sessions: dict[tuple[Hashable, int], ProjectSession] = {}
_lock = threading.Lock()


def get_session(
    key: Hashable, project_id: int, factory: Callable[[], ProjectSession]
) -> ProjectSession:
    """The process's session for ``(key, project_id)`` (``key`` names the database), built by
    ``factory()`` the first time. Concurrent callers get the same session."""
    with _lock:
        session = _sessions.get((key, project_id))
        if session is None:
            session = _sessions[(key, project_id)] = factory()
        return session


def close_all() -> None:
    """Stop every session's background threads (tests, shutdown)."""
    with _lock:
        sessions = list(_sessions.values())
        _sessions.clear()
    for session in sessions:
        session.close()
