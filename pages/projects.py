"""Projects (leads): the demo project, the list of projects, and a new project from a file."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cwal.errors import CorpusError
from db import repository as repo
from db import service
from ui import auth, forms, state
from ui.safe import md

lead = auth.require_lead()
engine = state.engine()
st.title("Projects")
forms.show_flash()

projects = state.projects()
if repo.find_project(engine, service.DEMO_NAME) is None:
    st.info(
        "Try cwal on the built-in demo: 320 invented news sentences to label (PER, ORG, LOC, "
        "MISC) and 100 gold sentences that let the model's charts show progress."
    )
    if st.button("Create the demo project", type="primary"):
        with st.spinner("Creating the demo project…"):
            state.choose_project(state.service().create_demo_project(lead))
        st.rerun()

if projects:
    rows = []
    for p in projects:
        c = repo.project_counts(engine, p.id)
        s = p.settings
        rows.append((p.name, c.pool, c.labeled, c.eval, s["learner"], s["strategy"], s["scheme"]))
    columns = ["project", "pool", "labeled", "eval (gold)", "learner", "strategy", "scheme"]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True)

st.subheader("New project from a file")
with st.form("new_project"):
    name = st.text_input("Project name", max_chars=200)
    upload = st.file_uploader("Sentences to annotate (CoNLL columns, JSONL or plain text)")
    fmt_label = st.selectbox("File format", list(forms.FORMATS))
    roles = st.text_input(
        "CoNLL column roles (optional)",
        placeholder="word pos chunk tag",
        help="One role per column; word and tag are special. Empty: first = word, last = tag.",
    )
    types = st.text_input(
        "Entity types (optional)",
        placeholder="PER ORG LOC MISC",
        help="Empty: taken from the tags of the files.",
    )
    settings = forms.settings_inputs()
    tags_as = st.radio(
        "Tags found in the file are",
        ["gold", "annotations"],
        format_func={"gold": "gold (kept aside)", "annotations": "labels already done"}.get,
        horizontal=True,
    )
    skip = st.checkbox("Skip repeated sentences", help=forms.REPEATS_HELP)
    gold = st.file_uploader("Gold evaluation split (optional, same format, with tags)")
    create = st.form_submit_button("Create project", type="primary")

if create:
    fmt = forms.FORMATS[fmt_label]
    column_roles = forms.split_words(roles) or None
    chosen_types = forms.split_words(types)
    tagset = service.tagset(chosen_types, settings["scheme"]) if chosen_types else None
    if not name.strip() or upload is None:
        st.error("A project needs a name and a file.")
        st.stop()
    try:
        found: list[str] = []
        for part in (upload, gold):
            if part is not None:
                n, seen = forms.check_upload(
                    part.getvalue(), part.name, fmt, column_roles, settings["scheme"], tagset
                )
                found += [t for t in seen if t not in found]
    except CorpusError as exc:
        st.error(f"{md(exc.path)} was refused at line {exc.line}: {md(exc.problem)}")
        st.stop()
    chosen_types = chosen_types or found
    if not chosen_types:
        st.error("No entity types: name them, or upload a file with tags.")
        st.stop()
    settings |= {
        "tagset": service.tagset(chosen_types, settings["scheme"]),
        "columns": column_roles,
    }
    try:
        project_id = state.service().create_project(lead, name, settings)
    except repo.StoreError as exc:
        st.error(md(exc))
        st.stop()
    options = {"format": fmt, "columns": column_roles, "skip_repeats": skip, "keep": True}
    ok = forms.run_import(
        lead, project_id, upload, label=upload.name, split="pool", tags_as=tags_as, **options
    )
    if ok and gold is not None:
        ok = forms.run_import(lead, project_id, gold, label=gold.name, split="eval", **options)
    state.choose_project(project_id)
    if ok:
        forms.flash("success", f"Project created with {md(', '.join(chosen_types))}. "
                    "Open Annotate to start.")  # fmt: skip
        st.rerun()  # the sidebar's project list and the table above show it at once
