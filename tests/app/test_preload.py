"""The browser's half of the warm-up (``ui.preload``): a signed-in lead's browser loads the chart and
table code while on another page, so the first lead page does not wait for it; annotators and
signed-out visitors never get it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from db import repository as repo
from tests.app import harness
from tests.app.conftest import PASSWORD, app
from ui import preload

CHUNK_PROBE = """
(files) => performance.getEntriesByType('resource')
  .map((e) => e.name.split('/').pop()).filter((name) => files.includes(name))
"""


def test_chunk_files_names_each_chunk_found_exactly_once(tmp_path: Path) -> None:
    for name in ("ArrowVegaLiteChart.a1.js", "DataFrame.b2.js", "DataFrame.c3.js", "x.js"):
        (tmp_path / name).write_text("")
    assert preload.chunk_files(tmp_path) == ("ArrowVegaLiteChart.a1.js",)  # DataFrame: ambiguous


def test_the_installed_streamlit_has_the_chunks() -> None:
    """A Streamlit upgrade that renames its lazy chunks fails here (the preload would silently
    load nothing)."""
    files = preload.chunk_files()
    assert [f.split(".")[0] for f in files] == list(preload.CHUNKS)


def _chart_code(at) -> list[list[str]]:
    return [
        json.loads(e.proto.json)["files"]
        for e in at.get("bidi_component")
        if e.proto.component_name == "cwal_chart_code"
    ]


def test_only_a_lead_is_sent_the_chart_code(store, users, demo) -> None:
    lead = app("app.py", users.lead).run()
    assert not lead.exception, lead.exception
    assert _chart_code(lead) == [list(preload.chunk_files())]
    assert lead.sidebar.get("bidi_component")  # in the sidebar, not on the page
    for user in (users.annotator, None):
        at = app("app.py", user).run()
        assert not at.exception, at.exception
        assert _chart_code(at) == []


@pytest.mark.browser
@pytest.mark.skipif(
    not Path(harness.CHROMIUM).exists() and not os.environ.get("CI"),
    reason="Debian chromium not installed (scripts/test.sh installs it; CI never skips)",
)
def test_a_leads_browser_loads_the_chart_code_before_any_lead_page(tmp_path: Path) -> None:
    from db import open_database
    from db.service import install_demo

    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("lena", PASSWORD, "lead"), ("arno", PASSWORD, "annotator")])
    engine = open_database(url)
    demo = install_demo(engine)
    repo.set_member(engine, demo, ids["arno"], "annotator")  # annotators see their projects only
    engine.dispose()
    files = list(preload.chunk_files())
    with harness.app_server(url, tmp_path) as base:
        with harness.chromium() as page:
            harness.sign_in(page, base, "arno", PASSWORD)
            harness.wait_ready(page)
            page.wait_for_timeout(1500)  # the lead's preload starts within 0.5 s
            assert page.evaluate(CHUNK_PROBE, files) == []
        with harness.chromium() as page:
            harness.sign_in(page, base, "lena", PASSWORD)
            harness.wait_ready(page)  # on Annotate: no chart has been drawn
            assert not page.locator('[data-testid="stVegaLiteChart"]').count()
            page.wait_for_function(
                f"(files) => ({CHUNK_PROBE})(files).length === files.length", arg=files
            )
            if os.environ.get("CWAL_SCREENSHOTS"):
                page.screenshot(path=os.environ["CWAL_SCREENSHOTS"] + "/lead-annotate.png")
