"""Every page of the app, run by ``streamlit.testing.v1.AppTest`` against a fresh store.

Each ``app()`` is one fresh browser visit through the router (``app.py``); ``switch_page`` runs a
page file directly, which is also how the role checks inside each page are exercised.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from cwal.io.corpus import FORMAT_NAMES, WRITE_FORMATS
from db import repository as repo
from db.service import DEMO_NAME
from tests.app.conftest import PASSWORD, app, editor_data
from tests.app.fakes import FakeSession
from ui import state


def texts(at) -> str:
    """Every piece of visible text of the last run, for assertions."""
    parts = [
        e.value
        for kind in ("title", "subheader", "caption", "markdown", "text")
        for e in at.get(kind)
    ]
    parts += [e.value for kind in ("error", "warning", "info", "success") for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def test_first_start_creates_the_lead_and_the_demo(store, capfd) -> None:
    at = app().run()
    assert not at.exception
    assert "first lead" in texts(at)
    token = (store.tmp / "setup-token").read_text().strip()
    assert token in capfd.readouterr().err  # printed on the server console
    at.text_input[0].input("lena")
    at.text_input[1].input(PASSWORD)
    at.text_input[2].input(PASSWORD)
    at.text_input[3].input("not the token")
    at.button[0].click().run()
    assert "setup token" in at.error[0].value
    assert repo.list_users(store.engine) == []
    at.text_input[3].input(token)
    at.button[0].click().run()
    assert not at.exception
    assert not (store.tmp / "setup-token").exists()  # used once
    lead = repo.find_user(store.engine, "lena")
    assert lead is not None and lead.role == "lead"
    assert at.session_state["cw_user_id"] == lead.id
    demo = repo.find_project(store.engine, DEMO_NAME)
    counts = repo.project_counts(store.engine, demo.id)
    assert (counts.pool, counts.eval) == (320, 100)


def test_setup_refuses_mismatched_passwords(store) -> None:
    at = app().run()
    at.text_input[0].input("lena")
    at.text_input[1].input(PASSWORD)
    at.text_input[2].input(PASSWORD + "x")
    at.button[0].click().run()
    assert "differ" in at.error[0].value
    assert repo.list_users(store.engine) == []


def test_sign_in(store, users) -> None:
    at = app().run()
    assert "first lead" not in texts(at)
    at.text_input[0].input("arno")
    at.text_input[1].input("wrong password")
    at.button[0].click().run()
    assert "wrong password" in at.error[0].value
    assert "cw_user_id" not in at.session_state
    at.text_input[1].input(PASSWORD)
    at.button[0].click().run()
    assert at.session_state["cw_user_id"] == users.annotator.id


def test_annotate_shows_the_next_sentence_in_the_editor(store, users, demo) -> None:
    at = app(user=users.annotator).run()
    assert not at.exception
    assert at.title[0].value == "Annotate"
    data = editor_data(at)
    first = repo.get_sentence(store.engine, data["sid"])
    assert data["tokens"] == first.tokens
    assert [label["type"] for label in data["labels"]] == ["PER", "ORG", "LOC", "MISC"]
    assert [label["key"] for label in data["labels"]] == ["1", "2", "3", "4"]
    assert data["confidence"] is None  # cold start: no model yet, no shading
    assert [m.label for m in at.metric] == ["Today", "Total", "Skipped", "Time per sentence"]
    # The sentence on screen and the next ones (which Enter shows at once) are leased to them.
    leases = repo.active_leases(store.engine, demo)
    ahead = {v["sid"] for v in data["upcoming"]}
    assert len(ahead) == 2
    assert {x.sentence_id for x in leases if x.user_id == users.annotator.id} == {
        data["sid"],
        *ahead,
    }
    for view in data["upcoming"]:
        assert view["tokens"] == repo.get_sentence(store.engine, view["sid"]).tokens
    # The sentences around it in its document, as plain text.
    before, after = repo.document_context(store.engine, data["sid"])
    assert before or after
    (context,) = [e for e in at.expander if e.label == "Document context"]
    assert [t.value for t in context.text] == [" ".join(t) for t in before + after]

    # After one label the next sentence comes pre-filled, shaded and with a least-confident mark.
    service = state.live(demo)
    tags = ["B-PER"] + ["O"] * (len(first.tokens) - 1)
    service.submit(first.id, tags, users.annotator.id, 2.0)
    service.wait_idle(60)
    at = app(user=users.annotator).run()
    data = editor_data(at)
    assert data["sid"] != first.id
    assert len(data["confidence"]) == len(data["tokens"])
    assert all(0.0 <= c <= 1.0 for c in data["confidence"])
    assert data["confidence"][data["least"]] == min(data["confidence"])
    assert {m.label: m.value for m in at.metric}["Total"] == "1"


def test_annotator_sees_only_annotation_pages(store, users, demo) -> None:
    at = app(user=users.annotator).run()
    sidebar = [t.value for t in at.sidebar.text]
    assert sidebar == ["arno (annotator)"]
    lead_view = app(user=users.lead).run()
    assert not lead_view.exception


def test_progress_page(store, users, demo) -> None:
    session = FakeSession(store.engine, demo)
    (s,) = session.next(users.annotator.id)
    session.submit(s.sentence_id, ["O"] * len(s.tokens), users.annotator.id, 3.5)
    at = app(user=users.annotator)
    at.run()
    at.switch_page("pages/progress.py").run()
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    assert values["Labeled today"] == "1" and values["Labeled in total"] == "1"
    assert values["Time per sentence"] == "3.5 s"


def test_projects_page_creates_the_demo(store, users) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/projects.py").run()
    assert not at.exception
    demo_button = next(b for b in at.button if b.label == "Create the demo project")
    demo_button.click().run()
    assert not at.exception
    assert repo.find_project(store.engine, DEMO_NAME) is not None


CONLL = b"Anna B-PER\nlives O\nin O\nTarnsby B-LOC\n. O\n\nBo B-PER\nleft O\n\n"
BAD_CONLL = b"Anna B-PER\nlives O\n\nin O O O\n\n"


@pytest.mark.parametrize(("data", "ok"), [(CONLL, True), (BAD_CONLL, False)])
def test_projects_page_creates_a_project_from_a_file(store, users, data, ok) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/projects.py").run()
    at.text_input[0].input("My NER")
    at.file_uploader[0].upload("news.conll", data)
    at.button[-1].click().run()
    assert not at.exception
    project = repo.find_project(store.engine, "My NER")
    if ok:
        assert project is not None
        assert project.settings["tagset"] == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
        assert repo.count_sentences(store.engine, project.id, "pool") == 2
        assert "Project created" in texts(at)
    else:
        assert project is None  # nothing stored for a bad file
        assert "line 4" in at.error[0].value


def test_add_files_page(store, users, demo) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/add_files.py").run()
    assert not at.exception
    more = b'{"tokens": ["Kaia", "Vossholt", "smiled", "."]}\n'
    at.file_uploader[0].upload("more.jsonl", more)
    next(b for b in at.button if b.label == "Add file").click().run()
    assert not at.exception
    assert repo.count_sentences(store.engine, demo, "pool") == 321


def test_add_files_page_deletes_an_unfinished_import(store, users, demo) -> None:
    from cwal.io import Sentence
    from db.engine import write_transaction
    from db.repository.sentences import add_sentences, create_batch, finish_batch

    with write_transaction(store.engine) as conn:  # what a killed import leaves behind
        batch = create_batch(conn, demo, "big.conll", "f" * 64, "conll", "pool", state="importing")
        add_sentences(conn, demo, batch, "big.conll", "pool", 0, [Sentence(["x"], ["O"])] * 3)
        finish_batch(conn, batch, 3)
    assert repo.count_sentences(store.engine, demo, "pool") == 320  # staged: invisible
    at = app("pages/add_files.py", user=users.lead).run()
    assert any("is unfinished: 3 sentences staged" in w.value for w in at.warning)
    next(b for b in at.button if b.label == f"Delete unfinished import #{batch}").click().run()
    assert not at.exception and not at.warning
    assert repo.incomplete_imports(store.engine, demo) == []


def test_export_page(store, users, demo) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/export.py").run()
    assert not at.exception
    assert [b.label for b in at.get("download_button")] == [
        "Download CoNLL columns",
        "Export backup",
    ]
    assert list(at.selectbox[-1].options) == [FORMAT_NAMES[f] for f in WRITE_FORMATS]
    at.selectbox[-1].set_value("prodigy").run()
    assert not at.exception
    assert at.get("download_button")[0].label == "Download Prodigy JSONL"


def test_add_files_page_takes_a_zip_of_brat_documents(store, users, demo) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/add_files.py").run()
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("docs/a.txt", "Kaia Vossholt smiled.\nShe left Nundvik.\n")
        z.writestr("docs/a.ann", "T1\tPER 0 13\tKaia Vossholt\nT2\tLOC 31 38\tNundvik\n")
    at.file_uploader[0].upload("docs.zip", data.getvalue())
    next(b for b in at.button if b.label == "Add file").click().run()
    assert not at.exception and not at.error
    assert repo.count_sentences(store.engine, demo, "pool") == 322
    stored = repo.list_sentences(store.engine, demo)[-2:]
    assert [s.gold_tags for s in stored] == [["B-PER", "I-PER", "O", "O"], ["O", "O", "B-LOC", "O"]]


def test_users_page_adds_an_annotator(store, users) -> None:
    at = app(user=users.lead).run()
    at.switch_page("pages/users.py").run()
    assert not at.exception
    at.text_input[0].input("nora")
    at.text_input[1].input("a long password")
    next(b for b in at.button if b.label == "Add user").click().run()
    assert not at.exception
    assert repo.find_user(store.engine, "nora").role == "annotator"


def test_a_project_without_types_gets_them_on_the_settings_page(store, users) -> None:
    from db import imports

    project = repo.create_project(store.engine, "Bare", {})
    repo.set_member(store.engine, project, users.annotator.id, "annotator")
    imports.import_bytes(store.engine, project, b'{"tokens": ["Ada", "wrote"]}\n', "a.jsonl")
    at = app("pages/annotate.py", user=users.annotator).run()
    assert "no entity types" in at.warning[0].value
    at = app("pages/add_files.py", user=users.lead).run()
    for name in ("PER", "LOC"):
        next(t for t in at.text_input if t.label == "New type").input(name)
        next(b for b in at.button if b.label == "Add type").click().run()
        assert not at.exception
    tagset = repo.get_project(store.engine, project).settings["tagset"]
    assert tagset == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    at = app("pages/annotate.py", user=users.annotator).run()
    assert not at.warning
    assert [x["type"] for x in editor_data(at)["labels"]] == ["PER", "LOC"]


def test_sign_in_is_throttled_across_browser_sessions(store, users) -> None:
    from db.repository import accounts

    for _ in range(accounts.ACCOUNT_LIMIT):  # each attempt from a new browser session
        at = app().run()
        at.text_input[0].input("arno")
        at.text_input[1].input("wrong password")
        at.button[0].click().run()
        assert "wrong password" in at.error[0].value
    at = app().run()
    at.text_input[0].input("arno")
    at.text_input[1].input(PASSWORD)  # even the right password waits
    at.button[0].click().run()
    assert "Too many failed sign-ins" in at.error[0].value
    assert "cw_user_id" not in at.session_state


def test_a_lead_disables_an_account_and_it_is_signed_out(store, users) -> None:
    signed_in = app(user=users.annotator).run()
    assert signed_in.session_state["cw_user_id"] == users.annotator.id
    at = app(user=users.lead).run()
    at.switch_page("pages/users.py").run()
    next(s for s in at.selectbox if s.label == "User").select(users.annotator.id)
    next(r for r in at.radio if r.label == "Account").set_value("disable")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception and not at.error
    assert repo.get_user(store.engine, users.annotator.id).disabled
    signed_in.run()
    assert "cw_user_id" not in signed_in.session_state  # the next run signs them out
    at = app().run()
    at.text_input[0].input("arno")
    at.text_input[1].input(PASSWORD)
    at.button[0].click().run()
    assert "disabled" in at.error[0].value and "cw_user_id" not in at.session_state
