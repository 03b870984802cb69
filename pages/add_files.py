"""Files & settings (leads): add sentences or gold data to the current project; its settings."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import auth, forms, state
from ui.labels import label_settings
from ui.safe import md

lead, project = auth.require_project_lead()
st.title("Files & settings")
if project is None:
    st.info("There is no project yet: create one on the Projects page.")
    st.stop()
st.caption(md(project.name))

batches = repo.list_import_batches(state.engine(), project.id)
if batches:
    rows = [(b.source_name, b.format, b.split, b.n_sentences, b.created_at,
             "complete" if b.complete else "unfinished") for b in batches]  # fmt: skip
    table = pd.DataFrame(
        rows, columns=["file", "format", "split", "sentences", "imported", "state"]
    )
    st.dataframe(table, hide_index=True)
for b in repo.incomplete_imports(state.engine(), project.id):
    st.warning(f"Import #{b.id} of {md(b.source_name)} is unfinished: {b.n_sentences:,} sentences "
               "staged, none visible yet. If it stopped (no progress for a minute), add the same "
               "file again to resume it, or delete it.")  # fmt: skip
    if st.button(f"Delete unfinished import #{b.id}", key=f"discard_{b.id}"):
        state.service().discard_import(lead, project.id, b.id)
        st.rerun()

with st.form("add_file", clear_on_submit=True):
    upload = st.file_uploader("File (CoNLL columns, JSONL or plain text)")
    fmt_label = st.selectbox("File format", list(forms.FORMATS))
    split = st.radio(
        "Add to",
        ["pool", "eval"],
        format_func={"pool": "the pool to annotate", "eval": "the gold evaluation split"}.get,
        horizontal=True,
    )
    tags_as = st.radio(
        "Tags in a pool file are",
        ["gold", "annotations"],
        format_func={"gold": "gold (kept aside)", "annotations": "labels already done"}.get,
        horizontal=True,
    )
    skip = st.checkbox("Skip repeated sentences", help=forms.REPEATS_HELP)
    add = st.form_submit_button("Add file", type="primary")

if add:
    if upload is None:
        st.error("Choose a file first.")
    else:
        options = {"format": forms.FORMATS[fmt_label], "split": split, "skip_repeats": skip}
        if split == "pool":
            options["tags_as"] = tags_as
        forms.run_import(lead, project.id, upload, label=upload.name, **options)

st.subheader("Settings")
with st.form("settings"):
    chosen = forms.settings_inputs(project.settings, with_scheme=False)
    interval = st.number_input(
        "Retrain fully every N annotations",
        min_value=1,
        value=int(project.settings["consolidation_interval"]),
    )
    saved = st.form_submit_button("Save settings")
if saved:
    try:
        state.service().update_settings(
            lead, project.id, chosen | {"consolidation_interval": interval}
        )
    except repo.StoreError as exc:
        st.error(md(exc))
    else:
        st.success("Settings saved.")

label_settings(lead, project)
