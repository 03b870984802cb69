"""Adjudication (leads, reviewers): overlap sentences whose versions differ, worst first; the
versions side by side with the differing tokens marked; accept one, merge or edit. The decision
is appended to the label log as the sentence's gold (who, when, from which versions), and it is
the only label of the sentence the model learns."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db import repository as repo
from ui import auth, state, team
from ui.safe import md

user, project = team.open_team_page(
    "Adjudication",
    "lead",
    "reviewer",
    refusal="This page is for the project's leads and reviewers.",
)
scheme = project.settings.get("scheme") or "IOB2"
DONE_KEY = "cw_adjudicated"
if st.session_state.get(DONE_KEY):
    st.success(st.session_state.pop(DONE_KEY))
st.button("Refresh", icon=":material/refresh:", help="Read the newest versions")
settled = st.toggle("Show settled sentences too")
found = repo.disagreements(state.engine(), project.id, include_settled=settled)
if not found:
    st.success("No disagreement waits for a decision.")
    st.stop()

st.dataframe(
    pd.DataFrame(
        [
            (
                d.sentence_id,
                d.differing_tokens,
                ", ".join(v.annotator for v in d.versions),
                "settled" if d.gold else "open",
                " ".join(d.tokens),
            )  # fmt: skip
            for d in found
        ],
        columns=["sentence", "differing tokens", "annotators", "state", "text"],
    ),
    hide_index=True,
)
by_id = {d.sentence_id: d for d in found}
sid = st.selectbox("Sentence to settle", list(by_id), format_func=lambda s: f"#{s}")
item = by_id[sid]
frame = team.versions_frame(item.tokens, item.versions)
st.dataframe(team.mark_differences(frame))
if item.gold:
    st.caption("Current gold: " + md(" ".join(item.gold)))

sources = [v.id for v in item.versions]


def decide(tags: list[str], method: str) -> None:
    try:
        state.service().adjudicate(user, project.id, sid, tags, sources, method)
    except (repo.StoreError, auth.Forbidden) as exc:
        st.error(md(exc))
    else:
        st.session_state[DONE_KEY] = f"Sentence #{sid} settled ({method}); the model learns it."
        st.rerun()


st.subheader("Accept one version")
cols = st.columns(len(item.versions))
for col, version in zip(cols, item.versions, strict=True):
    if col.button(f"Accept {version.annotator}", key=f"accept-{version.id}"):
        decide(list(version.tags), "accept")

st.subheader("Merge or edit")
merged = team.majority([v.tags for v in item.versions], scheme)
with st.form(f"edit-{sid}"):
    text = st.text_input(
        "Tags, one per token (pre-filled with the spans most versions share)",
        value=" ".join(merged),
    )
    save = st.form_submit_button("Save as gold", type="primary")
if save:
    tags = text.split()
    decide(tags, "merge" if tags == merged else "edit")
