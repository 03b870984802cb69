"""Hostile names and tokens are stored and returned exactly, or refused with a clear error, and
never touch another row."""

from __future__ import annotations

import json

import pytest

from cwal.errors import CorpusError
from cwal.io import Sentence as IoSentence
from cwal.io.source import token_problem
from db.engine import write_transaction
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
from db.repository.sentences import add_sentences, create_batch

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
    """Tokens an import refuses (control characters, lone surrogates: cwal.io.token_problem) are
    refused with their line; the store itself still keeps any string exactly."""
    neighbour = create_project(engine, "neighbour")
    import_bytes(engine, neighbour, b"safe DT O\n\n", "n.conll")
    before = snapshot(engine)
    project = create_project(engine, "tokens", {"tagset": None, "scheme": None})
    lines = [
        json.dumps({"tokens": [tok, "ok"], "pos": [tok, "P"], "tags": ["O", "O"]}) for tok in TOKENS
    ]
    for k, tok in enumerate(TOKENS, 1):
        if token_problem(tok) is not None:
            with pytest.raises(CorpusError) as caught:
                import_bytes(engine, project, ("\n".join(lines) + "\n").encode(), "hostile.jsonl")
            assert caught.value.line == k
            lines[k - 1] = json.dumps({"tokens": ["ok"], "pos": ["P"], "tags": ["O"]})
    assert snapshot(engine)["sentences"] == before["sentences"]
    import_bytes(engine, project, ("\n".join(lines) + "\n").encode(), "hostile.jsonl")
    with write_transaction(engine) as conn:
        batch = create_batch(conn, project, "direct", "0" * 64, "jsonl", "pool")
        unsafe = [IoSentence([t, "ok"], ["O", "O"], {"pos": [t, "P"]}) for t in TOKENS]
        add_sentences(conn, project, batch, "direct", "pool", 0, unsafe)
    stored = [s for s in list_sentences(engine, project) if s.document == "direct"]
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
