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
PERCENT_LEGEND = alt.Legend(format=".0%")
BOTTOM = alt.Legend(orient="bottom", columns=2)  # long names wrap into rows, never run off


def tips(*fields: str | alt.Tooltip) -> list[alt.Tooltip]:
    """Tooltip channels. Encodings are given as channel objects throughout, never as shorthand
    strings or dicts: Altair turns each of those into its class by hashing its whole schema
    (~10 ms apiece, a third of a chart's build)."""
    return [f if isinstance(f, alt.Tooltip) else alt.Tooltip(f) for f in fields]


def draw(chart: alt.TopLevelMixin) -> None:
    """Draw ``chart`` full width, :func:`readable`, without download buttons."""
    st.altair_chart(readable(chart), width="stretch")


def show(chart: alt.TopLevelMixin, data: pd.DataFrame, name: str) -> None:
    """Draw ``chart`` full width, with download buttons for its data (CSV) and spec (JSON).

    Both files are made only when their button is clicked: serializing a chart again (Altair
    validates the whole spec with its data inlined) cost more than drawing it."""
    st.altair_chart(readable(chart), width="stretch")
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
            color=alt.Color("measure:N", title=None, legend=BOTTOM),
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
            color=alt.Color("annotator:N", legend=BOTTOM),
            tooltip=tips(
                alt.Tooltip("period:O", title="day"),
                "annotator:N",
                "sentences:Q",
                alt.Tooltip("median_seconds:Q", title="median seconds", format=".1f"),
            ),
        )
    )


def per_day(frame: pd.DataFrame) -> alt.Chart:
    """One annotator's sentences per day (``day``, ``sentences``, ``median_seconds`` columns)."""
    return (
        alt.Chart(frame, title="Your sentences per day", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("day:O", title=None, axis=alt.Axis(labelAngle=-45)),
            y=alt.Y("sentences:Q", title="sentences", axis=COUNT),
            tooltip=tips(
                "day:O",
                "sentences:Q",
                alt.Tooltip("median_seconds:Q", title="median seconds", format=".1f"),
            ),
        )
    )


def pace(frame: pd.DataFrame) -> alt.Chart:
    """Median seconds per sentence for each annotator (``cwal.reports.annotator_pace``)."""
    return (
        alt.Chart(frame, title="Time per sentence (median)", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("median_seconds:Q", title="seconds", axis=alt.Axis(format=",.1f")),
            y=alt.Y("annotator:N", title=None, sort="-x"),
            tooltip=tips(
                "annotator:N",
                "sentences:Q",
                "skipped:Q",
                alt.Tooltip("median_seconds:Q", title="median seconds", format=".1f"),
            ),
        )
    )


def labels(frame: pd.DataFrame) -> alt.Chart:
    """Mentions per label type (``cwal.reports.label_distribution``; ``O`` left out)."""
    data = frame[frame["label"] != "O"]
    return (
        alt.Chart(data, title="Labels given (mentions)", height=HEIGHT)
        .mark_bar()
        .encode(
            x=alt.X("mentions:Q", axis=COUNT),
            y=alt.Y("label:N", sort="-x", title=None),
            tooltip=tips(
                "label:N",
                "mentions:Q",
                "tokens:Q",
                alt.Tooltip("token_share:Q", title="share of tokens", format=".1%"),
            ),
        )
    )


