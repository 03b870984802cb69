"""Hostile names and tokens are stored and returned exactly, or refused with a clear error, and
never touch another row."""

from __future__ import annotations

import json

import pytest

from db.imports import import_bytes
from db.repository import (
    InvalidValueError,
    add_user,
    annotations_after,
    authenticate,
    create_project,
    find_project,
    get_project,
    get_user,
    list_sentences,
    submit_annotation,
)

HOSTILE = [
    "'; DROP TABLE users; --",
    "Robert'); DELETE FROM annotations WHERE ('1'='1",
    '" OR 1=1 --',
    "\\'; \\\\ \\x00 literal backslashes",
    "%s %(name)s :name $1 ?",
    "\u202eRTL override \u200b zero-width",
    "e\u0301 combining, \U0001f600 emoji, \u4e2d\u6587",
    "x" * 200,  # the longest accepted name
]
TOKENS = [
    "'; DROP TABLE sentences; --",
    "\x00",  # NUL: PostgreSQL text cannot hold it; JSON text escapes it
    "a\x00b",
    '"quoted"',
    "\\",
    "\ud800",  # a lone surrogate (reachable through a JSON escape)
    "\U0001f600",
    "\x1b[31m",
    "y" * 500_000,  # a very long token
]


def test_hostile_names_round_trip_and_leave_other_rows_alone(engine, snapshot):
    keep_user = add_user(engine, "keeper", "pw")
    keep_project = create_project(engine, "kept", {"learner": "cw"})
    before = snapshot(engine)
    for k, name in enumerate(HOSTILE):
        user = add_user(engine, name, name)  # the name as its own password too
        assert get_user(engine, user).name == name
        assert authenticate(engine, name, name).id == user
        project = create_project(engine, name, {"strategy": name, "tagset": [name, "O"]})
        info = get_project(engine, project)
        assert (info.name, info.settings["strategy"]) == (name, name)
        assert info.settings["tagset"] == [name, "O"]
        assert find_project(engine, name).id == project
        assert k + 2 == len({*(r[0] for r in snapshot(engine)["users"])})
    after = snapshot(engine)
    for table, rows in before.items():
        assert after[table][: len(rows)] == rows, table
    assert get_user(engine, keep_user).name == "keeper"
    assert get_project(engine, keep_project).settings["learner"] == "cw"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a\x00b", "control character"),
        ("line\nbreak", "control character"),
        ("x" * 201, "at most 200"),
        ("z" * 100_000, "at most 200"),
        ("", "empty"),
        ("\t ", "empty"),
    ],
)
def test_unstorable_names_are_refused_clearly(engine, snapshot, name, problem):
    before = snapshot(engine)
    with pytest.raises(InvalidValueError, match=problem):
        add_user(engine, name, "pw")
    with pytest.raises(InvalidValueError, match=problem):
        create_project(engine, name)
    assert snapshot(engine) == before


def test_hostile_tokens_round_trip_exactly(engine, snapshot):
    neighbour = create_project(engine, "neighbour")
    import_bytes(engine, neighbour, b"safe DT O\n\n", "n.conll")
    before = snapshot(engine)
    project = create_project(engine, "tokens", {"tagset": None, "scheme": None})
    lines = [
        json.dumps({"tokens": [tok, "ok"], "pos": [tok, "P"], "tags": ["O", "O"]}) for tok in TOKENS
    ]
    import_bytes(engine, project, ("\n".join(lines) + "\n").encode(), "hostile.jsonl")
    stored = list_sentences(engine, project)
    assert [s.tokens[0] for s in stored] == TOKENS
    assert [s.columns["pos"][0] for s in stored] == TOKENS
    user = add_user(engine, "ann", "pw")
    hostile_tags = ["'; DROP TABLE leases; --", "\x00"]
    for s in stored:
        submit_annotation(engine, s.id, user, hostile_tags)
    events = list(annotations_after(engine, project))
    assert [e.tokens[0] for e in events] == TOKENS
    assert all(e.tags == hostile_tags for e in events)
    after = snapshot(engine)
    for table, rows in before.items():
        assert after[table][: len(rows)] == rows, table
    assert [s.tokens for s in list_sentences(engine, neighbour)] == [["safe"]]
