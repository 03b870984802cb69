"""My progress: the signed-in user's own work in the current project (counts, pace, per day),
and their password (the current one required; their other sign-ins end)."""

from __future__ import annotations

import streamlit as st

from db import repository as repo
from db.service import MIN_PASSWORD, Throttled
from ui import auth, charts, state
from ui.safe import md

user = auth.require_user()
project = state.current_project()
st.title("My progress")

with st.expander("Change my password", icon=":material/key:"):
    with st.form("own_password", clear_on_submit=True):
        current = st.text_input("Current password", type="password")
        new = st.text_input(
            "New password", type="password", help=f"At least {MIN_PASSWORD} characters"
        )
        again = st.text_input("New password again", type="password")
        change = st.form_submit_button("Change password")
    if change and new != again:  # checked here: nothing is sent, no attempt is counted
        st.error("the two new passwords differ")
    elif change:
        try:
            state.service().change_own_password(
                user, current, new, st.session_state.get(auth.TOKEN_KEY), auth.client_address()
            )
        except (repo.StoreError, Throttled) as exc:
            st.error(md(exc))
        else:
            st.success("Password changed. Your other signed-in browsers are signed out.")
if project is None:
    st.info("There is no project yet.")
    st.stop()
st.caption(md(project.name))

engine = state.engine()
mine = next((s for s in repo.annotator_stats(engine, project.id) if s.user_id == user.id), None)
counts = repo.project_counts(engine, project.id)

cols = st.columns(4)
cols[0].metric("Labeled today", mine.today if mine else 0)
cols[1].metric("Labeled in total", mine.total if mine else 0)
cols[2].metric("Skipped", mine.skipped if mine else 0)
per = mine.seconds_per_sentence if mine else None
cols[3].metric("Time per sentence", f"{per:.1f} s" if per is not None else "–")
st.progress(
    counts.labeled / counts.pool if counts.pool else 0.0,
    text=f"Project: {counts.labeled:,} of {counts.pool:,} pool sentences labeled by everyone",
)

log = repo.annotation_log(engine, project.id)
log = log[(log["user_id"] == user.id) & (log["status"] == "submitted") & ~log["retracted"]]
if log.empty:
    st.info("You have not labeled a sentence in this project yet.")
    st.stop()
per_day = (
    log.assign(day=log["created_at"].dt.strftime("%Y-%m-%d"))
    .groupby("day")
    .agg(sentences=("id", "size"), median_seconds=("seconds", "median"))
)
st.subheader("Sentences per day")
charts.draw(charts.per_day(per_day.reset_index()))
st.dataframe(
    per_day.sort_index(ascending=False),
    column_config={
        "sentences": st.column_config.NumberColumn("Sentences"),
        "median_seconds": st.column_config.NumberColumn("Median seconds", format="%.1f"),
    },
)
