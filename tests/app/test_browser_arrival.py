"""Arriving on Annotate the way a user does, in a real Chromium: after the sign-in form, from the
sidebar, with the back button; the keys work at once (no click into the sentence), the editor
shows a focus ring, and ``?`` lists the keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from db import repository as repo
from tests.app import harness
from tests.app.conftest import PASSWORD
from tests.app.test_browser import fresh_store

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(harness.CHROMIUM).exists() and not os.environ.get("CI"),
        reason="Debian chromium not installed (scripts/test.sh installs it; CI never skips)",
    ),
]

FOCUSED = """() => {
  const host = document.activeElement;
  const inner = host && host.shadowRoot ? host.shadowRoot.activeElement : null;
  if (!inner || !inner.classList.contains('cw-editor')) return null;
  return getComputedStyle(inner).boxShadow;
}"""


def key_of(page, type_: str) -> str:
    """The key the legend shows for an entity type."""
    return page.locator(f'.cw-chip[data-type="{type_}"] kbd').inner_text()


def label_first_token_and_submit(page, engine, type_: str) -> int:
    """Keyboard only: select token 0 (arrow key), label it, submit; the sentence id once the
    editor says it was saved (checked in the store)."""
    sid = harness.wait_ready(page)
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")
    page.keyboard.press(key_of(page, type_))
    assert harness.shown_tags(page)[0] == f"B-{type_}"
    page.wait_for_timeout(300)  # not a bounce: the editor ignores Enter in its first instants
    page.keyboard.press("Enter")
    page.get_by_text(f"Saved sentence #{sid}.").wait_for(timeout=120_000)
    assert repo.annotation_history(engine, sid)[-1].tags[0] == f"B-{type_}"
    return sid


def skip_by_key(page, engine) -> int:
    """Keyboard only: skip the sentence shown; its id once the store has the skip."""
    sid = harness.wait_ready(page)
    page.wait_for_timeout(300)
    page.keyboard.press("s")
    harness.wait_ready(page, sid)
    page.get_by_text(f"Skipped sentence #{sid}.").wait_for()
    assert repo.annotation_history(engine, sid)[-1].status == "skipped"
    return sid


def test_keys_work_on_arrival_without_a_click(tmp_path: Path) -> None:
    s = fresh_store(tmp_path)
    with harness.app_server(s.url, tmp_path) as base, harness.chromium() as page:
        page.set_default_timeout(120_000)  # a hang guard: the machine may be busy
        # 1. After the sign-in form (the Sign in button had the focus).
        harness.sign_in(page, base, "arno", PASSWORD)
        harness.wait_ready(page)
        ring = page.evaluate(FOCUSED)
        assert ring is not None, "the editor does not have the focus after sign-in"
        assert ring != "none", "the focused editor shows no focus ring"
        label_first_token_and_submit(page, s.engine, "PER")

        # 2. "?" lists the keys (each label's key among them), again hides them.
        keys = page.locator(".cw-keys")
        assert not keys.is_visible()
        page.keyboard.press("?")
        keys.wait_for(state="visible")
        assert "submit the sentence" in keys.inner_text()
        assert f"{key_of(page, 'LOC')}\tlabel the selected tokens LOC" in keys.inner_text()
        page.keyboard.press("?")
        keys.wait_for(state="hidden")

        # 3. From the sidebar: a lead goes to the dashboard and back to Annotate by links.
        harness.sign_out(page)
        harness.sign_in(page, base, "lena", PASSWORD)
        harness.wait_ready(page)
        page.get_by_role("link", name="Dashboard").click()
        page.get_by_role("heading", name="Dashboard").wait_for()
        page.get_by_role("link", name="Annotate").click()
        page.get_by_role("heading", name="Annotate").wait_for()
        harness.wait_ready(page)
        assert page.evaluate(FOCUSED) is not None, "the sidebar link kept the focus"
        label_first_token_and_submit(page, s.engine, "ORG")
        skip_by_key(page, s.engine)

        # 4. With the browser's back button from another page.
        page.get_by_role("link", name="Export").click()
        page.get_by_role("heading", name="Export").wait_for()
        page.go_back()
        page.get_by_role("heading", name="Annotate").wait_for()
        harness.wait_ready(page)
        assert page.evaluate(FOCUSED) is not None, "no focus after the back button"
        label_first_token_and_submit(page, s.engine, "LOC")

        # 5. The sidebar link of the page already shown (where creating the lead account lands):
        # the editor stays, so the focus would stay on the link and Enter would follow it.
        page.get_by_role("link", name="Annotate").click()
        page.wait_for_timeout(1000)  # the rerun the click started
        harness.wait_ready(page)
        assert page.evaluate(FOCUSED) is not None, "the link of the page shown kept the focus"
        label_first_token_and_submit(page, s.engine, "MISC")


def test_first_submits_on_a_fresh_install_are_saved_while_the_model_is_prepared(
    tmp_path: Path,
) -> None:
    """A fresh install: empty numba cache, so compiling takes a minute or more. The annotator
    labels at once: each answer is confirmed and in the store while the notice still says the
    model is being prepared; once it is ready, the live model has learned every one of them."""
    s = fresh_store(tmp_path)
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    env = {"NUMBA_CACHE_DIR": str(cache)}
    notice = "Preparing the model"
    with harness.app_server(s.url, tmp_path, env=env) as base, harness.chromium() as page:
        page.set_default_timeout(120_000)  # a hang guard: the machine may be busy
        harness.sign_in(page, base, "arno", PASSWORD)
        harness.wait_ready(page)
        page.get_by_text(notice).wait_for()
        saved = []
        for type_ in ("PER", "ORG", "LOC", "MISC"):
            saved.append(label_first_token_and_submit(page, s.engine, type_))
            assert page.get_by_text(notice).is_visible(), "the save waited for the model"
        assert harness.tokens(page), "a next sentence is shown"
        page.get_by_text(notice).wait_for(state="detached", timeout=900_000)  # a hang guard
        for _ in range(3):  # the sentences leased before the model was ready ...
            label_first_token_and_submit(page, s.engine, "PER")
        info = page.locator(".cw-info").inner_text()  # ... then one the live model chose
        assert "being prepared" not in info
        version = int(info.split("model v")[1].split(" ")[0])  # the model when it was leased
        # it had learned the labels saved during the wait (the three after them may still be on
        # their way to the model: a submit does not wait for the learner thread)
        assert version >= len(saved), info
    assert [repo.annotation_history(s.engine, sid)[-1].status for sid in saved] == [
        "submitted"
    ] * len(saved)


def signed_in_as(page, name: str, role: str) -> None:
    """Wait until the sidebar says who is signed in."""
    page.get_by_text(f"{name} ({role})", exact=True).wait_for()


def session_cookie(page) -> str:
    """The sign-in cookie's value, once the browser has it (written just after sign-in)."""
    for _ in range(600):
        found = {c["name"]: c["value"] for c in page.context.cookies()}.get("cwal_session")
        if found:
            return found
        page.wait_for_timeout(200)
    raise AssertionError("the browser never got the sign-in cookie")


