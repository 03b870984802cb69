"""The app in a real headless Chromium (Debian's, through Playwright's ``executable_path``).

* the token editor alone (stand-in live service): mouse, shift-click, drag, arrow keys, label keys,
  Backspace, Escape, Enter, skip, undo, a double Enter;
* end to end on ``streamlit run app.py``: sign in, label three sentences with mouse and keyboard,
  undo one, export as a lead, check the database and the exported file, save a screenshot.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from cwal.io import read_conll
from db import open_database
from db import repository as repo
from db.service import install_demo
from tests.app import harness
from tests.app.conftest import PASSWORD

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(harness.CHROMIUM).exists() and not os.environ.get("CI"),
        reason="Debian chromium not installed (scripts/test.sh installs it; CI never skips)",
    ),
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def fresh_store(tmp: Path) -> SimpleNamespace:
    """A new SQLite store with a lead, an annotator and the demo project."""
    url = f"sqlite:///{tmp / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("lena", PASSWORD, "lead"), ("arno", PASSWORD, "annotator")])
    engine = open_database(url)
    demo = install_demo(engine)
    repo.set_member(engine, demo, ids["arno"], "annotator")
    return SimpleNamespace(url=url, tmp=tmp, engine=engine, demo=demo, **ids)


def select_range(page, first: int, last: int) -> None:
    """Click the first token, shift-click the last."""
    harness.token(page, first).click()
    harness.token(page, last).click(modifiers=["Shift"])


def drag(page, first: int, last: int) -> None:
    """Press the mouse on one token and release it on another."""
    a = harness.token(page, first).bounding_box()
    b = harness.token(page, last).bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=6)
    page.mouse.up()


def clear_all(page) -> None:
    """Remove the model's pre-filled labels: select every token, press Backspace."""
    n = len(harness.tokens(page))
    select_range(page, 0, n - 1)
    page.keyboard.press("Backspace")
    assert set(harness.shown_tags(page)) == {"O"}


def answer(page, key: str = "Enter") -> None:
    """Press Enter (or S) as a person would: not in the first instants of a sentence, which the
    editor ignores as a bounce."""
    page.wait_for_timeout(300)
    page.keyboard.press(key)


def iob(n: int, *spans: tuple[str, int, int]) -> list[str]:
    """IOB2 tags of ``n`` tokens with ``(type, start, end_exclusive)`` spans."""
    tags = ["O"] * n
    for typ, start, end in spans:
        tags[start:end] = [f"B-{typ}"] + [f"I-{typ}"] * (end - start - 1)
    return tags


def test_the_editor_with_mouse_and_keys(tmp_path: Path) -> None:
    s = fresh_store(tmp_path)
    env = {"CWAL_TEST_USER": str(s.arno)}
    with (
        harness.app_server(s.url, tmp_path, script="tests/app/editor_app.py", env=env) as base,
        harness.chromium() as page,
    ):
        page.goto(base)
        first = harness.wait_ready(page)
        words = harness.tokens(page)
        assert words == repo.get_sentence(s.engine, first).tokens
        n = len(words)
        select_range(page, 0, 1)
        page.keyboard.press("1")  # PER on tokens 0-1
        drag(page, 3, 4)
        page.keyboard.press("2")  # ORG on 3-4 ...
        harness.token(page, 4).click()
        page.keyboard.press("3")  # ... then LOC on 4 splits it: ORG 3, LOC 4
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("4")  # MISC on 5-6
        harness.token(page, 6).click()
        page.keyboard.press("Backspace")  # MISC shrinks to 5
        harness.token(page, 7).click()
        page.keyboard.press("Escape")
        page.keyboard.press("1")  # nothing selected: no effect
        expected = iob(n, ("PER", 0, 2), ("ORG", 3, 4), ("LOC", 4, 5), ("MISC", 5, 6))
        assert harness.shown_tags(page) == expected
        answer(page)
        second = harness.wait_ready(page, first)  # shown at once: it was leased ahead
        page.keyboard.press("Enter")  # a bounce right after it appeared: ignored
        page.wait_for_timeout(500)
        assert harness.wait_ready(page) == second
        answer(page, "s")
        third = harness.wait_ready(page, second)
        page.keyboard.press("u")  # undoes the skip: the second sentence comes back
        assert harness.wait_ready(page, third) == second
        page.keyboard.press("u")  # undoes the first submission, its labels shown again
        assert harness.wait_ready(page, second) == first
        assert harness.shown_tags(page) == expected
        answer(page)
        assert harness.wait_ready(page, first) != first
        page.get_by_text(f"Saved sentence #{first}.").wait_for()

    history = repo.annotation_history(s.engine, first)
    assert [e.status for e in history] == ["submitted", "undone", "submitted"]
    assert history[0].tags == expected and history[2].tags == expected
    assert all(e.seconds is not None and 0 < e.seconds < 600 for e in history if e.tags)
    statuses = [e.status for e in repo.annotation_history(s.engine, second)]
    assert statuses == ["skipped", "undone"]