def reliability(table: pd.DataFrame, method: str, rmse: float, ece: float) -> alt.VConcatChart:
    """Reliability diagram of one method: accuracy per confidence bin against the diagonal,
    over the number of tokens per bin (``cwal.reports.reliability`` table rows)."""
    data = table[table["method"] == method]
    base = alt.Chart(data)
    x = alt.X(
        "lo:Q", title="confidence", bin="binned", scale=alt.Scale(domain=[0, 1]), axis=PERCENT
    )
    bin_tips = (
        alt.Tooltip("lo:Q", title="confidence from", format=".0%"),
        alt.Tooltip("hi:Q", title="confidence to", format=".0%"),
        alt.Tooltip("count:Q", title="tokens", format=",d"),
    )
    bars = base.mark_bar(opacity=0.8, binSpacing=1).encode(
        x=x,
        x2=alt.X2("hi:Q"),
        y=alt.Y("accuracy:Q", title="correct", scale=alt.Scale(domain=[0, 1]), axis=PERCENT),
        tooltip=tips(*bin_tips, alt.Tooltip("accuracy:Q", title="correct", format=".1%")),
    )
    diagonal = (
        alt.Chart(pd.DataFrame({"lo": [0.0, 1.0], "accuracy": [0.0, 1.0]}))
        .mark_line(color="gray", strokeDash=[4, 4])
        .encode(
            x=alt.X("lo:Q"),
            y=alt.Y("accuracy:Q"),
            tooltip=tips(alt.Tooltip("accuracy:Q", title="perfect calibration", format=".0%")),
        )
    )
    counts = base.mark_bar(color="#7f7f7f", binSpacing=1).encode(
        x=x,
        x2=alt.X2("hi:Q"),
        y=alt.Y("count:Q", title="tokens", axis=alt.Axis(format="~s", tickCount=3)),
        tooltip=tips(*bin_tips),
    )
    title = f"{method}: RMSE {rmse:.3f} · ECE {ece:.3f} (20 bins)"
    return alt.vconcat(
        (bars + diagonal).properties(title=title, height=HEIGHT, width=320),
        counts.properties(height=110, width=320),
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
            color=alt.Color("group:N", title=None, legend=BOTTOM),
            opacity=alt.OpacityValue(0.6),
            tooltip=tips(
                "group:N",
                alt.Tooltip("lo:Q", title="entropy from", format=".2f"),
                alt.Tooltip("hi:Q", title="entropy to", format=".2f"),
                alt.Tooltip("count:Q", title="tokens", format=",d"),
                alt.Tooltip("fraction:Q", title="share of tokens", format=".1%"),
            ),
        )
    )


def confusion(frame: pd.DataFrame) -> alt.LayerChart:
    """Heat map of given (rows) against predicted (columns) labels with the counts."""
    order = list(dict.fromkeys(frame["given"]))
    cell_tips = tips("given:N", "predicted:N", alt.Tooltip("count:Q", format=",d"),
                     alt.Tooltip("share:Q", title="share of row", format=".1%"))  # fmt: skip
    base = alt.Chart(frame, title="Predicted at serving time vs label given").encode(
        x=alt.X("predicted:N", sort=order, title="predicted"),
        y=alt.Y("given:N", sort=order, title="given"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "share:Q", title="share of row", scale=alt.Scale(scheme="blues"), legend=PERCENT_LEGEND
        ),
        tooltip=cell_tips,
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("count:Q"),
        tooltip=cell_tips,
        color=alt.ColorValue("black", condition={"test": "datum.share > 0.5", "value": "white"}),
    )
    side = max(180, 28 * len(order))
    return (cells + text).properties(width=side, height=side)


def strategy_curves(bands: pd.DataFrame, x_title: str) -> alt.LayerChart:
    """Mean F1 over seeds (line) and the lowest-to-highest seed (band) per strategy
    (``cwal.simulate.summary.band`` rows)."""
    base = alt.Chart(bands, title="F1 on the evaluation sentences", height=HEIGHT).encode(
        x=alt.X("x:Q", title=x_title, axis=COUNT),
        color=alt.Color("strategy:N", title="strategy", legend=BOTTOM),
    )
    y = alt.Y("lo:Q", title="F1", scale=alt.Scale(zero=False), axis=PERCENT)
    area = base.mark_area(opacity=0.2).encode(
        y=y, y2=alt.Y2("hi:Q"), tooltip=tips("strategy:N", alt.Tooltip("x:Q", title=x_title),
        alt.Tooltip("lo:Q", title="lowest seed", format=".1%"),
        alt.Tooltip("hi:Q", title="highest seed", format=".1%")),
    )  # fmt: skip
    line = base.mark_line(point=True).encode(
        y=alt.Y("f1:Q"),
        tooltip=tips("strategy:N", alt.Tooltip("x:Q", title=x_title),
                     alt.Tooltip("f1:Q", title="mean F1", format=".1%")),
    )  # fmt: skip
    return (area + line).interactive()


SVG = {"embedOptions": {"renderer": "svg"}}
FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")  # the height stays the plot's
PADDING = {"left": 8, "top": 8, "right": 12, "bottom": 8}


def readable(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` as every page draws it: in SVG (sharp text that a test can measure), every text
    whole (no length limit on axis labels, legend labels or titles), a margin that keeps the
    titles' glyphs inside the frame, and at most 6 ticks a quantitative axis, so that Vega never
    has to drop an overlapping label."""
    return (
        chart.properties(usermeta=SVG, padding=PADDING, autosize=FIT_X)
        .configure_axis(labelLimit=0, titleLimit=0, tickCount=6, labelFlush=True)
        .configure_legend(labelLimit=0, titleLimit=0)
        .configure_title(limit=0, anchor="start")
    )
