"""Membership: a user sees and opens only their projects, and every service call checks it.

The isolation test signs an annotator of project A in on every page, with project B forced as
the session's current project, and searches everything the server sent (every element's
protobuf, custom component payloads and dataframes included) for B's name and B's words.
"""

from __future__ import annotations

import json

import pytest

from db import imports
from db import repository as repo
from db.service import Forbidden, Service, tagset
from tests.app.conftest import PASSWORD, REPO, app
from ui.annotate import Annotator

A_NAME, B_NAME = "Alpha newsroom", "Bravo secret desk"
B_WORDS = ["Zyxwvutsrq", "Qqplonkish"]
PAGES = sorted(p.name for p in (REPO / "pages").glob("*.py") if p.name != "login.py")


def _project(engine, name: str, words: list[str]) -> int:
    tags = tagset(["PER"], "IOB2")
    project_id = repo.create_project(engine, name, {"tagset": tags, "feature_template": "ner"})
    lines = [json.dumps({"tokens": [w, "went", "home"]}) for w in words]
    imports.import_bytes(engine, project_id, ("\n".join(lines) + "\n").encode(), f"{name}.jsonl")
    return project_id


@pytest.fixture
def two_projects(store, users):
    engine = store.engine
    a = _project(engine, A_NAME, ["Alice", "Bert"])
    b = _project(engine, B_NAME, B_WORDS)
    beth = repo.add_user(engine, "beth", PASSWORD)
    repo.set_member(engine, a, users.annotator.id, "annotator")
    repo.set_member(engine, b, beth, "annotator")
    repo.submit_annotation(engine, repo.sentence_ids(engine, b)[0], beth, ["B-PER", "O", "O"])
    return a, b


def _everything_sent(at) -> str:
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


@pytest.mark.parametrize("page", ["app.py", *(f"pages/{p}" for p in PAGES)])
def test_an_annotator_of_a_reads_nothing_of_b_on_any_page(store, users, two_projects, page):
    a, b = two_projects
    at = app(page, user=users.annotator)
    at.session_state["cw_project_id"] = b  # as if the browser asked for B
    at.run()
    assert not at.exception
    sent = _everything_sent(at)
    assert B_NAME not in sent and not any(w in sent for w in B_WORDS), page
    if page in ("app.py", "pages/annotate.py"):
        assert A_NAME in sent  # they do see their own project (the test can fail)


def test_the_project_list_holds_only_the_users_projects(store, users, two_projects):
    a, b = two_projects
    assert [p.id for p in repo.projects_of(store.engine, users.annotator.id)] == [a]
    assert [p.id for p in repo.projects_of(store.engine, users.lead.id)] == [a, b]  # admin
    assert repo.project_role(store.engine, b, users.annotator.id) is None
    assert repo.project_role(store.engine, a, users.annotator.id) == "annotator"


def test_every_project_action_on_b_is_refused_to_an_annotator_of_a(store, users, two_projects):
    a, b = two_projects
    repo.set_member(store.engine, a, users.annotator.id, "lead")  # lead of A, outsider of B
    actions = Service(store.engine)
    for call in (
        lambda u: actions.export_file(u, b, "conll"),
        lambda u: actions.list_members(u, b),
        lambda u: actions.set_member(u, b, u.id, "lead"),
        lambda u: actions.update_settings(u, b, {"learner": "pa"}),
        lambda u: actions.import_upload(u, b, b'{"tokens": ["x"]}\n', "x.jsonl"),
    ):
        with pytest.raises(Forbidden):
            call(users.annotator)
    assert B_WORDS[0] not in actions.export_file(users.annotator, a, "conll").decode()
    assert repo.project_role(store.engine, b, users.annotator.id) is None


def test_the_annotate_controller_refuses_a_project_of_which_the_user_is_no_member(
    store, users, two_projects, fake_live
):
    a, b = two_projects
    from ui import state

    project_b = repo.get_project(store.engine, b)
    ctl = Annotator(state.live(b), users.annotator, project_b, {})
    assert ctl.current() is None
    free = repo.sentence_ids(store.engine, b)[1]
    ctl.s["ahead"] = [{"sid": free, "tokens": B_WORDS[1:] + ["went", "home"]}]
    ctl.handle({"kind": "submit", "sid": free, "spans": []})
    assert "not a member" in ctl.s["message"]
    assert [e.user_id for e in repo.annotation_history(store.engine, free)] == []
    assert repo.active_leases(store.engine, b) == []


def test_a_member_taken_off_the_project_stops_at_once(store, users, two_projects):
    a, b = two_projects
    actions = Service(store.engine)
    assert actions.list_members(users.lead, a)[0].name == "arno"
    actions.remove_member(users.lead, a, users.annotator.id)
    assert repo.projects_of(store.engine, users.annotator.id) == []
    with pytest.raises(repo.InvalidValueError):  # the creator leads B; the last lead stays
        lead_b = repo.add_user(store.engine, "bob", PASSWORD)
        repo.set_member(store.engine, b, lead_b, "lead")
        actions.remove_member(repo.get_user(store.engine, lead_b), b, lead_b)
