"""Leases follow the browser: a user's leased sentences go back to the pool soon after their last
browser session ends (the tab closed, the browser quit, the network gone), not when the leases
expire 15 minutes later.

Every script run records which Streamlit session belongs to which signed-in user
(:func:`register`). A daemon thread (:func:`start`, once per server process) asks the runtime
every ``SWEEP_S`` seconds which of those sessions still have a browser connected; a session seen
disconnected on two sweeps in a row has ended (a refresh reconnects, or opens a new session that
registers, within a second). When none of a user's sessions is left, their leases are released.
Sign-out releases them at once (``ui.auth.sign_out``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import streamlit as st

from cwal.supervisor import SUPERVISOR
from db import Database, database_url
from db import repository as repo
from ui import state

log = logging.getLogger(__name__)
SWEEP_S = 10.0  # a closed tab's leases are free 10-20 s later
_LOCK = threading.Lock()
_SESSIONS: dict[str, int] = {}  # Streamlit session id -> signed-in user id
_GONE: set[str] = set()  # sessions seen disconnected on the last sweep


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def register(user_id: int | None) -> None:
    """Record that this browser session is signed in as ``user_id`` (None: signed out)."""
    session = _session_id()
    if session is None:
        return
    with _LOCK:
        if user_id is None:
            _SESSIONS.pop(session, None)
        else:
            _SESSIONS[session] = user_id
        _GONE.discard(session)


def sweep(engine: Database, connected: Callable[[str], bool]) -> list[int]:
    """One pass: forget sessions found disconnected twice in a row; release the leases of every
    user left without a session. The users whose leases were released."""
    with _LOCK:
        down = {s for s in _SESSIONS if not connected(s)}
        ended = down & _GONE
        _GONE.clear()
        _GONE.update(down - ended)
        users = {_SESSIONS.pop(s) for s in ended}
        users -= set(_SESSIONS.values())  # another tab of theirs is still open
    for user_id in sorted(users):
        released = repo.release_leases(engine, user_id)
        log.info("user %d's last browser session ended: %d leases released", user_id, released)
    return sorted(users)


def _connected(session_id: str) -> bool:
    from streamlit import runtime

    return runtime.get_instance().is_active_session(session_id)


def _loop(engine: Database, stop: threading.Event) -> None:
    from streamlit import runtime

    while not stop.wait(SWEEP_S):
        if not runtime.exists():  # a bare script or AppTest: no browser sessions to follow
            continue
        try:
            sweep(engine, _connected)
        except Exception:  # a database hiccup: the next sweep tries again
            log.exception("releasing the leases of ended sessions failed")


@st.cache_resource(show_spinner=False)
def _started(url: str, _engine: Database) -> threading.Event:
    stop = threading.Event()
    SUPERVISOR.start("cwal-presence", _loop, _engine, stop, stop=stop.set)
    return stop


def start() -> threading.Event:
    """Start the sweeping thread unless this process already did (for this database); its stop
    event."""
    return _started(database_url(), state.engine())
