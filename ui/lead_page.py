"""The header every lead analysis page shares: refuse non-leads, title, current project, Refresh."""

from __future__ import annotations

import streamlit as st

from db import Database
from db import repository as repo
from db.repository import analysis
from ui import auth
from ui.safe import md


def open_lead_page(title: str) -> tuple[repo.UserInfo, object]:
    """Stop the page for anyone but a lead, or when there is no project; else (user, project)."""
    user, project = auth.require_project_lead()
    st.title(title)
    if project is None:
        st.info("There is no project yet. Create one on the Projects page.")
        st.stop()
    st.caption(md(project.name))
    st.button("Refresh", icon=":material/refresh:", help="Read the newest labels and model")
    return user, project


def refresh_note(engine: Database, project_id: int, version: int) -> None:
    """Say so when the page shows a model a few labels old while the newest is being read."""
    if analysis.refreshing(engine, project_id):
        st.caption(
            f"Showing model version {version} while the newest labels are read in the "
            "background: press Refresh in a moment."
        )
