"""Annotate: the next sentence from the live service, pre-filled, shaded by confidence."""

from __future__ import annotations

import streamlit as st

from db import repository as repo
from ui import auth, prepare, state, team
from ui.annotate import Annotator
from ui.editor import token_editor
from ui.safe import md

user = auth.require_user()
project = state.current_project()
if project is None:
    hint = "Create one on the Projects page." if user.role == "lead" else "Ask a lead to add one."
    st.info(f"There is no project yet. {hint}")
    st.stop()

st.title("Annotate")
st.caption(md(project.name))
project_id, editor_key = project.id, f"cw_editor_{project.id}"


def annotator() -> Annotator:
    """The controller over the project's current live session and settings (both can be
    replaced while this page stays open: a lead saving settings or adding files); while the
    model's code is being prepared, over a service that only stores (``ui.prepare``)."""
    fresh = repo.get_project(state.engine(), project_id)
    return Annotator(prepare.service(project_id), user, fresh, st.session_state)


first = annotator().current()
if first is not None and not annotator().types and not first["tags"]:
    st.warning("This project has no entity types yet: a lead can add them on Files & settings.")


def on_action() -> None:
    """Runs before the fragment re-renders: save the answer, then the next sentence is fetched."""
    if auth.current_user() is None:  # signed out or deleted since the page ran
        return
    annotator().handle((st.session_state.get(editor_key) or {}).get("action"))


@st.fragment(run_every=2.0)
def model_poll() -> None:
    """While the model is being prepared: a light check every 2 s (apart from the editor, so
    that an answer never waits behind a poll), and the whole page once it is ready."""
    if prepare.ready():
        st.rerun()


@st.fragment
def workbench() -> None:
    """The editor and the counters; an action re-runs only this part of the page."""
    auth.require_user()  # a fragment re-run skips the page's own check
    if not prepare.ready():
        st.info(
            "Preparing the model (the first start after an install takes a minute or two). "
            "Label away: every answer is saved at once; suggestions and pre-filled labels "
            "start when it is ready.",
            icon=":material/hourglass_top:",
        )
    work = annotator()
    shown = work.current()
    token_editor(work.payload(), key=editor_key, on_action=on_action)
    if shown is not None:  # the sentences around it in its document, as plain text
        before, after = repo.document_context(state.engine(), shown["sid"])
        if before or after:
            with st.expander("Document context"):
                for tokens in before:
                    st.text(" ".join(tokens))
                st.caption("⋯ the sentence you are labeling ⋯")
                for tokens in after:
                    st.text(" ".join(tokens))
    stats = work.counters()
    today, total, skipped, cols = 0, 0, 0, st.columns(4)
    pace = "–"
    if stats is not None:
        today, total, skipped = stats.today, stats.total, stats.skipped
        if stats.seconds_per_sentence is not None:
            pace = f"{stats.seconds_per_sentence:.1f} s"
    cols[0].metric("Today", today)
    cols[1].metric("Total", total)
    cols[2].metric("Skipped", skipped)
    cols[3].metric("Time per sentence", pace)
    team.guidelines_and_flag(user, project_id, shown["sid"] if shown else None)


workbench()
if not prepare.ready():
    model_poll()
