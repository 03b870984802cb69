"""Altair chart builders for the lead pages, and ``show``: a chart plus its data as CSV.

Streamlit 1.67 draws Altair charts with vega-embed's own action menu turned off; its chart toolbar
offers "Download as PNG" (and "Show data"), and ``show`` adds a CSV download of the chart's data
and of the Vega-Lite spec (which any Vega editor exports as SVG). Labels, tokens and names reach
the charts as data, which Vega draws as text, never as HTML.
"""

from __future__ import annotations

import re

import altair as alt
import pandas as pd
import streamlit as st

HEIGHT = 260
PERCENT = alt.Axis(format=".0%")
COUNT = alt.Axis(format=",d")


def tips(*fields: str | alt.Tooltip) -> list[alt.Tooltip]:
    """Tooltip channels. Encodings are given as channel objects throughout, never as shorthand
    strings or dicts: Altair turns each of those into its class by hashing its whole schema
    (~10 ms apiece, a third of a chart's build)."""
    return [f if isinstance(f, alt.Tooltip) else alt.Tooltip(f) for f in fields]


def show(chart: alt.TopLevelMixin, data: pd.DataFrame, name: str) -> None:
    """Draw ``chart`` full width, with download buttons for its data (CSV) and spec (JSON).

    Both files are made only when their button is clicked: serializing a chart again (Altair
    validates the whole spec with its data inlined) cost more than drawing it."""
    st.altair_chart(chart, width="stretch")
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "chart"
    left, right = st.columns(2)
    left.download_button(
        "Data (CSV)",
        lambda: data.to_csv(index=False).encode("utf-8"),
        file_name=f"{slug}.csv",
        mime="text/csv",
        key=f"csv-{slug}",
        icon=":material/download:",
    )
    right.download_button(
        "Chart spec (Vega-Lite)",
        lambda: chart.to_json().encode("utf-8"),
        file_name=f"{slug}.vl.json",
        mime="application/json",
        key=f"spec-{slug}",
        icon=":material/download:",
    )


def curve(long: pd.DataFrame, x: str, x_title: str, y_title: str, title: str) -> alt.Chart:
    """Lines with points, one per ``measure`` (``cwal.reports.learning_curve`` rows)."""
    return (
        alt.Chart(long, title=title, height=HEIGHT)
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{x}:Q", title=x_title, axis=COUNT),
            y=alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False), axis=PERCENT),
            color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=tips(f"{x}:Q", "measure:N", alt.Tooltip("value:Q", format=".1%")),
        )
    )


def throughput(frame: pd.DataFrame) -> alt.Chart:
    """Sentences per period, stacked by annotator (``cwal.reports.throughput`` rows)."""
    return (
        alt.Chart(frame, title="Sentences labeled per day", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("period:O", title=None),
            y=alt.Y("sentences:Q", title="sentences"),
            color=alt.Color("annotator:N", legend=alt.Legend(orient="bottom")),
            tooltip=tips("period:O", "annotator:N", "sentences:Q", "median_seconds:Q"),
        )
    )


def pace(frame: pd.DataFrame) -> alt.Chart:
    """Median seconds per sentence for each annotator (``cwal.reports.annotator_pace``)."""
    return (
        alt.Chart(frame, title="Time per sentence (median)", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("median_seconds:Q", title="seconds"),
            y=alt.Y("annotator:N", title=None, sort="-x"),
            tooltip=tips("annotator:N", "sentences:Q", "skipped:Q", "median_seconds:Q"),
        )
    )


def labels(frame: pd.DataFrame) -> alt.Chart:
    """Mentions per label type (``cwal.reports.label_distribution``; ``O`` left out)."""
    data = frame[frame["label"] != "O"]
    return (
        alt.Chart(data, title="Labels given (mentions)", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("mentions:Q"),
            y=alt.Y("label:N", sort="-x", title=None),
            tooltip=tips(
                "label:N", "mentions:Q", "tokens:Q", alt.Tooltip("token_share:Q", format=".1%")
            ),
        )
    )


def reliability(table: pd.DataFrame, method: str, rmse: float, ece: float) -> alt.VConcatChart:
    """Reliability diagram of one method: accuracy per confidence bin against the diagonal,
    over the number of tokens per bin (``cwal.reports.reliability`` table rows)."""
    data = table[table["method"] == method]
    base = alt.Chart(data)
    x = alt.X("lo:Q", title="confidence", bin="binned", scale=alt.Scale(domain=[0, 1]))
    bars = base.mark_bar(opacity=0.8, binSpacing=1).encode(
        x=x,
        x2=alt.X2("hi:Q"),
        y=alt.Y("accuracy:Q", title="fraction correct", scale=alt.Scale(domain=[0, 1])),
        tooltip=tips("bin:O", "lo:Q", "hi:Q", "count:Q", alt.Tooltip("accuracy:Q", format=".3f")),
    )
    diagonal = (
        alt.Chart(pd.DataFrame({"lo": [0.0, 1.0], "accuracy": [0.0, 1.0]}))
        .mark_line(color="gray", strokeDash=[4, 4])
        .encode(x=alt.X("lo:Q"), y=alt.Y("accuracy:Q"))
    )
    counts = base.mark_bar(color="#7f7f7f", binSpacing=1).encode(
        x=x, x2=alt.X2("hi:Q"), y=alt.Y("count:Q", title="tokens"), tooltip=tips("bin:O", "count:Q")
    )
    title = f"{method}: RMSE {rmse:.3f} · ECE {ece:.3f} (20 bins)"
    return alt.vconcat(
        (bars + diagonal).properties(title=title, height=HEIGHT, width=320),
        counts.properties(height=90, width=320),
    )


def entropy(hist: pd.DataFrame, title: str) -> alt.Chart:
    """Grouped histograms of token entropy (``cwal.reports.entropy_histograms`` rows)."""
    return (
        alt.Chart(hist, title=title, height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("lo:Q", title="token entropy (nats)", bin="binned"),
            x2=alt.X2("hi:Q"),
            y=alt.Y("fraction:Q", title="share of tokens", axis=PERCENT, stack=None),
            color=alt.Color("group:N", title=None, legend=alt.Legend(orient="bottom")),
            opacity=alt.OpacityValue(0.6),
            tooltip=tips("group:N", "lo:Q", "hi:Q", "count:Q"),
        )
    )


def confusion(frame: pd.DataFrame) -> alt.LayerChart:
    """Heat map of given (rows) against predicted (columns) labels with the counts."""
    order = list(dict.fromkeys(frame["given"]))
    base = alt.Chart(frame, title="Predicted at serving time vs label given").encode(
        x=alt.X("predicted:N", sort=order, title="predicted"),
        y=alt.Y("given:N", sort=order, title="given"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("share:Q", title="share of row", scale=alt.Scale(scheme="blues")),
        tooltip=tips("given:N", "predicted:N", "count:Q", alt.Tooltip("share:Q", format=".1%")),
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("count:Q"),
        color=alt.ColorValue("black", condition={"test": "datum.share > 0.5", "value": "white"}),
    )
    side = max(180, 28 * len(order))
    return (cells + text).properties(width=side, height=side)
