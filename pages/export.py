"""Export (leads): a project's labels, label history, gold tags or model predictions in any
format (CoNLL, CoNLL-U, JSONL, Prodigy, doccano, Label Studio, brat, spaCy, CSV/TSV)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import streamlit as st

from cwal.io.corpus import FORMAT_NAMES, WRITE_FORMATS
from db import repository as repo
from ui import auth, state
from ui.safe import md

EXTENSION = {"conll": ".conll", "jsonl": ".jsonl", "text": ".txt", "prodigy": ".jsonl",
             "doccano": ".jsonl", "conllu": ".conllu", "labelstudio": ".json",
             "spacy-json": ".json", "csv": ".csv", "tsv": ".tsv", "brat": ".zip",
             "spacy": ".spacy"}  # fmt: skip
MIME = {"csv": "text/csv", "tsv": "text/tab-separated-values", "brat": "application/zip",
        "spacy": "application/octet-stream", "labelstudio": "application/json",
        "spacy-json": "application/json"}  # fmt: skip

lead, project = auth.require_project_lead()
st.title("Export")
if project is None:
    st.info("There is no project yet.")
    st.stop()
st.caption(md(project.name))

counts = repo.project_counts(state.engine(), project.id)
st.write(f"{counts.labeled:,} of {counts.pool:,} pool sentences are labeled.")

names = {m.user_id: m.name for m in state.service().list_members(lead, project.id)}
names |= {a.user_id: a.name for a in repo.annotator_stats(state.engine(), project.id)}
top = st.columns(2)
fmt = top[0].selectbox("Format", WRITE_FORMATS, format_func=lambda f: FORMAT_NAMES.get(f, f))
what = top[1].radio(
    "What",
    ["labels", "history", "gold", "predictions"],
    format_func={"labels": "current labels", "history": "every label version",
                 "gold": "imported gold tags", "predictions": "model predictions"}.get,
    horizontal=True,
    help="Model predictions carry each token's confidence.",
)  # fmt: skip
cols = st.columns(2)
status = cols[0].radio(
    "Latest answer",
    ["submitted", "skipped", "any"],
    format_func={"submitted": "labeled", "skipped": "skipped", "any": "either"}.get,
    horizontal=True,
)
chosen = cols[1].multiselect(
    "Annotators", list(names), format_func=names.__getitem__, placeholder="everyone"
)
limit = st.checkbox("Only answers from a date range")
since = until = None
if limit:
    dates = st.date_input("From / to (inclusive, UTC)", value=())
    if len(dates) == 2:
        since = datetime.combine(dates[0], time(), UTC)
        until = datetime.combine(dates[1], time(), UTC) + timedelta(days=1)

filters = {
    "status": None if status == "any" else status,
    "annotator_ids": chosen or None,
    "since": since,
    "until": until,
}


def build() -> bytes:
    """The file, built when the button is pressed (the role is checked again then)."""
    return state.service().export_file(lead, project.id, fmt, what=what, **filters)


stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
safe_name = "".join(ch if ch.isalnum() else "_" for ch in project.name)[:60]
st.download_button(
    f"Download {FORMAT_NAMES.get(fmt, fmt)}",
    data=build,
    file_name=f"{safe_name}-{what}-{stamp}{EXTENSION[fmt]}",
    mime=MIME.get(fmt, "text/plain"),
    type="primary",
    on_click="ignore",
)

if lead.role == repo.ADMIN_ROLE:  # the whole database: administrators only
    st.subheader("Backup")
    hint = state.service().backup_hint()
    if hint is None:
        st.caption(
            "The whole database (every project, user and label), copied while annotators work."
        )
        st.download_button("Export backup", data=lambda: state.service().backup_database(lead),
                           file_name=f"cwal-{stamp}.sqlite3", mime="application/vnd.sqlite3",
                           on_click="ignore")  # fmt: skip
    else:
        st.caption(md(hint[0].upper() + hint[1:] + "."))
