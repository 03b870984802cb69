"""Users (leads): accounts and roles; add annotators, promote, reset passwords, disable."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import auth, state
from ui.safe import md

lead = auth.require_lead()
st.title("Users")

users = state.service().list_users(lead)
st.dataframe(
    pd.DataFrame(
        [(u.name, u.role, u.created_at, "disabled" if u.disabled else "active") for u in users],
        columns=["name", "role", "created", "account"],
    ),
    hide_index=True,
)
names = {u.id: u.name for u in users}

st.subheader("Add a user")
with st.form("add_user", clear_on_submit=True):
    name = st.text_input("User name", max_chars=200)
    password = st.text_input("Password", type="password")
    role = st.radio("Role", list(repo.ROLES), horizontal=True)
    add = st.form_submit_button("Add user", type="primary")
if add:
    try:
        state.service().add_user(lead, name, password, role)
    except repo.StoreError as exc:
        st.error(md(exc))
    else:
        st.success(f"Added {role}: {md(name)}")
        st.rerun()

st.subheader("Change a user")
with st.form("change_user"):
    target = st.selectbox("User", list(names), format_func=names.__getitem__)
    new_role = st.radio("Role", ["keep", *repo.ROLES], horizontal=True)
    account = st.radio("Account", ["keep", "disable", "enable"], horizontal=True)
    new_password = st.text_input("New password (optional)", type="password")
    change = st.form_submit_button("Save")
if change:
    try:
        if new_role != "keep":
            state.service().set_role(lead, target, new_role)
        if new_password:
            state.service().set_password(
                lead, target, new_password, st.session_state.get(auth.TOKEN_KEY)
            )
        if account != "keep":
            state.service().set_disabled(lead, target, account == "disable")
    except repo.StoreError as exc:
        st.error(md(exc))
    else:
        st.success(f"Saved changes to {md(names[target])}.")
