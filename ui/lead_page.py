"""The header every lead analysis page shares: refuse non-leads, title, current project, Refresh."""

from __future__ import annotations

import streamlit as st

from db import repository as repo
from ui import auth, state
from ui.safe import md


def open_lead_page(title: str) -> tuple[repo.UserInfo, object]:
    """Stop the page for anyone but a lead, or when there is no project; else (user, project)."""
    user = auth.require_lead()
    project = state.current_project()
    st.title(title)
    if project is None:
        st.info("There is no project yet. Create one on the Projects page.")
        st.stop()
    st.caption(md(project.name))
    st.button("Refresh", icon=":material/refresh:", help="Read the newest labels and model")
    return user, project
