"""Pieces of the team pages: the agreement table and matrix chart, and the side-by-side view of
an overlap sentence's versions with the tokens where they differ marked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from cwal.io import schemes
from cwal.measures import agreement as ag
from db import repository as repo
from ui import auth, state
from ui.charts import tips
from ui.safe import md


def open_team_page(
    title: str, *roles: str, refusal: str = "This page is for the project's leads and reviewers."
) -> tuple[repo.UserInfo, repo.ProjectInfo]:
    """The header of a team page: stop unless the user's role on the current project is one of
    ``roles`` (or there is no project); else the title, the project's name, (user, project)."""
    user, project = auth.require_project_role(*roles, refusal=refusal)
    st.title(title)
    if project is None:
        st.info("There is no project yet: create one on the Projects page.")
        st.stop()
    st.caption(md(project.name))
    return user, project


@st.cache_resource(max_entries=16, show_spinner=False)
def _live_agreement(url: str, project_id: int, scheme: str) -> repo.LiveAgreement:
    """One process-wide agreement of the project, kept up to date from the label log."""
    return repo.LiveAgreement(state.engine(), project_id, scheme)


def agreement_table(project: repo.ProjectInfo) -> pd.DataFrame:
    """The project's agreement table, fresh: the sentences whose labels changed since the last
    visit (of anyone, in this process) are recounted, the intervals recomputed."""
    scheme = project.settings.get("scheme") or "IOB2"
    live = _live_agreement(str(state.engine().url), project.id, scheme)
    with st.spinner("Computing agreement…"):
        return live.table()


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: value and its interval, with the items and units behind it."""
    out = table[["scope", "type", "measure", "value", "low", "high", "items", "units"]].copy()
    f1 = out["measure"].str.contains("F1")
    for col in ("value", "low", "high"):  # F1 in percent; kappa and alpha are coefficients
        out[col] = [agreement_value(v, is_f1) for v, is_f1 in zip(out[col], f1, strict=True)]
    out.columns = ["Pair", "Type", "Measure", "Value", "95% low", "95% high", "Sentences", "Units"]
    return out


def agreement_value(value: float, f1: bool) -> str:
    """An agreement figure as shown: F1 in percent, a coefficient with three decimals."""
    if value != value:
        return "–"
    return f"{100 * value:.1f}%" if f1 else f"{value:.3f}"


def matrix_chart(table: pd.DataFrame, measure: str, type_: str) -> alt.Chart:
    """Annotator × annotator heatmap of one pairwise measure (the value printed in each cell)."""
    data = ag.pair_matrix(table, measure, type_)
    base = alt.Chart(data, title=f"{measure} ({type_}), per pair of annotators", height=260)
    x, y = alt.X("a:N", title=None), alt.Y("b:N", title=None)
    fmt = ".1%" if "F1" in measure else ".2f"  # F1 in percent; kappa and alpha are coefficients
    cell_tips = tips(alt.Tooltip("a:N", title="annotator"), alt.Tooltip("b:N", title="annotator"),
                     alt.Tooltip("value:Q", title=measure, format=fmt))  # fmt: skip
    cells = base.mark_rect().encode(
        x=x,
        y=y,
        color=alt.Color(
            "value:Q",
            title=measure,
            scale=alt.Scale(domain=[0, 1]),
            legend=alt.Legend(format=fmt.replace("1", "0")),
        ),
        tooltip=cell_tips,
    )
    text = base.mark_text().encode(x=x, y=y, text=alt.Text("value:Q", format=fmt),
                                   tooltip=cell_tips)  # fmt: skip
    return cells + text


def versions_frame(tokens: Sequence[str], versions: Sequence[repo.Version]) -> pd.DataFrame:
    """One row per version (the annotator), one column per token, the tags as cells."""
    columns = [f"{i}: {tok}" for i, tok in enumerate(tokens)]
    rows = [v.tags for v in versions]
    return pd.DataFrame(rows, columns=columns, index=[v.annotator for v in versions])


def mark_differences(frame: pd.DataFrame) -> pd.io.formats.style.Styler:
    """The frame with every column where the versions differ highlighted."""
    differ = {c for c in frame.columns if frame[c].nunique() > 1}

    def colour(col: pd.Series) -> list[str]:
        hit = col.name in differ
        return ["background-color: #ffe08a; font-weight: bold" if hit else "" for _ in col]

    return frame.style.apply(colour, axis=0)


def majority(versions: Sequence[Sequence[str]], scheme: str) -> list[str]:
    """Merge: the spans that more than half of the versions marked (same type and bounds),
    plus the longest-first non-overlapping remainder of spans tied at exactly half."""
    n = len(versions)
    counts = Counter(s for tags in versions for s in set(schemes.spans(list(tags), scheme)))
    chosen: list[tuple] = []
    for span, c in sorted(counts.items(), key=lambda x: (-x[1], -(x[0][2] - x[0][1]), x[0][1])):
        if 2 * c < n:
            break
        if all(span[2] <= o[1] or o[2] <= span[1] for o in chosen):
            chosen.append(span)
    return schemes.from_spans(sorted(chosen, key=lambda s: s[1]), len(versions[0]), scheme)


def guidelines_and_flag(user: repo.UserInfo, project_id: int, sentence_id: int | None) -> None:
    """Under the editor: the newest guidelines in an expander (key G opens it) and a form to
    flag the sentence on screen with a comment (key F puts the cursor in it)."""

    latest = repo.latest_guidelines(state.engine(), project_id)
    title = f"Guidelines (version {latest.version}) · key G" if latest else "Guidelines · key G"
    with st.expander(title):
        if latest is None:
            st.caption("No guidelines yet: a lead writes them on the Guidelines page.")
        else:
            st.markdown(latest.text)  # Markdown without HTML
    if sentence_id is None:
        return
    with st.form(f"cw-flag-{project_id}", clear_on_submit=True):
        comment = st.text_input(
            f"Flag sentence #{sentence_id}: what is doubtful? (key F)", max_chars=2000
        )
        sent = st.form_submit_button("Flag sentence")
    if sent:
        try:
            state.service().flag_sentence(user, project_id, sentence_id, comment)
        except repo.StoreError as exc:
            st.error(str(exc))
        else:
            st.caption(f"Flagged sentence #{sentence_id} for the leads.")
