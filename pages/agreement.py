"""Agreement (leads, reviewers): how far independent annotators of the overlap sentences agree,
counting spans (exact and partial F1) as well as tokens (Cohen's kappa, Krippendorff's alpha),
overall, per pair and per entity type, each with a 95% bootstrap interval and its sample size."""

from __future__ import annotations

import streamlit as st

from cwal.measures.agreement import ALL, MEASURES, OVERALL
from db import repository as repo
from ui import state, team
from ui.charts import show

user, project = team.open_team_page(
    "Agreement", "lead", "reviewer", refusal="This page is for the project's leads and reviewers."
)
share, k = repo.get_overlap(state.engine(), project.id)
st.button("Refresh", icon=":material/refresh:", help="Read the newest labels")

table = team.agreement_table(project)
if table.empty:
    st.info(
        f"No sentence has two independent versions yet. Overlap is {share:.0%} of the pool, "
        f"labeled by {k} annotators each"
        + (" (a lead sets it on the Members page)." if share == 0 else ".")
    )
    st.stop()

overall = table[(table.scope == OVERALL) & (table.type == ALL)]
cols = st.columns(len(MEASURES))
for col, (_, row) in zip(cols, overall.iterrows(), strict=False):
    col.metric(
        row.measure,
        team.agreement_value(row.value, f1 := "F1" in row.measure),
        help=f"95% interval {team.agreement_value(row.low, f1)}–"
        f"{team.agreement_value(row.high, f1)}; {row['items']:,} sentences, "
        f"{row.units:,} units",
        delta=None,
    )
st.caption(
    f"Overlap: {share:.0%} of the pool, {k} annotators each. Span F1 exact: same type and "
    "bounds; partial: overlapping bounds count one half (nervaluate). Kappa and alpha compare "
    "each token's entity type. Intervals: 1,000 bootstrap resamples of the sentences."
)

st.subheader("Per entity type")
st.dataframe(team.readable(table[table.scope == OVERALL]), hide_index=True)

st.subheader("Per pair of annotators")
pairs = table[table.scope != OVERALL]
left, right = st.columns(2)
measure = left.selectbox("Measure", list(MEASURES[:3]))
types = [ALL, *sorted(t for t in table.type.unique() if t != ALL)]
type_ = right.selectbox("Entity type", types)
chosen = pairs[(pairs.measure == measure) & (pairs.type == type_)]
show(team.matrix_chart(table, measure, type_), chosen, f"agreement-{measure}-{type_}")
st.dataframe(team.readable(pairs), hide_index=True)
