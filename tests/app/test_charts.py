"""Every chart the pages draw: a tooltip on every mark, F1 / accuracy / shares in percent, drawn
readable (SVG, no text length limit, the width fitted, the height the plot's own)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from ui import charts, team


def _layers(spec: dict) -> list[dict]:
    out = []
    for key in ("layer", "vconcat", "hconcat", "concat"):
        for part in spec.get(key, []):
            out += _layers(part)
    if "mark" in spec:
        out.append(spec)
    return out


def _all(chart: alt.TopLevelMixin) -> tuple[dict, list[dict]]:
    spec = charts.readable(chart).to_dict()
    return spec, _layers(spec)


CURVE = pd.DataFrame({"sentences": [1, 2, 1, 2], "measure": ["a", "a", "b", "b"],
                      "value": [0.5, 0.6, 0.7, 0.8]})  # fmt: skip
RELIABILITY = pd.DataFrame({"method": ["m", "m"], "bin": [0, 1], "lo": [0.0, 0.5],
                            "hi": [0.5, 1.0], "count": [3, 4], "accuracy": [0.2, 0.9]})  # fmt: skip
BUILT = {
    "curve": lambda: charts.curve(CURVE, "sentences", "labeled", "percent", "Learning"),
    "throughput": lambda: charts.throughput(pd.DataFrame({
        "period": ["d"], "annotator": ["a"], "sentences": [3], "median_seconds": [2.0]})),
    "pace": lambda: charts.pace(pd.DataFrame({
        "annotator": ["a"], "sentences": [3], "skipped": [0], "median_seconds": [2.0]})),
    "per_day": lambda: charts.per_day(pd.DataFrame({
        "day": ["d"], "sentences": [3], "median_seconds": [2.0]})),
    "labels": lambda: charts.labels(pd.DataFrame({
        "label": ["PER", "O"], "mentions": [2, 9], "tokens": [3, 9], "token_share": [.2, .8]})),
    "reliability": lambda: charts.reliability(RELIABILITY, "m", 0.1, 0.1),
    "entropy": lambda: charts.entropy(pd.DataFrame({
        "group": ["x"], "lo": [0.0], "hi": [0.1], "count": [3], "fraction": [0.5]}), "E"),
    "confusion": lambda: charts.confusion(pd.DataFrame({
        "given": ["O", "B-PER"], "predicted": ["O", "O"], "count": [5, 1], "share": [1.0, 1.0]})),
    "strategies": lambda: charts.strategy_curves(pd.DataFrame({
        "strategy": ["r"], "x": [10], "lo": [0.5], "hi": [0.6], "f1": [0.55]}), "words"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BUILT))
def test_every_mark_has_a_tooltip_and_the_chart_is_readable(name) -> None:
    spec, layers = _all(BUILT[name]())
    assert layers
    for layer in layers:
        assert layer["encoding"].get("tooltip"), f"{name}: a {layer['mark']} mark has no tooltip"
    assert spec["usermeta"]["embedOptions"]["renderer"] == "svg"
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    assert spec["config"]["axis"]["labelLimit"] == 0
    assert spec["config"]["legend"]["labelLimit"] == 0


def _formats(layers: list[dict], field: str) -> set[str]:
    found = set()
    for layer in layers:
        for channel, enc in layer["encoding"].items():
            items = enc if isinstance(enc, list) else [enc]
            for item in items:
                if isinstance(item, dict) and item.get("field") == field:
                    fmt = item.get("format") or item.get("axis", {}).get("format")
                    fmt = fmt or item.get("legend", {}).get("format")
                    found.add(f"{channel}:{fmt}")
    return found


@pytest.mark.parametrize(
    ("name", "field"),
    [("curve", "value"), ("reliability", "accuracy"), ("strategies", "f1"),
     ("confusion", "share"), ("labels", "token_share")],
)  # fmt: skip
def test_f1_accuracy_and_shares_are_percent(name, field) -> None:
    _, layers = _all(BUILT[name]())
    formats = _formats(layers, field)
    assert formats
    assert all(f.endswith("%") for f in formats if not f.startswith("y:None")), formats


def test_agreement_matrix_shows_f1_in_percent_and_kappa_as_a_coefficient() -> None:
    from cwal.measures.agreement import ALL

    table = pd.DataFrame({"scope": ["a × b"] * 2, "a": ["a"] * 2, "b": ["b"] * 2,
                          "type": [ALL] * 2,
                          "measure": ["span F1 exact", "Cohen's kappa"], "value": [0.5, 0.4],
                          "low": [0.4, 0.3], "high": [0.6, 0.5], "items": [3, 3],
                          "units": [6, 9]})  # fmt: skip
    f1 = charts.readable(team.matrix_chart(table, "span F1 exact", ALL)).to_dict()
    kappa = charts.readable(team.matrix_chart(table, "Cohen's kappa", ALL)).to_dict()
    assert '".1%"' in str(f1).replace("'", '"') and ".1%" not in str(kappa)
