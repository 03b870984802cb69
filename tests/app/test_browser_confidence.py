"""Honest confidence in a real Chromium: on the demo project a lead labels 20 sentences with the
gold tags, keyboard only; the shading the editor showed on each sentence (token titles) is then
compared with how often the model's prediction of it was right, and the dashboard's expected pool
accuracy (reached from the sidebar) with the accuracy measured on the same pool sentences.

Issue 18's target from 10 labels: the estimate within 5 points (asserted). The shading on labels
11-20 is held within 15 points of the share right (measured 10 points under in one run of two)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from cwal.io import schemes
from db.repository import analysis, calibration_frame, list_sentences
from tests.app import harness
from tests.app.conftest import PASSWORD
from tests.app.test_browser import fresh_store
from tests.app.test_browser_arrival import key_of
from tests.app.test_lead_pages import demo_gold

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(harness.CHROMIUM).exists() and not os.environ.get("CI"),
        reason="Debian chromium not installed (scripts/test.sh installs it; CI never skips)",
    ),
]
LABELS = 20
SHADING_FROM = 10  # the shading is compared on the sentences served after 10 labels
SHADED = 8  # of which at least this many shaded and logged by a model
SHADING_TOLERANCE = 0.15  # mean shading vs share right on ~130 tokens (sd of the share ~.03)


def shown_confidence(page) -> list[float | None]:
    """The confidence each token is shaded with (its title), None where it shows none."""
    titles = page.locator(".cw-tok").evaluate_all("nodes => nodes.map(n => n.title || '')")
    return [float(t.split()[-1]) if t.startswith("confidence") else None for t in titles]


def type_gold(page, gold: list[str]) -> None:
    """Keyboard only: clear the pre-filled labels, then label each gold span by arrow keys."""
    n = len(gold)
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")  # token 0
    for _ in range(n - 1):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Backspace")
    for typ, start, end in schemes.spans(gold, "IOB2"):
        page.keyboard.press("Escape")
        for _ in range(start + 1):
            page.keyboard.press("ArrowRight")
        for _ in range(end - start - 1):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press(key_of(page, typ))
    assert harness.shown_tags(page) == gold


def test_shading_and_estimate_match_the_measured_accuracy(tmp_path: Path) -> None:
    s = fresh_store(tmp_path)
    gold = demo_gold()
    shaded: dict[int, list[float | None]] = {}
    with harness.app_server(s.url, tmp_path) as base, harness.chromium() as page:
        page.set_default_timeout(120_000)  # a hang guard: the machine may be busy
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Annotate", exact=True).click()
        harness.wait_ready(page)
        # one click into the editor's margin: the focus leaves the sidebar link (where Enter
        # would follow the link); from here on the keyboard only
        page.locator(harness.EDITOR).click(position={"x": 3, "y": 3})
        # a fresh install prepares the model first (numba compiles): served unshaded till then
        page.get_by_text("Preparing the model").wait_for(state="hidden", timeout=900_000)
        for i in range(LABELS):
            sid = harness.wait_ready(page)
            tags = gold[tuple(harness.tokens(page))]
            if i >= SHADING_FROM:
                shaded[sid] = shown_confidence(page)
            type_gold(page, tags)
            page.wait_for_timeout(300)  # not a bounce: Enter in the first instants is ignored
            page.keyboard.press("Enter")
            page.get_by_text(f"Saved sentence #{sid}.").wait_for()
        page.get_by_role("link", name="Dashboard", exact=True).click()
        page.get_by_role("heading", name="Dashboard").wait_for()
        metric = page.get_by_test_id("stMetric").filter(has_text="Expected pool accuracy")
        metric.get_by_text("rests on").wait_for()
        value = metric.get_by_test_id("stMetricValue").inner_text()
    estimate = float(value.strip().rstrip("%")) / 100

    # the shading against the model's own predictions of those sentences (the prediction log)
    log = calibration_frame(s.engine, s.demo).drop_duplicates("sentence_id", keep="last")
    log = log.set_index("sentence_id")
    # (sentences labeled while the first start was still preparing the model were served
    # unshaded and scored by no model: nothing to compare)
    logged = [(sid, c) for sid, c in shaded.items() if sid in log.index and None not in c]
    assert len(logged) >= SHADED, (len(logged), {k: v[:3] for k, v in shaded.items()})
    conf, right = [], []
    for sid, shown in logged:
        row = log.loc[sid]
        for c, p, t in zip(shown, row["tags"], row["truth"], strict=True):
            conf.append(c)
            right.append(p == t)
    # measured: .78 shaded vs .88 right (under-confident: the model improves faster than the
    # record of its first labels says); before issue 18, 13-17% shaded vs 77-92% right
    assert abs(np.mean(conf) - np.mean(right)) <= SHADING_TOLERANCE, (np.mean(conf), np.mean(right))

    # the estimate against the accuracy of the model's predictions on the same pool sentences
    view = analysis.pool_view(s.engine, s.demo)
    assert view.calibration_labels >= LABELS - 1
    assert estimate == pytest.approx(view.pool_estimate, abs=0.0051)  # the page shows 0.1%
    by_sentence = view.pool.groupby("sentence_id")
    texts = {x.id: tuple(x.tokens) for x in list_sentences(s.engine, s.demo)}
    hits = [
        p == g
        for sid, part in by_sentence
        for p, g in zip(part["predicted"], gold[texts[sid]], strict=True)
    ]
    print(f"shading {np.mean(conf):.3f} vs right {np.mean(right):.3f} on {len(conf)} tokens; "
          f"estimate {estimate:.3f} vs measured {np.mean(hits):.3f}")  # fmt: skip
    assert abs(estimate - float(np.mean(hits))) <= 0.05, (estimate, float(np.mean(hits)))