def test_end_to_end_label_undo_export(tmp_path: Path) -> None:
    s = fresh_store(tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    with harness.app_server(s.url, tmp_path) as base, harness.chromium() as page:
        harness.sign_in(page, base, "arno", PASSWORD)
        page.get_by_role("heading", name="Annotate").wait_for()
        labeled: dict[int, list[str]] = {}

        first = harness.wait_ready(page)  # 1: mouse (click + shift-click) and a label key
        clear_all(page)
        select_range(page, 0, 1)
        page.keyboard.press("1")
        labeled[first] = iob(len(harness.tokens(page)), ("PER", 0, 2))
        assert harness.shown_tags(page) == labeled[first]
        answer(page)

        second = harness.wait_ready(page, first)  # 2: a drag, then a label key
        clear_all(page)
        drag(page, 1, 2)
        page.keyboard.press("3")
        labeled[second] = iob(len(harness.tokens(page)), ("LOC", 1, 3))
        assert harness.shown_tags(page) == labeled[second]
        page.screenshot(path=str(ARTIFACTS / "annotate.png"), full_page=True)
        answer(page)

        third = harness.wait_ready(page, second)  # 3: keyboard only
        clear_all(page)
        page.keyboard.press("Escape")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("4")
        labeled[third] = iob(len(harness.tokens(page)), ("MISC", 0, 1))
        answer(page)
        fourth = harness.wait_ready(page, third)
        page.get_by_text(f"Saved sentence #{third}.").wait_for()

        page.get_by_role("button", name="Undo last").click()  # the button; "u" is the key
        assert harness.wait_ready(page, fourth) == third
        assert harness.shown_tags(page) == labeled[third]  # the undone labels come back
        del labeled[third]
        page.get_by_test_id("stMetricValue").nth(1).filter(has_text="2").wait_for()

        harness.sign_out(page)
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Export").click()
        page.get_by_role("heading", name="Export").wait_for()
        with page.expect_download() as info:
            page.get_by_role("button", name="Download CONLL").click()
        exported = tmp_path / "export.conll"
        info.value.save_as(exported)

    current = {e.sentence_id: e for e in repo.current_annotations(s.engine, s.demo)}
    assert {sid: e.tags for sid, e in current.items()} == labeled
    assert all(e.user_id == s.arno and 0 < e.seconds < 600 for e in current.values())
    assert [e.status for e in repo.annotation_history(s.engine, third)] == ["submitted", "undone"]
    sentences = list(read_conll(exported))
    by_tokens = {tuple(repo.get_sentence(s.engine, sid).tokens): t for sid, t in labeled.items()}
    assert {tuple(x.tokens): x.tags for x in sentences} == by_tokens


# Tokens hold no whitespace (the readers refuse it), so attributes are separated by "/", which
# HTML parsers accept as well.
HOSTILE_TOKENS = [
    "<img/src=x/onerror=window.__pwned=1>",
    "<script>window.__pwned=2</script>",
    '"><svg/onload=window.__pwned=3>',
    "<b>bold</b>",
    "**star**",
    "[link](javascript:window.__pwned=4)",
    "&lt;amp&gt;",
    ":red[red]",
    "$x^2$",
    "{{7*7}}",
    "');window.__pwned=5;('",
]
HOSTILE_USER = '<img src=x onerror="window.__pwned=6">'
HOSTILE_PROJECT = "<b>bold</b> <script>window.__pwned=7</script>"
HOSTILE_FILE = "<svg onload=window.__pwned=8>.jsonl"
INJECTED = """() => {
  const found = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      for (const a of el.attributes) if (a.name.startsWith('on')) found.push(`${el.tagName} ${a.name}`);
      if (el.tagName === 'IMG' && el.getAttribute('src') === 'x') found.push('img src=x');
      if (el.tagName === 'SCRIPT' && el.textContent.includes('__pwned')) found.push('script');
      if (el.tagName === 'B' && el.textContent === 'bold') found.push('b');
      if (el.tagName === 'A' && (el.getAttribute('href') || '').startsWith('javascript')) found.push('a');
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return { found, pwned: window.__pwned === undefined ? null : window.__pwned };
}"""


def test_hostile_text_is_shown_never_run(tmp_path: Path) -> None:
    import json

    from db import imports
    from db.service import tagset

    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    ids = harness.seed(url, [("lena", PASSWORD, "lead"), (HOSTILE_USER, PASSWORD, "annotator")])
    engine = open_database(url)
    project = repo.create_project(
        engine, HOSTILE_PROJECT, {"tagset": tagset(["PER"], "IOB2"), "feature_template": "ner"}
    )
    repo.set_member(engine, project, ids[HOSTILE_USER], "annotator")
    data = (json.dumps({"tokens": HOSTILE_TOKENS}) + "\n").encode()
    imports.import_bytes(engine, project, data, HOSTILE_FILE, split="pool")

    with harness.app_server(url, tmp_path) as base, harness.chromium() as page:
        harness.sign_in(page, base, HOSTILE_USER, PASSWORD)
        harness.wait_ready(page)
        assert harness.tokens(page) == HOSTILE_TOKENS
        page.get_by_text(f"{HOSTILE_USER} (annotator)", exact=True).wait_for()
        page.get_by_text(HOSTILE_PROJECT, exact=True).first.wait_for()
        page.wait_for_timeout(500)  # time for an injected onerror / onload to fire
        assert page.evaluate(INJECTED) == {"found": [], "pwned": None}

        harness.sign_out(page)
        harness.sign_in(page, base, "lena", PASSWORD)
        page.get_by_role("link", name="Files & settings").click()
        page.locator('input[type="file"]').set_input_files(
            {"name": HOSTILE_FILE, "mimeType": "application/json", "buffer": b'{"tokens": 1}\n'}
        )
        chip = page.get_by_test_id("stFileChipName")  # the uploader lists the file by name
        chip.wait_for()
        assert chip.get_attribute("title") == HOSTILE_FILE
        page.get_by_role("button", name="Add file", exact=True).click()
        refusal = page.get_by_text(f"{HOSTILE_FILE} was refused at line 1")
        refusal.wait_for()
        page.wait_for_timeout(500)
        assert page.evaluate(INJECTED) == {"found": [], "pwned": None}
        # The detector itself works: real markup put in the page is found.
        page.evaluate("() => document.body.insertAdjacentHTML('beforeend', '<b>bold</b>')")
        assert page.evaluate(INJECTED)["found"] == ["b"]


def test_pre_filled_labels_are_marked_until_changed(tmp_path: Path) -> None:
    s = fresh_store(tmp_path)
    env = {"CWAL_TEST_USER": str(s.arno), "CWAL_TEST_PREDICTS": "1"}
    with (
        harness.app_server(s.url, tmp_path, script="tests/app/editor_app.py", env=env) as base,
        harness.chromium() as page,
    ):
        page.goto(base)
        harness.wait_ready(page)
        tags = harness.shown_tags(page)
        assert tags[0] == "B-PER" and tags[-1] == "O"  # the unsure LOC is left blank
        first = harness.token(page, 0)
        assert "pre" in first.get_attribute("class").split()
        assert first.evaluate("n => getComputedStyle(n).borderTopStyle") == "dashed"
        assert page.get_by_text("labels were pre-filled by the model").count() == 1
        first.click()
        page.keyboard.press("2")  # the annotator relabels it: their label, not marked any more
        assert harness.shown_tags(page)[0] != "B-PER"
        assert "pre" not in first.get_attribute("class").split()
        assert first.evaluate("n => getComputedStyle(n).borderTopStyle") == "solid"
