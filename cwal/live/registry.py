"""One session per project per process: annotators and lead pages of the web app share it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from cwal.live.session import ProjectSession
from cwal.supervisor import SUPERVISOR

_sessions: dict[tuple[Hashable, int], tuple[int, ProjectSession]] = {}
_lock = threading.Lock()


def get_session(
    key: Hashable, project_id: int, factory: Callable[[], ProjectSession], revision: int = 0
) -> ProjectSession:
    """The process's session for ``(key, project_id)`` (``key`` names the database), built by
    ``factory()`` the first time. Concurrent callers get the same session. A session built for
    another ``revision`` (the project's label types changed since) is closed and replaced."""
    with _lock:
        found = _sessions.get((key, project_id))
        if found is not None and found[0] == revision:
            return found[1]
        session = factory()
        _sessions[(key, project_id)] = (revision, session)
    if found is not None:
        found[1].close()
    return session


def drop_session(key: Hashable, project_id: int) -> None:
    """Close the project's session if there is one; the next ``get_session`` builds a fresh one
    (after new files or new settings, which a running session does not pick up)."""
    with _lock:
        found = _sessions.pop((key, project_id), None)
    if found is not None:
        found[1].close()


def sessions() -> list[ProjectSession]:
    """Every open session of the process."""
    with _lock:
        return [session for _, session in _sessions.values()]


def close_all(timeout: float = 30.0) -> None:
    """Stop every session's background threads and forget the sessions (tests, shutdown;
    ``timeout`` 0: ask them to stop without waiting, as the supervisor's stop does)."""
    with _lock:
        found = list(_sessions.values())
        _sessions.clear()
    for _, session in found:
        session.close(timeout=timeout)


SUPERVISOR.on_stop(lambda: close_all(timeout=0.0))
