"""A team in three browser contexts on one ``streamlit run app.py``: a lead and two annotators.

The project's whole pool overlaps (share 100%, k = 2), so the queue hands both sentences to both
annotators; they disagree on one token ("Bob": PER for arno, LOC for bea). The lead's Agreement
page must show the figures computed by hand below, and settling the disagreement on
Adjudication makes the accepted version the gold.

Hand computation (spans as (type, start, end); tokens 'Ann met Bob in Rome' and 'Lee went home'):
  arno: (PER,0,1) (PER,2,3) (LOC,4,5) | (PER,0,1)      bea: (PER,0,1) (LOC,2,3) (LOC,4,5) | (PER,0,1)
  span F1 exact   = 2 * 3 matches / (4 + 4 spans)                     = 0.750 -> "75.0%"
  span F1 partial = 2 * (4 exact bounds + 0 / 2) / 8 (types ignored)  = 1.000 -> "100.0%"
  Cohen's kappa: 8 tokens, 7 agree: po = 0.875; arno PER 3 LOC 1 O 4, bea PER 2 LOC 2 O 4:
      pe = 3/8*2/8 + 1/8*2/8 + 4/8*4/8 = 0.375; kappa = (0.875 - 0.375) / 0.625 = 0.800
  Krippendorff's alpha: 16 values, PER 5 LOC 3 O 8; observed disagreement 2 (one unit);
      expected 16^2 - (25 + 9 + 64) = 158; alpha = 1 - 15 * 2 / 158 = 0.810
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from db import open_database
from db import repository as repo
from db.repository import versions
from tests.app import harness
from tests.app.conftest import PASSWORD

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(harness.CHROMIUM).exists() and not os.environ.get("CI"),
        reason="Debian chromium not installed (scripts/test.sh installs it; CI never skips)",
    ),
]

POOL = b"Ann O\nmet O\nBob O\nin O\nRome O\n\nLee O\nwent O\nhome O\n"
LABELS = {  # annotator -> first token -> spans (key, start, last): 1 = PER, 2 = LOC
    "arno": {"Ann": [("1", 0, 0), ("1", 2, 2), ("2", 4, 4)], "Lee": [("1", 0, 0)]},
    "bea": {"Ann": [("1", 0, 0), ("2", 2, 2), ("2", 4, 4)], "Lee": [("1", 0, 0)]},
}
EXPECTED = {
    "span F1 exact": "75.0%",
    "span F1 partial": "100.0%",
    "Cohen's kappa": "0.800",
    "Krippendorff's alpha": "0.810",
}


def _label_both(page, who: str) -> list[int]:
    """Label the two sentences the queue hands ``who`` as LABELS says; their ids."""
    seen: list[int] = []
    previous = None
    for _ in range(2):
        sid = harness.wait_ready(page, previous, timeout=300)
        words = harness.tokens(page)
        n = len(words)
        harness.token(page, 0).click()
        harness.token(page, n - 1).click(modifiers=["Shift"])
        page.keyboard.press("Backspace")  # no pre-fill left
        for key, first, last in LABELS[who][words[0]]:
            harness.token(page, first).click()
            harness.token(page, last).click(modifiers=["Shift"])
            page.keyboard.press(key)
        page.wait_for_timeout(300)  # the editor ignores an Enter in a sentence's first instants
        page.keyboard.press("Enter")
        page.get_by_text(f"Saved sentence #{sid}.").wait_for(timeout=120_000)
        seen.append(sid)
        previous = sid
    return seen


def test_two_annotators_disagree_and_the_lead_measures_and_settles(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    ids = harness.seed(
        url,
        [("lena", PASSWORD, "lead"), ("arno", PASSWORD, "annotator"),
         ("bea", PASSWORD, "annotator")],
    )  # fmt: skip
    engine = open_database(url)
    project = repo.create_project(
        engine, "Team", {"scheme": "IOB2", "tagset": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]}
    )
    from db import imports

    imports.import_bytes(engine, project, POOL, "pool.conll")
    for name in ("arno", "bea"):
        repo.set_member(engine, project, ids[name], "annotator")
    versions.set_overlap(engine, project, 1.0, 2)

    with harness.app_server(url, tmp_path) as base, harness.chromium() as lead:
        browser = lead.context.browser
        contexts = {name: browser.new_context() for name in ("arno", "bea")}
        pages = {name: ctx.new_page() for name, ctx in contexts.items()}
        for name, page in pages.items():
            page.set_default_timeout(120_000)
            harness.sign_in(page, base, name, PASSWORD)
            page.get_by_role("heading", name="Annotate").wait_for()
        got = {name: _label_both(page, name) for name, page in pages.items()}
        assert sorted(got["arno"]) == sorted(got["bea"])  # both were handed both sentences
        # four independent versions; the agreeing pair ('Lee went home') became gold at once
        rows = [e for sid in got["arno"] for e in repo.annotation_history(engine, sid)]
        assert sorted(e.status for e in rows) == ["submitted"] + ["version"] * 4

        lead.set_default_timeout(120_000)
        harness.sign_in(lead, base, "lena", PASSWORD)
        lead.get_by_role("link", name="Agreement", exact=True).click()
        lead.get_by_role("heading", name="Agreement").wait_for()
        lead.get_by_test_id("stMetricValue").nth(len(EXPECTED) - 1).wait_for()  # all four drawn
        labels = lead.get_by_test_id("stMetricLabel").all_inner_texts()
        values = lead.get_by_test_id("stMetricValue").all_inner_texts()
        shown = dict(zip([x.strip() for x in labels], [v.strip() for v in values], strict=True))
        assert {m: shown.get(m) for m in EXPECTED} == EXPECTED, shown

        lead.get_by_role("link", name="Adjudication", exact=True).click()
        lead.get_by_role("heading", name="Adjudication").wait_for()
        lead.get_by_role("button", name="Accept bea").click()
        lead.get_by_text("settled (accept)").wait_for()
        for ctx in contexts.values():
            ctx.close()

    disputed = next(sid for sid in got["arno"] if repo.get_sentence(engine, sid).tokens[0] == "Ann")
    gold = repo.current_annotations(engine, project)
    by_sentence = {a.sentence_id: a.tags for a in gold}
    assert by_sentence[disputed] == ["B-PER", "O", "B-LOC", "O", "B-LOC"]  # bea's, accepted
    assert len(by_sentence) == 2  # the agreed one became gold by itself
