"""Who is signed in, and what they may do: the gate every page and every action goes through.

The browser session keeps only the user's id and the sign-in session's token (also in the
``cwal_session`` cookie, so that a refresh or a direct URL stays signed in); the role is read fresh
from the store on every run and before every lead action, so a demoted or deleted user loses
access at once, and a revoked session (sign-out, password change) signs the browser out.
"""

from __future__ import annotations

import streamlit as st

from db import repository as repo
from db import service
from ui import cookie, state

USER_KEY = state.USER_KEY
TOKEN_KEY = "cw_session_token"  # the sign-in session's token (``db.repository.sessions``)


Forbidden = service.Forbidden  # what a refused action raises (``db.service.guard``)
Throttled = service.Throttled  # too many failed sign-ins (``db.service.accounts``)


def current_user() -> repo.UserInfo | None:
    """The signed-in user, fresh from the store (None when signed out, deleted, or when the
    sign-in session was revoked or expired). A browser session without a user is signed in
    from the sign-in cookie it brought (a refresh, a direct URL, a new tab)."""
    accounts = state.service()
    user_id = st.session_state.get(USER_KEY)
    token = st.session_state.get(TOKEN_KEY)
    if user_id is None:
        token = cookie.read()
        user = accounts.resume(token)
        if user is not None:
            st.session_state[USER_KEY], st.session_state[TOKEN_KEY] = user.id, token
        return user
    if token is not None:  # signed in through the form or the cookie: the session must live
        user = accounts.resume(token)
        if user is None or user.id != user_id:
            _forget()
            return None
        return user
    user = accounts.user(user_id)
    if user is None:
        st.session_state.pop(USER_KEY, None)
    return user


def _remember(user_id: int, token: str) -> None:
    """Keep a signed-in user in this browser session (and, through the cookie, the browser)."""
    st.session_state[TOKEN_KEY] = token
    st.session_state[USER_KEY] = user_id


def _forget() -> None:
    for key in list(st.session_state.keys()):
        del st.session_state[key]


def keep_cookie() -> None:
    """Mount the sign-in cookie's writer (``ui.cookie``): the current token, or none. It is
    mounted signed out too, so that its code is loaded before the sign-in: the cookie is then
    written as the signed-in page arrives, not a second later (a refresh in between signed out)."""
    cookie.write(st.session_state.get(TOKEN_KEY), int(repo.SESSION_DAYS * 86400))


def needs_setup() -> bool:
    """True on a fresh database: no user exists yet, so the first start creates a lead."""
    return state.service().needs_setup()


def client_address() -> str:
    """The browser's address as the server sees it (``unknown`` when Streamlit cannot tell)."""
    try:
        return str(st.context.ip_address or "unknown")
    except Exception:  # noqa: BLE001 - outside a script run (tests) there is no context
        return "unknown"


def sign_in(name: str, password: str) -> repo.UserInfo | None:
    """Check the credentials and remember the user in this browser session; None on failure.
    Failures are throttled per account and per address in the store (``Throttled``)."""
    signed_in = state.service().sign_in(name, password, client_address())
    if signed_in is None:
        return None
    user, token = signed_in
    _remember(user.id, token)
    return user


def sign_out() -> None:
    """End the sign-in session, give the user's leased sentences back to the pool, and forget
    everything this browser session held for them (the cookie is cleared on the next run)."""
    state.service().sign_out(st.session_state.get(TOKEN_KEY), st.session_state.get(USER_KEY))
    _forget()


def create_first_lead(name: str, password: str, token: str) -> repo.UserInfo:
    """Create the first lead with the setup token printed on the server console and sign them
    in (refused once a user exists)."""
    user, token = state.service().create_first_lead(name, password, token)
    _remember(user.id, token)
    return user


def require_user() -> repo.UserInfo:
    """The signed-in user; otherwise the page stops with a notice."""
    user = current_user()
    if user is None:
        st.warning("Please sign in first.")
        st.stop()
    return user


def require_lead() -> repo.UserInfo:
    """The signed-in lead; for anyone else the page stops with a refusal."""
    user = require_user()
    if user.role != "lead":
        st.error("This page is for leads only.")
        st.stop()
    return user


def project_role(user: repo.UserInfo, project_id: int) -> str | None:
    """The user's role on the project, fresh from the store (None for an outsider)."""
    return state.service().project_role(user, project_id)


def require_project_role(
    *roles: str, refusal: str = "This page is for leads only."
) -> tuple[repo.UserInfo, repo.ProjectInfo | None]:
    """The signed-in user and their current project when their role on it is one of ``roles``
    (an administrator has every role); otherwise the page stops with ``refusal``. The project is
    None only for an administrator while no project exists."""
    user = require_user()
    project = state.current_project()
    if project is None and user.role == repo.ADMIN_ROLE:
        return user, None
    role = None if project is None else state.service().project_role(user, project.id)
    if role not in roles:
        st.error(refusal)
        st.stop()
    return user, project


def require_project_lead() -> tuple[repo.UserInfo, repo.ProjectInfo | None]:
    """The signed-in user and the current project when they lead it; else the page stops."""
    return require_project_role("lead")
