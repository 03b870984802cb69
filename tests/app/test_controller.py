"""The annotate page's controller and the editor's Python side, without a browser."""

from __future__ import annotations

import dataclasses
import json
import re
import threading

import pytest

from db import repository as repo
from tests.app.fakes import FakeSession
from ui import editor
from ui.annotate import Annotator
from ui.safe import md


@pytest.fixture
def annotator(store, users, demo):
    project = repo.get_project(store.engine, demo)
    session = FakeSession(store.engine, demo)
    return Annotator(session, users.annotator, project, {}), session


def test_submit_stores_the_spans_as_tags_of_the_signed_in_user(store, users, annotator) -> None:
    ann, session = annotator
    cur = ann.current()
    n = len(cur["tokens"])
    payload = {"kind": "submit", "sid": cur["sid"], "spans": [["LOC", 1, 3]], "seconds": 4.25}
    payload["user_id"] = users.lead.id  # ignored: the user comes from the session
    ann.handle(payload)
    (event,) = repo.current_annotations(store.engine, ann.project_id)
    assert event.user_id == users.annotator.id
    assert event.tags == ["O", "B-LOC", "I-LOC"] + ["O"] * (n - 3)
    assert event.seconds == 4.25
    assert ann.current()["sid"] != cur["sid"]


def test_the_next_sentences_are_leased_ahead_and_come_in_order(store, users, annotator) -> None:
    ann, _ = annotator
    data = ann.payload()
    ahead = [v["sid"] for v in data["upcoming"]]
    assert len(ahead) == 2
    held = {x.sentence_id for x in repo.active_leases(store.engine, ann.project_id)}
    assert held == {data["sid"], *ahead}
    ann.handle({"kind": "skip", "sid": data["sid"]})
    after = ann.payload()
    assert [after["sid"], after["upcoming"][0]["sid"]] == ahead
    assert after["upcoming"][1]["sid"] not in (data["sid"], *ahead)


def test_a_second_enter_on_an_answered_sentence_is_ignored(store, annotator) -> None:
    ann, session = annotator
    sid = ann.current()["sid"]
    ann.handle({"kind": "submit", "sid": sid, "spans": [], "seconds": 1})
    ann.handle({"kind": "submit", "sid": sid, "spans": [], "seconds": 1})
    assert ann.payload()["message"] == (
        f"Not saved: sentence #{sid} was already answered (or given back); "
        "the sentence to label now is on screen."
    )  # said, not silently dropped
    ann.handle({"kind": "skip", "sid": sid})
    assert [s for s, _, _ in session.submitted] == [sid]
    assert [e.status for e in repo.annotation_history(store.engine, sid)] == ["submitted"]


def test_a_page_drawn_during_a_slow_submit_waits_and_never_shows_the_saved_sentence(
    store, users, demo
) -> None:
    """A rerun starts a second script thread while the first is still saving (Streamlit's fast
    reruns): the page it draws must wait for the save, not show the sentence being saved."""
    project = repo.get_project(store.engine, demo)
    session, session_state = FakeSession(store.engine, demo), {}
    ann = Annotator(session, users.annotator, project, session_state)
    sid = ann.current()["sid"]
    entered, release = threading.Event(), threading.Event()
    saving = session.submit

    def slow_submit(*args, **kwargs):
        entered.set()
        release.wait(10)
        return saving(*args, **kwargs)

    session.submit = slow_submit
    action = threading.Thread(
        target=ann.handle, args=({"kind": "submit", "sid": sid, "spans": [], "seconds": 1},)
    )
    action.start()
    assert entered.wait(10)
    drawn: list[dict] = []

    def new_script_run() -> None:
        drawn.append(Annotator(session, users.annotator, project, session_state).payload())

    page = threading.Thread(target=new_script_run)
    page.start()
    page.join(0.5)
    assert page.is_alive(), "the page did not wait for the save in progress"
    release.set()
    action.join(10)
    page.join(10)
    assert drawn[0]["sid"] != sid
    assert drawn[0]["message"] == f"Saved sentence #{sid}."


@pytest.mark.parametrize(
    "spans",
    [
        [["EVIL", 0, 1]],  # not a type of the project
        [["PER", 0, 99]],  # outside the sentence
        [["PER", 0, 2], ["LOC", 1, 3]],  # overlapping
        [["PER", True, 2]],  # not integers
        "B-PER",  # not a list
    ],
)
def test_malformed_spans_are_refused_with_a_message(store, annotator, spans) -> None:
    ann, session = annotator
    sid = ann.current()["sid"]
    ann.handle({"kind": "submit", "sid": sid, "spans": spans, "seconds": 1})
    assert session.submitted == []
    assert ann.s["message"].startswith("Not saved:")
    assert ann.current()["sid"] == sid  # still on screen, to fix


def test_undo_brings_the_sentence_back_with_its_labels(store, annotator) -> None:
    ann, _ = annotator
    sid = ann.current()["sid"]
    ann.handle({"kind": "submit", "sid": sid, "spans": [["ORG", 0, 2]], "seconds": 2})
    ann.handle({"kind": "undo"})
    back = ann.current()
    assert back["sid"] == sid
    assert back["tags"][:3] == ["B-ORG", "I-ORG", "O"]
    ann.handle({"kind": "undo"})  # nothing left to undo
    assert ann.s["message"] == "Nothing to undo."


