"""Members (project leads): who works on the current project, and as lead, reviewer or annotator.

Only members see and open a project; an administrator (an account whose role is lead) leads every
project and creates the accounts on the Users page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import state, team
from ui.safe import md

ROLE_HELP = {
    "lead": "lead: settings, files, export, members, every lead page",
    "reviewer": "reviewer: agreement and adjudication, besides annotating",
    "annotator": "annotator: annotates, sees the guidelines, flags sentences",
}

lead, project = team.open_team_page("Members", "lead", refusal="This page is for leads only.")

members = state.service().list_members(lead, project.id)
if members:
    st.dataframe(
        pd.DataFrame(
            [(m.name, m.role, m.created_at) for m in members],
            columns=["member", "project role", "since"],
        ),
        hide_index=True,
    )
else:
    st.info("Nobody is a member of this project yet.")
st.caption(" · ".join(ROLE_HELP.values()))

names = dict(state.service().accounts(lead, project.id))
st.subheader("Add a member or change a role")
with st.form("set_member"):
    who = st.selectbox("Account", list(names), format_func=names.__getitem__)
    role = st.radio("Project role", list(repo.PROJECT_ROLES), index=2, horizontal=True)
    save = st.form_submit_button("Save", type="primary")
if save and who is not None:
    try:
        state.service().set_member(lead, project.id, who, role)
    except repo.StoreError as exc:
        st.error(md(exc))
    else:
        st.success(f"{md(names[who])} is now {role} of this project.")
        st.rerun()

st.subheader("Overlap")
share, k = repo.get_overlap(state.engine(), project.id)
with st.form("overlap"):
    new_share = st.slider("Share of the pool labeled independently (%)", 0, 100, round(share * 100))
    new_k = st.number_input("Annotators per overlap sentence", 2, 10, k)
    st.caption(
        "Each overlap sentence goes to that many different annotators, who do not see each "
        "other's labels; the model learns it once they agree or a reviewer settles it."
    )
    keep = st.form_submit_button("Save overlap")
if keep:
    state.service().set_overlap(lead, project.id, new_share / 100, int(new_k))
    st.success(f"Overlap: {new_share}% of the pool, {int(new_k)} annotators each.")

if members:
    st.subheader("Remove a member")
    ids = {m.user_id: m.name for m in members}
    with st.form("remove_member"):
        gone = st.selectbox("Member", list(ids), format_func=ids.__getitem__)
        remove = st.form_submit_button("Remove from the project")
    if remove and gone is not None:
        try:
            state.service().remove_member(lead, project.id, gone)
        except repo.StoreError as exc:
            st.error(md(exc))
        else:
            st.success(f"{md(ids[gone])} no longer works on this project; their labels stay.")
            st.rerun()
