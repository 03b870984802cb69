"""Who is signed in, and what they may do: the gate every page and every action goes through.

The browser session keeps only the user's id; the role is read fresh from the store on every run
and before every lead action, so a demoted or deleted user loses access at once.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import streamlit as st

from db import repository as repo
from ui import state

USER_KEY = "cw_user_id"
FAILURES_KEY = "cw_login_failures"
P = ParamSpec("P")
R = TypeVar("R")


class Forbidden(PermissionError):
    """The signed-in user's role does not allow this action."""


def current_user() -> repo.UserInfo | None:
    """The signed-in user, fresh from the store (None when signed out or deleted)."""
    user_id = st.session_state.get(USER_KEY)
    if user_id is None:
        return None
    try:
        return repo.get_user(state.engine(), user_id)
    except repo.NotFoundError:
        st.session_state.pop(USER_KEY, None)
        return None


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
    st.session_state[USER_KEY] = user.id
    return user


def sign_out() -> None:
    """Forget the user and everything this browser session held for them."""
    for key in list(st.session_state.keys()):
        del st.session_state[key]


def create_first_lead(name: str, password: str) -> repo.UserInfo:
    """Create the first lead on an empty database and sign them in (refused once a user exists)."""
    if not needs_setup():
        raise Forbidden("setup is over: a user already exists; sign in instead")
    user_id = repo.add_user(state.engine(), name, password, role="lead")
    st.session_state[USER_KEY] = user_id
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


def lead_only(func: Callable[P, R]) -> Callable[P, R]:
    """Refuse the action (``Forbidden``) unless its first argument is a user who is a lead now."""

    @functools.wraps(func)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        actor = args[0] if args else None
        if not isinstance(actor, repo.UserInfo):
            raise Forbidden(f"{func.__name__} needs the acting user as its first argument")
        try:
            fresh = repo.get_user(state.engine(), actor.id)
        except repo.NotFoundError:
            raise Forbidden("the acting user no longer exists") from None
        if fresh.role != "lead":
            raise Forbidden(f"only leads may {func.__name__.replace('_', ' ')}")
        return func(fresh, *args[1:], **kwargs)

    checked.lead_only = True  # type: ignore[attr-defined]
    return checked
