"""The sign-in cookie: Streamlit reads it (``st.context.cookies``, sent with the page's first
request); this invisible element writes or clears it in the browser, because Streamlit has no
call that sets a cookie. The token is the only thing it carries (``db.repository.sessions``)."""

from __future__ import annotations

import streamlit as st

NAME = "cwal_session"
KEY = "cw_cookie"

_JS = """
export default function (component) {
  const d = component.data || {};
  if (!d.name) return undefined;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  const now = document.cookie.split("; ").find((c) => c.startsWith(d.name + "="));
  const value = now ? now.slice(d.name.length + 1) : "";
  if (d.token && value !== d.token) {
    document.cookie = `${d.name}=${d.token}; Path=/; Max-Age=${d.maxAge}; SameSite=Strict${secure}`;
  } else if (!d.token && value) {
    document.cookie = `${d.name}=; Path=/; Max-Age=0; SameSite=Strict${secure}`;
  }
  return undefined;
}
"""

_component = st.components.v2.component("cwal_cookie", html="<span></span>", js=_JS)


def read() -> str | None:
    """The token the browser sent when this session's page was loaded (None without one)."""
    try:
        return st.context.cookies.get(NAME)
    except Exception:  # no browser request behind this run (a bare script)
        return None


def write(token: str | None, max_age_seconds: int) -> None:
    """Have the browser keep ``token`` (None: forget it) in the sign-in cookie."""
    data = {"name": NAME, "token": token or "", "maxAge": int(max_age_seconds)}
    _component(data=data, key=KEY, height="content")
