"""Roles are enforced by every lead page and every lead action, not only by hiding links."""

from __future__ import annotations

import inspect

import pytest

from db import repository as repo
from db import simulations as sims
from db.service import Forbidden, Service, guarded_actions
from tests.app.conftest import REPO, app
from ui import state

OPEN_PAGES = {"login.py", "annotate.py", "progress.py", "guidelines.py"}
LEAD_PAGES = sorted(p.name for p in (REPO / "pages").glob("*.py") if p.name not in OPEN_PAGES)
LEAD_ACTIONS = [n for n in guarded_actions() if getattr(Service, n).lead_only]
# what anyone may call: signing in and out, and reads of one's own account and work
OPEN_CALLS = {
    "needs_setup", "sign_in", "resume", "user", "sign_out", "create_first_lead", "project_role",
    "projects_of", "backup_hint", "is_member", "undone_tags", "counters", "label_changes_since",
    "change_own_password",
}  # fmt: skip
INTERACTIVE = ("button", "download_button", "file_uploader", "text_input", "dataframe", "form")


def test_every_page_is_known() -> None:
    assert {"projects.py", "add_files.py", "export.py", "users.py"} <= set(LEAD_PAGES)


@pytest.mark.parametrize("page", LEAD_PAGES)
def test_an_annotator_is_refused_on_every_lead_page(store, users, demo, page) -> None:
    at = app(f"pages/{page}", user=users.annotator).run()
    assert not at.exception
    assert [e.value for e in at.error] in (
        ["This page is for leads only."],
        ["This page is for the project's leads and reviewers."],
    )
    for kind in INTERACTIVE:
        assert not at.get(kind), f"{page} shows a {kind} to an annotator"
    lead_view = app(f"pages/{page}", user=users.lead).run()
    assert not lead_view.exception
    assert not lead_view.error
    if page == "compare_strategies.py" and not any(lead_view.get(k) for k in INTERACTIVE):
        # the demo project has no gold data: the lead is told how to add it instead of a form
        assert "gold" in " ".join(i.value for i in lead_view.info), "no explanation for the lead"
        return
    assert any(lead_view.get(kind) for kind in INTERACTIVE), f"{page} shows a lead nothing"


@pytest.mark.parametrize("page", [*LEAD_PAGES, "annotate.py", "progress.py"])
def test_a_signed_out_visitor_is_refused_everywhere(store, users, demo, page) -> None:
    at = app(f"pages/{page}").run()
    assert not at.exception
    assert [w.value for w in at.warning] == ["Please sign in first."]
    for kind in INTERACTIVE:
        assert not at.get(kind)


def _arguments(engine, name: str, project_id: int, user_id: int) -> tuple:
    sentence_id = repo.sentence_ids(engine, project_id)[0]
    words = len(repo.get_sentence(engine, sentence_id).tokens)
    return {
        "save_fix": (project_id, sentence_id, ["O"] * words, 2.0),
        "undo_fix": (project_id,),
        "start_comparison": (project_id, None, "sneaky comparison"),
        "add_label_type": (project_id, "EVENT"),
        "update_label_type": (project_id, "PER"),
        "remove_label_type": (project_id, "MISC", repo.DROP),
        "create_project": ("Sneaky", {}),
        "import_upload": (project_id, b'{"tokens": ["x"]}\n', "x.jsonl"),
        "create_demo_project": (),
        "update_settings": (project_id, {"learner": "pa"}),
        "export_file": (project_id, "conll"),
        "list_users": (),
        "add_user": ("mallory", "a long password", "lead"),
        "set_role": (user_id, "lead"),
        "set_password": (user_id, "a long password"),
        "set_member": (project_id, user_id, "lead"),
        "remove_member": (project_id, user_id),
        "list_members": (project_id,),
        "accounts": (project_id,),
        "set_overlap": (project_id, 0.5, 2),
        "save_guidelines": (project_id, "# Rules"),
        "resolve_flag": (project_id, 1, "fixed"),
        "backup_database": (),
        "discard_import": (project_id, 1),
        "set_disabled": (user_id, True),
    }[name]


def test_every_service_call_is_guarded_or_open_to_all() -> None:
    public = {n for n, _ in inspect.getmembers(Service, inspect.isfunction) if n[0] != "_"}
    assert public - set(guarded_actions()) == OPEN_CALLS
    assert {"set_role", "set_member", "remove_member", "save_fix"} <= set(LEAD_ACTIONS)


@pytest.mark.parametrize("name", LEAD_ACTIONS)
def test_an_annotator_is_refused_every_lead_action(store, users, demo, name, monkeypatch) -> None:
    monkeypatch.setattr(sims, "launch", lambda url, key: None)  # no background simulation
    action = getattr(state.service(), name)
    before = (
        repo.list_users(store.engine),
        repo.list_projects(store.engine),
        repo.count_sentences(store.engine, demo),
        repo.last_annotation_id(store.engine, demo),
    )
    args = _arguments(store.engine, name, demo, users.annotator.id)
    kwargs = {"color": "#123456"} if name == "update_label_type" else {}
    with pytest.raises(Forbidden):
        action(users.annotator, *args, **kwargs)
    after = (
        repo.list_users(store.engine),
        repo.list_projects(store.engine),
        repo.count_sentences(store.engine, demo),
        repo.last_annotation_id(store.engine, demo),
    )
    assert after == before
    action(users.lead, *args, **kwargs)  # the same call is allowed to a lead


def test_a_demoted_lead_loses_lead_actions_at_once(store, users) -> None:
    stale = users.lead  # as the browser session saw them at sign-in
    other = repo.add_user(store.engine, "olga", "a long password", role="lead")
    service = Service(store.engine)
    service.set_role(repo.get_user(store.engine, other), stale.id, "annotator")
    with pytest.raises(Forbidden):
        service.list_users(stale)


def test_the_last_lead_cannot_be_demoted(store, users) -> None:
    with pytest.raises(repo.InvalidValueError):
        Service(store.engine).set_role(users.lead, users.lead.id, "annotator")
    assert repo.get_user(store.engine, users.lead.id).role == "lead"
