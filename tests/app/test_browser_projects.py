"""A new project in a real browser: the sidebar's project list shows it at once (no refresh),
and an upload that repeats sentences says how many and where, and skips them when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from db import open_database
from db import repository as repo
from tests.app import harness
from tests.app.conftest import PASSWORD

ROWS = [["Ada", "met", "Bob"], ["in", "Paris"], ["Ada", "met", "Bob"], ["in", "Paris"],
        ["Ada", "met", "Bob"], ["Carl", "left"]]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
SELECTED = """
(name) => {
  const box = document.querySelector('[data-testid="stSidebar"] [data-testid="stSelectbox"]');
  return !!box && (box.textContent.includes(name) ||
                   [...box.querySelectorAll('input')].some((i) => i.value === name));
}
"""
TAGS = {"Ada": "B-PER", "Bob": "B-PER", "Carl": "B-PER", "Paris": "B-LOC"}


@pytest.mark.browser
@pytest.mark.skipif(not Path(harness.CHROMIUM).exists(), reason="Debian chromium not installed")
def test_new_project_shows_at_once_and_repeats_are_reported_and_skipped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    harness.seed(url, [("lena", PASSWORD, "lead")])
    data = "".join(
        json.dumps({"tokens": t, "tags": [TAGS.get(w, "O") for w in t]}) + "\n" for t in ROWS
    ).encode()
    with harness.app_server(url, tmp_path) as base, harness.chromium() as page:
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Projects", exact=True).click()
        page.get_by_role("heading", name="Projects").wait_for(timeout=60_000)
        page.get_by_label("Project name").fill("Repeats")
        page.locator('input[type="file"]').first.set_input_files(
            {"name": "news.jsonl", "mimeType": "application/json", "buffer": data}
        )
        page.get_by_test_id("stFileChipName").first.wait_for()
        page.get_by_text("Skip repeated sentences").first.click()
        page.get_by_role("button", name="Create project").click()
        page.get_by_text("3 sentences repeat an earlier one (the first at lines 3, 4, 5); "
                         "the import skipped them.").wait_for(timeout=60_000)  # fmt: skip
        page.get_by_text("Project created with PER, LOC").wait_for()
        # the sidebar's project selector has it now, without a page refresh
        page.wait_for_function(SELECTED, arg="Repeats", timeout=10_000)
        page.screenshot(path=str(ARTIFACTS / "new_project.png"))
    engine = open_database(url)
    (project,) = repo.list_projects(engine)
    stored = [s.tokens for s in repo.list_sentences(engine, project.id)]
    assert stored == [ROWS[0], ROWS[1], ROWS[5]]
    engine.dispose()