@pytest.mark.parametrize("seconds", [-1, float("nan"), "3", True, 1e9])
def test_implausible_times_are_not_stored(store, annotator, seconds) -> None:
    ann, session = annotator
    sid = ann.current()["sid"]
    ann.handle({"kind": "submit", "sid": sid, "spans": [], "seconds": seconds})
    assert session.submitted[0][2] is None


def test_the_payload_is_plain_json() -> None:
    current = editor.sentence(
        sid=3,
        tokens=["<b>x</b>", "y"],
        tags=["I-PER", "O"],  # invalid IOB2: repaired for display
        scheme="IOB2",
        confidence=[float("nan"), 0.5],
        least=1,
    )
    upcoming = editor.sentence(sid=4, tokens=["z"], tags=None, scheme="IOB2")
    data = editor.payload(current, [upcoming], types=["PER"], rev=1)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert (data["sid"], data["upcoming"][0]["sid"], data["rev"]) == (3, 4, 1)
    assert data["spans"] == [["PER", 0, 1]]
    assert data["confidence"] == [None, 0.5]
    assert data["tokens"] == ["<b>x</b>", "y"]
    empty = editor.payload(None, types=["PER"], rev=2, empty="done")
    assert (empty["sid"], empty["tokens"], empty["upcoming"], empty["empty"]) == (
        None,
        [],
        [],
        "done",
    )


def test_spans_become_tags_of_the_project_scheme() -> None:
    spans = [["PER", 0, 1], ["PER", 1, 3]]
    assert editor.spans_to_tags(spans, 4, "BIOES", ["PER"]) == ["S-PER", "B-PER", "E-PER", "O"]
    assert editor.spans_to_tags(spans, 4, "IOB1", ["PER"]) == ["I-PER", "B-PER", "I-PER", "O"]


def test_label_keys_skip_the_action_keys() -> None:
    keys = [k["key"] for k in editor.label_keys([f"T{i}" for i in range(12)])]
    assert keys[:9] == [str(d) for d in range(1, 10)] and "s" not in keys and "u" not in keys
    assert len(set(keys)) == 12


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "**bold** _it_",
        "[a](javascript:x)",
        ":red[x] $y$",
        "a\\b &amp;",
    ],
)
def test_md_escapes_every_markdown_and_html_character(text: str) -> None:
    escaped = md(text)
    assert re.sub(r"\\(.)", r"\1", escaped) == text  # only backslashes were added
    unescaped = re.sub(r"\\.", "", escaped)  # what is left outside escapes is plain text
    assert not set(unescaped) & set("<>*_[]()`:$&\\#|~!")
    assert md("two\nlines") == "two lines"


@pytest.mark.parametrize("failure", ["busy", "database"])
def test_a_failed_save_keeps_the_labels_on_screen(store, annotator, monkeypatch, failure) -> None:
    ann, session = annotator
    cur = ann.current()
    n = len(cur["tokens"])

    def refuse(*args, **kwargs):
        if failure == "busy":
            raise repo.DatabaseBusyError("the database stayed busy, so the label was not saved")
        raise repo.StoreFailedError("the database could not do it (details in the server log)")

    monkeypatch.setattr(session, "submit", refuse)
    ann.handle({"kind": "submit", "sid": cur["sid"], "spans": [["LOC", 0, 2]], "seconds": 2})
    data = ann.payload()
    assert data["message"].startswith("Not saved:")
    assert "Traceback" not in data["message"] and "INSERT" not in data["message"]
    assert data["sid"] == cur["sid"]  # still the same sentence, with the labels given
    assert ann.current()["tags"] == ["B-LOC", "I-LOC"] + ["O"] * (n - 2)
    assert repo.current_annotations(store.engine, ann.project_id) == []


class _Predicting(FakeSession):
    """Predicts PER on the first two tokens (sure) and LOC on the last (unsure)."""

    def next(self, annotator_id: int, n: int = 1):
        out = []
        for s in super().next(annotator_id, n):
            k = len(s.tokens)
            pred = ["B-PER", "I-PER"] + ["O"] * (k - 3) + ["B-LOC"]
            conf = [0.95, 0.9] + [0.99] * (k - 3) + [0.4]
            out.append(dataclasses.replace(s, predicted=pred, confidence=conf))
        return out


def test_only_confident_spans_are_pre_filled_and_marked(store, users, demo) -> None:
    project = repo.get_project(store.engine, demo)
    ann = Annotator(_Predicting(store.engine, demo), users.annotator, project, {})
    data = ann.payload()
    assert len(data["tokens"]) > 3
    assert data["spans"] == [["PER", 0, 2]]  # the unsure LOC is left blank
    assert data["pre"] == [["PER", 0, 2]]  # and the editor marks the PER as the model's
    assert all(v["pre"] == v["spans"] == [["PER", 0, 2]] for v in data["upcoming"])
    # after an undo the sentence comes back with the user's own labels, not marked
    n = len(data["tokens"])
    ann.handle({"kind": "submit", "sid": data["sid"], "spans": [["ORG", 1, 3]], "seconds": 1})
    ann.handle({"kind": "undo"})
    again = ann.payload()
    assert again["sid"] == data["sid"] and n == len(again["tokens"])
    assert again["spans"] == [["ORG", 1, 3]] and again["pre"] == []