def sign_in_form(page) -> None:
    """Wait until the page shows the sign-in form."""
    page.get_by_role("button", name="Sign in").wait_for()


def test_refresh_and_direct_urls_keep_the_user_signed_in(tmp_path: Path) -> None:
    import hashlib

    s = fresh_store(tmp_path)
    with harness.app_server(s.url, tmp_path) as base, harness.chromium() as page:
        page.set_default_timeout(120_000)  # a hang guard: the machine may be busy
        harness.sign_in(page, base, "arno", PASSWORD)
        saved = label_first_token_and_submit(page, s.engine, "PER")
        shown = harness.wait_ready(page)
        cookie = session_cookie(page)
        page.reload()  # still signed in, on the sentence held before, the saved label kept
        signed_in_as(page, "arno", "annotator")
        assert harness.wait_ready(page) == shown
        assert repo.annotation_history(s.engine, saved)[-1].tags[0] == "B-PER"
        with s.engine.connect() as conn:  # the store keeps the token's hash, not the token
            stored = set(conn.exec_driver_sql("SELECT token_hash FROM sign_in_sessions").scalars())
        assert stored == {hashlib.sha256(cookie.encode()).hexdigest()}
        assert repo.active_leases(s.engine, s.demo)  # arno holds the sentences on screen
        page.get_by_role("button", name="Sign out").click()  # ends the session, frees them
        sign_in_form(page)
        assert not [x for x in repo.active_leases(s.engine, s.demo) if x.user_id == s.arno]
        page.reload()
        sign_in_form(page)
        assert "cwal_session" not in {c["name"] for c in page.context.cookies()}

        # A direct URL while signed out asks to sign in, then opens that page.
        page.goto(f"{base}/dashboard")
        page.get_by_label("User name").fill("lena")
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("heading", name="Dashboard").wait_for()
        session_cookie(page)
        page.goto(f"{base}/export")  # signed in: a direct URL opens the page at once
        page.get_by_role("heading", name="Export").wait_for()
        signed_in_as(page, "lena", "lead")
        repo.set_password(s.engine, s.lena, "a new password")  # ends every session of hers
        page.reload()
        sign_in_form(page)
