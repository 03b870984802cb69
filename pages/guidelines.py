"""Guidelines and flags: every member reads the project's guidelines (Markdown, rendered without
HTML); leads write new versions, read older ones, and resolve the sentences annotators flagged."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import auth, state, team
from ui.safe import md

user, project = team.open_team_page(
    "Guidelines", "lead", "reviewer", "annotator", refusal="This page is for the project's members."
)
engine = state.engine()
is_lead = auth.project_role(user, project.id) == "lead"
versions = repo.guideline_versions(engine, project.id)

if versions:
    shown = versions[0]
    if is_lead and len(versions) > 1:
        pick = st.selectbox("Version", [v.version for v in versions], format_func=lambda v: f"v{v}")
        shown = next(v for v in versions if v.version == pick)
    st.caption(f"Version {shown.version} by {md(shown.author)}, {shown.created_at:%Y-%m-%d %H:%M}")
    st.markdown(shown.text)  # Markdown only: Streamlit never renders raw HTML here
else:
    st.info("No guidelines yet." + (" Write the first version below." if is_lead else ""))

if not is_lead:
    st.stop()

st.subheader("Write a new version")
with st.form("guidelines"):
    text = st.text_area("Markdown", value=versions[0].text if versions else "", height=300)
    save = st.form_submit_button("Save as a new version", type="primary")
if save:
    try:
        number = state.service().save_guidelines(user, project.id, text)
    except repo.StoreError as exc:
        st.error(md(exc))
    else:
        st.success(f"Saved as version {number}; annotators see it from the editor (key G).")
        st.rerun()

st.subheader("Flags")
show_all = st.toggle("Show resolved flags too")
flags = repo.list_flags(engine, project.id, open_only=not show_all)
if not flags:
    st.caption("No open flag.")
    st.stop()
st.dataframe(
    pd.DataFrame(
        [
            (f.id, f.sentence_id, f.author, f.comment, " ".join(f.tokens), f.resolution or "")
            for f in flags
        ],  # fmt: skip
        columns=["flag", "sentence", "by", "comment", "text", "resolution"],
    ),
    hide_index=True,
)
open_ids = [f.id for f in flags if f.resolved_at is None]
if open_ids:
    with st.form("resolve"):
        which = st.selectbox("Flag", open_ids, format_func=lambda i: f"#{i}")
        note = st.text_input("Resolution", max_chars=2000)
        done = st.form_submit_button("Resolve")
    if done:
        state.service().resolve_flag(user, project.id, which, note)
        st.rerun()
