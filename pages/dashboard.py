"""Dashboard (leads): progress, learning curve, measured against expected accuracy, throughput,
labels, model version and last retrain (consolidation)."""

from __future__ import annotations

import streamlit as st

from cwal import reports
from db import repository as repo
from db.repository import analysis, learning_curve, stopping
from ui import charts, state, tables
from ui.lead_page import open_lead_page, refresh_note

user, project = open_lead_page("Dashboard")

engine = state.engine()
counts = repo.project_counts(engine, project.id)
lag = analysis.PAGE_LAG
logs = analysis.log_frames(engine, project.id, max_lag=lag)
checkpoints = repo.list_checkpoints(engine, project.id)
with st.spinner("Reading the current model…"):
    view = analysis.pool_view(engine, project.id, max_lag=lag)
    points = learning_curve.curve_points(engine, project.id, max_lag=lag)
refresh_note(engine, project.id, view.state.version)

cols = st.columns(5)
cols[0].metric("Labeled sentences", f"{counts.labeled:,} / {counts.pool:,}")
cols[1].metric("Model version", reports.model_version(logs.labels))
last = checkpoints[-1] if checkpoints else None
cols[2].metric(
    "Last retrain",
    last.created_at.strftime("%b %d, %H:%M") if last else "–",
    help=f"checkpoint #{last.id}, model v{last.info.get('version', '?')}" if last else None,
)
estimate, (low, high) = view.pool_estimate, view.pool_interval
known = view.state.trained and estimate == estimate
cols[3].metric(
    "Expected pool accuracy",
    f"{estimate:.1%}" if known else "–",
    delta=f"{low:.1%} – {high:.1%}, rests on {view.calibration_labels:,} labels" if known else None,
    delta_color="off",
    help="Mean calibrated confidence (the shading annotators see) of the model's own predictions "
    f"on a sample of {view.pool_sentences} unlabeled pool sentences, with its 95% interval: no "
    "gold needed. The calibration is refitted on every label's prequential record.",
)
scores = view.eval_scores
cols[4].metric("F1 on the evaluation split", f"{scores['f1']:.1%}" if scores else "–")

if counts.labeled == 0:
    st.info("No labels yet: the curves start with the first submitted sentence.")
signal = stopping.stopping_signal(engine, project.id)  # successive models' agreement, no gold
(st.success if signal.fired else st.caption)(signal.message())

st.subheader("Learning curve")
preq = reports.prequential_curve(logs.predictions)
amounts = reports.labeled_amount(logs.labels, preq["annotation_id"].astype(int).tolist())
curves = reports.accuracy_curves(points, preq, amounts)
learning = curves[curves["measure"].isin([reports.MEASURES[m] for m in reports.LEARNING])]
charts.show(
    charts.curve(learning, "sentences", "labeled sentences", "percent", "Learning curve"),
    learning,
    "learning curve",
)
st.caption(
    "Prequential: each sentence scored by the model just before it learned it, over the last "
    f"{reports.PREQUENTIAL_WINDOW} labels (no gold needed); held-out: the evaluation split at "
    "each retrain" + ("." if scores is not None else " (this project has none).")
)

st.subheader("Measured against expected accuracy")
st.caption(
    "When the expected accuracy on the unlabeled pool tracks the measured one, the model's "
    "confidence can be trusted, and a flattening expected curve says more labels stop paying."
)
trust = curves[curves["measure"].isin([reports.MEASURES[m] for m in reports.TRUST])]
charts.show(
    charts.curve(trust, "sentences", "labeled sentences", "token accuracy", "Token accuracy"),
    trust,
    "measured vs expected accuracy",
)

st.subheader("Annotators")
pace = reports.annotator_pace(logs.annotations)
left, right = st.columns(2)
with left:
    per_day = reports.throughput(logs.annotations)
    charts.show(charts.throughput(per_day), per_day, "throughput")
with right:
    timed = pace[pace["median_seconds"].notna()]
    if timed.empty:
        st.caption("Time per sentence: no label has a time yet (imported labels have none).")
    else:
        charts.show(charts.pace(timed), timed, "time per sentence")
tables.show(pace)

st.subheader("Label distribution")
charts.show(charts.labels(logs.labels_given), logs.labels_given, "label distribution")
# error analysis and review read the labeled sentences too: start on that now the page is drawn
analysis.prefetch_model_view(engine, project.id)
