"""The team pages with AppTest: overlap set on Members, Agreement's figures against hand values,
Adjudication's accept / edit ending as the gold the live model learns."""

from __future__ import annotations

import pytest

from db import repository as repo
from db.store import SqlStore
from tests.app.conftest import PASSWORD, app, editor_data

A = ["B-PER", "I-PER", "O", "B-LOC"]
B = ["B-PER", "O", "O", "B-LOC"]


@pytest.fixture
def team(store, users, demo, fake_live):
    engine = store.engine
    bob = repo.add_user(engine, "bob", PASSWORD)
    rita = repo.add_user(engine, "rita", PASSWORD)
    repo.set_member(engine, demo, bob, "annotator")
    repo.set_member(engine, demo, rita, "reviewer")
    at = app("pages/members.py", user=users.lead).run()
    at.slider[0].set_value(100)
    at.number_input[0].set_value(2)
    at.button[1].click().run()  # "Save overlap" (the forms: set_member, overlap, remove)
    assert repo.get_overlap(engine, demo) == (1.0, 2)
    first = repo.list_sentences(engine, demo, split="pool")[0]
    n = len(first.tokens)
    repo.submit_annotation(engine, first.id, users.annotator.id, A + ["O"] * (n - 4))
    repo.submit_annotation(engine, first.id, bob, B + ["O"] * (n - 4))
    return first.id, repo.get_user(engine, rita), n


def test_agreement_page_shows_the_hand_computed_figures(store, users, demo, team):
    sid, rita, n = team
    at = app("pages/agreement.py", user=rita).run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    # spans arno {PER 0-2, LOC 3}, bob {PER 0-1, LOC 3}: 1 exact match of 2 + 2
    assert metrics["span F1 exact"] == "50.0%"  # F1 in percent, kappa a coefficient
    assert metrics["span F1 partial"] == "75.0%"  # PER overlaps: one half
    # n tokens, all but one agree; arno: PER 2, LOC 1, O n-3; bob: PER 1, LOC 1, O n-2
    po, pe = (n - 1) / n, (2 * 1 + 1 * 1 + (n - 3) * (n - 2)) / n**2
    assert metrics["Cohen's kappa"] == f"{(po - pe) / (1 - pe):.3f}"


def test_an_annotator_cannot_open_the_review_pages(store, users, demo, team):
    for page in ("pages/agreement.py", "pages/adjudication.py"):
        at = app(page, user=users.annotator).run()
        assert [e.value for e in at.error] == [
            "This page is for the project's leads and reviewers."
        ]
        assert not at.dataframe


def test_adjudication_accepts_a_version_as_the_gold(store, users, demo, team):
    sid, rita, n = team
    at = app("pages/adjudication.py", user=rita).run()
    assert not at.exception
    assert at.dataframe[0].value["sentence"].tolist() == [sid]
    accept = next(b for b in at.button if b.label == "Accept bob")
    accept.click().run()
    assert not at.exception
    (gold,) = repo.current_annotations(store.engine, demo)
    assert (gold.sentence_id, gold.tags, gold.annotator) == (sid, B + ["O"] * (n - 4), "rita")
    assert at.success[0].value.startswith(f"Sentence #{sid} settled (accept)")
    # what the live model replays: the gold only, never the versions
    log = SqlStore(store.engine).log_after(demo, 0)
    assert [r.annotator_id if hasattr(r, "annotator_id") else r.user_id for r in log
            if r.status == "submitted"] == [rita.id]  # fmt: skip


def test_adjudication_edit_is_checked_and_stored(store, users, demo, team):
    sid, rita, n = team
    at = app("pages/adjudication.py", user=rita).run()
    # the merge: LOC (both versions), and of the two PER spans (one vote each) the longer
    assert at.text_input[0].value.split() == A + ["O"] * (n - 4)
    save = next(b for b in at.button if b.label == "Save as gold")
    at.text_input[0].set_value("O O O")
    save.click().run()  # Save as gold: 3 tags for n tokens is refused
    assert at.error and repo.current_annotations(store.engine, demo) == []
    edited = ["B-PER", "I-PER"] + ["O"] * (n - 2)
    at.text_input[0].set_value(" ".join(edited))
    next(b for b in at.button if b.label == "Save as gold").click().run()
    (gold,) = repo.current_annotations(store.engine, demo)
    assert gold.tags == edited


def test_guidelines_written_by_the_lead_reach_the_annotator_and_flags_come_back(
    store, users, demo, fake_live
):
    at = app("pages/guidelines.py", user=users.lead).run()
    at.text_area[0].set_value("# Rules\n\nTag <b>persons</b> as **PER**.")
    next(b for b in at.button if b.label == "Save as a new version").click().run()
    assert not at.exception
    assert repo.latest_guidelines(store.engine, demo).version == 1
    ann = app("pages/annotate.py", user=users.annotator).run()
    assert not ann.exception
    (box,) = [e for e in ann.expander if e.label.startswith("Guidelines (version 1)")]
    shown = [m.value for m in box.markdown]
    assert "# Rules\n\nTag <b>persons</b> as **PER**." in shown  # st.markdown: no raw HTML
    sid = editor_data(ann)["sid"]
    flag = next(t for t in ann.text_input if t.label.startswith(f"Flag sentence #{sid}"))
    flag.set_value("Is Acme a person?")
    next(b for b in ann.button if b.label == "Flag sentence").click().run()
    (f,) = repo.list_flags(store.engine, demo)
    assert (f.sentence_id, f.author, f.comment) == (sid, "arno", "Is Acme a person?")
    lead = app("pages/guidelines.py", user=users.lead).run()
    assert lead.dataframe[0].value["comment"].tolist() == ["Is Acme a person?"]
    lead.text_input[0].set_value("Not a person: ORG")
    next(b for b in lead.button if b.label == "Resolve").click().run()
    assert repo.list_flags(store.engine, demo) == []
    # the annotator reads the guidelines but gets no editor and no flags list
    reader = app("pages/guidelines.py", user=users.annotator).run()
    assert not reader.text_area and not reader.dataframe
