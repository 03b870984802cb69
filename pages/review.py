"""Review (leads): labeled tokens the current model disputes most, each opening its sentence in
the token editor; a fix is a new annotation that supersedes the old one."""

from __future__ import annotations

import math

import streamlit as st

from cwal import reports
from db import repository as repo
from db.repository import analysis
from db.service import entity_types
from ui import auth, state, tables
from ui.editor import payload, sentence, spans_to_tags, token_editor
from ui.lead_page import open_lead_page

OPEN_KEY = "cw_review_open"  # set by this page's table and by the error-analysis page
ALL = "(all)"

user, project = open_lead_page("Review")

engine = state.engine()
scheme = project.settings.get("scheme") or "IOB2"
types = entity_types(project.settings)
with st.spinner("Reading the current model…"):
    view = analysis.model_view(engine, project.id)

lab = view.labeled
left, right = st.columns(2)
who = left.selectbox("Annotator", [ALL, *sorted(set(view.annotators.values()))])
labels = sorted(set(lab["given"]) | set(lab["predicted"])) if len(lab) else []
label = right.selectbox("Label (given or predicted)", [ALL, *labels])
ranking = reports.review_ranking(
    lab,
    annotators=view.annotators,
    annotator=None if who == ALL else who,
    label=None if label == ALL else label,
    n=200,
    tokens=view.tokens,
)
st.caption(
    f"Model v{view.state.version} read on {lab['sentence_id'].nunique() if len(lab) else 0} of "
    f"{view.labeled_sentences} labeled sentences (the most disputed first). p_given: the share "
    "of KD-PC draws that give the annotator's label; gap: how much higher the model scores its "
    "own labeling. Pick a row to open the sentence."
)
memo = st.session_state.setdefault(f"cw_review_{project.id}", {"rev": 0, "message": ""})


def on_pick() -> None:
    """Open the picked row's sentence (rows as shown in the run the click came from)."""
    rows = st.session_state["cw_review_table"].selection.rows
    if rows and rows[0] < len(memo.get("shown", [])):
        st.session_state[OPEN_KEY] = memo["shown"][rows[0]]


tables.show(
    ranking,
    {"p_given": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="percent")},
    on_select=on_pick,
    selection_mode="single-row",
    key="cw_review_table",
)
memo["shown"] = ranking["sentence_id"].astype(int).tolist()
st.download_button("Table (CSV)", ranking.to_csv(index=False).encode("utf-8"), "review.csv")


opened = analysis.open_sentence(engine, project.id, view, st.session_state.get(OPEN_KEY))
if opened is None:
    st.stop()
sid, conf = opened.id, opened.confidence
memo["open"] = sid
editor_key = f"cw_review_editor_{project.id}"


def on_action() -> None:
    """Save the fix (Enter), leave the sentence as it is (S) or undo the last fix (U)."""
    action = (st.session_state.get(editor_key) or {}).get("action")
    memo["rev"] += 1
    if isinstance(action, dict) and action.get("kind") == "undo":
        undone = state.service().undo_fix(user, project.id)
        if undone is None:
            memo["message"] = "Nothing to undo."
            return
        st.session_state[OPEN_KEY] = undone
        memo["message"] = (
            f"Undid your last label (sentence #{undone}): it has its labels from before again."
        )
        return
    sid = memo.get("open")
    if not isinstance(action, dict) or sid is None or action.get("sid") != sid:
        return
    if action.get("kind") == "skip":
        memo["message"] = f"Left sentence #{sid} as it was."
        return
    if action.get("kind") != "submit":
        return
    secs = action.get("seconds")
    ok = isinstance(secs, int | float) and not isinstance(secs, bool) and math.isfinite(secs)
    try:
        n = len(repo.get_sentence(engine, sid).tokens)
        new = spans_to_tags(action.get("spans"), n, scheme, types)
        state.service().save_fix(
            user, project.id, sid, new, float(secs) if ok and 0 <= secs <= 6 * 3600 else None
        )
        memo["message"] = f"Saved sentence #{sid}."
    except (ValueError, repo.StoreError, auth.Forbidden) as exc:
        memo["message"] = f"Not saved: {exc}"


st.subheader(f"Sentence #{sid}")
status = "labeled" if opened.labeled else "unlabeled"
least = min(range(len(conf)), key=conf.__getitem__) if conf else None
shown = sentence(sid=sid, tokens=opened.tokens, tags=opened.tags, scheme=scheme, confidence=conf,
                 least=least, info=f"Sentence #{sid} · {status} · shading: model confidence")  # fmt: skip
data = payload(
    shown, types=types, rev=memo["rev"], message=memo["message"], settings=project.settings
)
token_editor(data, key=editor_key, on_action=on_action)
