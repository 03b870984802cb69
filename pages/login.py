"""Sign in; on a fresh database, create the first lead (and, if wanted, the demo project)."""

from __future__ import annotations

import streamlit as st

from db import repository as repo
from ui import auth, state
from ui.safe import md

st.title("cwal")
st.caption("Confidence-weighted active learning for sequence labeling")

if auth.needs_setup():
    st.subheader("Welcome: create the first lead account")
    st.write(
        "This database has no users yet. The account you create now is a **lead**: it can add "
        "annotators, create projects, and export. You can sign in with it afterwards. "
        "To prove you started this server, give the **setup token** it printed on its console."
    )
    with st.form("setup"):
        name = st.text_input("User name", max_chars=200)
        password = st.text_input("Password", type="password")
        again = st.text_input("Password again", type="password")
        token = st.text_input(
            "Setup token",
            type="password",
            help="Printed on the console where the server was started (and kept in the file "
            "setup-token in CWAL_HOME, or the CWAL_SETUP_TOKEN variable when set).",
        )
        demo = st.checkbox(
            "Also create the demo project (420 invented news sentences, 4 entity types)",
            value=True,
        )
        created = st.form_submit_button("Create lead account", type="primary")
    if created:
        if password != again:
            st.error("The two passwords differ.")
        else:
            try:
                user = auth.create_first_lead(name, password, token)
                if demo:
                    with st.spinner("Creating the demo project…"):
                        state.service().create_demo_project(user)
            except (repo.StoreError, auth.Forbidden) as exc:
                st.error(md(exc))
            else:
                st.rerun()
else:
    with st.form("sign_in"):
        name = st.text_input("User name")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            signed_in = auth.sign_in(name, password)
        except auth.Throttled as exc:
            st.error(str(exc))  # our own sentence, no user text in it
        else:
            if signed_in is None:
                st.error("Unknown user name or wrong password (or a disabled account).")
            else:
                st.rerun()
