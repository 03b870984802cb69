"""Error analysis (leads): can the confidence be trusted, and where is the model wrong?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cwal import reports
from db.repository import analysis
from ui import charts, state, tables
from ui.lead_page import open_lead_page, refresh_note

OPEN_KEY = "cw_review_open"  # the sentence the review page opens in the editor

user, project = open_lead_page("Error analysis")

engine = state.engine()
tokens = analysis.prediction_log(engine, project.id, max_lag=analysis.PAGE_LAG)
with st.spinner("Reading the current model…"):
    view = analysis.model_view(engine, project.id, max_lag=analysis.PAGE_LAG)
refresh_note(engine, project.id, view.state.version)

st.subheader("Reliability of the confidence")
st.caption(
    "Confidence when a sentence was served against the label the annotator then gave: "
    "20 bins, the bars should follow the diagonal; below them the tokens per bin."
)
table, summary = reports.reliability(tokens)
if summary.empty:
    st.info("No served prediction has been labeled yet.")
else:
    tables.show(summary)
    methods = summary.to_dict("records")
    for col, row in zip(st.columns(len(methods)), methods, strict=True):
        with col:
            chart = charts.reliability(table, row["method"], row["rmse"], row["ece"])
            data = table[table["method"] == row["method"]]
            charts.show(chart, data, f"reliability {row['method']}")

st.subheader("Token entropy")
st.caption(f"The current model (v{view.state.version}) on {view.pool_sentences} sampled unlabeled "
           f"and {view.labeled['sentence_id'].nunique()} labeled sentences.")  # fmt: skip
left, right = st.columns(2)
groups = [view.pool.assign(group="unlabeled pool"), view.labeled.assign(group="labeled")]
both = [g[["group", "entropy"]] for g in groups if len(g)]
with left:
    hist = reports.entropy_histograms(pd.concat(both)) if both else None
    if hist is None:
        st.info("No model yet.")
    else:
        charts.show(charts.entropy(hist, "Pool vs labeled"), hist, "entropy pool vs labeled")
with right:
    lab = view.labeled
    if len(lab):
        marked = lab.assign(group=lab["agrees"].map({True: "model right", False: "model wrong"}))
        hist = reports.entropy_histograms(marked[["group", "entropy"]])
        charts.show(charts.entropy(hist, "Correct vs wrong (labeled)"), hist, "entropy right wrong")

st.subheader("Confusion matrix")
matrix = reports.confusion_matrix(tokens)
if matrix.empty:
    st.info("No served prediction has been labeled yet.")
else:
    charts.show(charts.confusion(matrix), matrix, "confusion matrix")

st.subheader("Least sure tokens in the pool")
least = reports.least_sure(view.pool, 50, view.tokens)
picked = tables.show(
    least,
    {"confidence": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="percent")},
    on_select="rerun",
    selection_mode="single-row",
    key="cw_least_sure",
)
st.download_button("Table (CSV)", least.to_csv(index=False).encode("utf-8"), "least-sure.csv")
rows = picked.selection.rows if picked is not None else []
if rows:
    row = least.iloc[rows[0]]
    sid = int(row["sentence_id"])
    st.text(" ".join(view.tokens.get(sid, [])))
    if st.button(f"Open sentence #{sid} in the editor", icon=":material/edit:"):
        st.session_state[OPEN_KEY] = sid
        st.switch_page("pages/review.py")
