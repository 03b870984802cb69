"""Who is signed in, and what they may do: the gate every page and every action goes through.

The browser session keeps only the user's id and the sign-in session's token (also in the
``cwal_session`` cookie, so that a refresh or a direct URL stays signed in); the role is read fresh
from the store on every run and before every lead action, so a demoted or deleted user loses
access at once, and a revoked session (sign-out, password change) signs the browser out.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import streamlit as st

from db import repository as repo
from ui import cookie, state

USER_KEY = state.USER_KEY
TOKEN_KEY = "cw_session_token"  # the sign-in session's token (``db.repository.sessions``)
FAILURES_KEY = "cw_login_failures"
P = ParamSpec("P")
R = TypeVar("R")


class Forbidden(PermissionError):
    """The signed-in user's role does not allow this action."""


def current_user() -> repo.UserInfo | None:
    """The signed-in user, fresh from the store (None when signed out, deleted, or when the
    sign-in session was revoked or expired). A browser session without a user is signed in
    from the sign-in cookie it brought (a refresh, a direct URL, a new tab)."""
    user_id = st.session_state.get(USER_KEY)
    token = st.session_state.get(TOKEN_KEY)
    if user_id is None:
        token = cookie.read()
        user = repo.session_user(state.engine(), token)
        if user is not None:
            st.session_state[USER_KEY], st.session_state[TOKEN_KEY] = user.id, token
        return user
    if token is not None:  # signed in through the form or the cookie: the session must live
        user = repo.session_user(state.engine(), token)
        if user is None or user.id != user_id:
            _forget()
            return None
        return user
    try:
        return repo.get_user(state.engine(), user_id)
    except repo.NotFoundError:
        st.session_state.pop(USER_KEY, None)
        return None


def _remember(user_id: int) -> None:
    """Sign ``user_id`` in: a new sign-in session, kept by this browser session and the cookie."""
    st.session_state[TOKEN_KEY] = repo.create_session(state.engine(), user_id)
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
    return not repo.list_users(state.engine())


def sign_in(name: str, password: str) -> repo.UserInfo | None:
    """Check the credentials and remember the user in this browser session; None on failure.

    Repeated failures in one session are slowed down (one extra second per failure after 3).
    """
    failures = st.session_state.get(FAILURES_KEY, 0)
    if failures >= 3:
        time.sleep(min(failures - 2, 10))
    user = repo.authenticate(state.engine(), name, password)
    if user is None:
        st.session_state[FAILURES_KEY] = failures + 1
        return None
    st.session_state[FAILURES_KEY] = 0
    _remember(user.id)
    return user


def sign_out() -> None:
    """End the sign-in session, give the user's leased sentences back to the pool, and forget
    everything this browser session held for them (the cookie is cleared on the next run)."""
    engine = state.engine()
    repo.revoke_session(engine, st.session_state.get(TOKEN_KEY))
    user_id = st.session_state.get(USER_KEY)
    if user_id is not None:
        repo.release_leases(engine, user_id)
    _forget()


def create_first_lead(name: str, password: str) -> repo.UserInfo:
    """Create the first lead on an empty database and sign them in (refused once a user exists)."""
    if not needs_setup():
        raise Forbidden("setup is over: a user already exists; sign in instead")
    user_id = repo.add_user(state.engine(), name, password, role="lead")
    _remember(user_id)
    return repo.get_user(state.engine(), user_id)


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
    return repo.project_role(state.engine(), project_id, user.id)


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
    role = None if project is None else repo.project_role(state.engine(), project.id, user.id)
    if role not in roles:
        st.error(refusal)
        st.stop()
    return user, project


def require_project_lead() -> tuple[repo.UserInfo, repo.ProjectInfo | None]:
    """The signed-in user and the current project when they lead it; else the page stops."""
    return require_project_role("lead")


def _fresh_actor(args: tuple, name: str) -> repo.UserInfo:
    actor = args[0] if args else None
    if not isinstance(actor, repo.UserInfo):
        raise Forbidden(f"{name} needs the acting user as its first argument")
    try:
        return repo.get_user(state.engine(), actor.id)
    except repo.NotFoundError:
        raise Forbidden("the acting user no longer exists") from None


def lead_only(func: Callable[P, R]) -> Callable[P, R]:
    """Refuse the action (``Forbidden``) unless its first argument is a user who is a lead now
    (an administrator: accounts, new projects)."""

    @functools.wraps(func)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        fresh = _fresh_actor(args, func.__name__)
        if fresh.role != repo.ADMIN_ROLE:
            raise Forbidden(f"only leads may {func.__name__.replace('_', ' ')}")
        return func(fresh, *args[1:], **kwargs)

    checked.lead_only = True  # type: ignore[attr-defined]
    return checked


def project_role_only(*roles: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Refuse the action unless its first argument is a user whose role on the project given
    as the second argument is one of ``roles`` now (checked against the store at call time)."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            fresh = _fresh_actor(args, func.__name__)
            project_id = args[1] if len(args) > 1 else None
            if not isinstance(project_id, int):
                raise Forbidden(f"{func.__name__} needs the project id as its second argument")
            if repo.project_role(state.engine(), project_id, fresh.id) not in roles:
                raise Forbidden(
                    f"only a project's {' or '.join(roles)} may {func.__name__.replace('_', ' ')}"
                )
            return func(fresh, *args[1:], **kwargs)

        checked.lead_only = "lead" in roles and len(roles) == 1  # type: ignore[attr-defined]
        checked.project_roles = roles  # type: ignore[attr-defined]
        return checked

    return decorate


project_lead_only = project_role_only("lead")
