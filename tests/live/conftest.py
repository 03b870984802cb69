"""Fixtures of the live-service tests: the store tests' backends (SQLite always, PostgreSQL when
``CWAL_TEST_DATABASE_URL`` is set) and a small learnable NER-like project."""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from cwal.io import Sentence, write_conll
from cwal.live import ProjectSession, close_all
from db.imports import import_file
from db.repository import add_user, create_project, list_sentences
from db.store import SqlStore

_spec = importlib.util.spec_from_file_location(
    "cwal_tests_db_conftest", Path(__file__).resolve().parents[1] / "db" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_db = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _db
_spec.loader.exec_module(_db)
backend = _db.backend  # the store tests' fixture: one isolated database per backend
engine = _db.engine

NAMES = ["Ana", "Luis", "Marta", "Pedro", "Sofia", "Juan"]
PLACES = ["Madrid", "Lima", "Quito", "Bogota", "Toledo"]
WORDS = ["el", "la", "de", "vive", "en", "con", "y", "trabaja", "visita", "casa", "hoy", "ayer"]


def synthetic(n: int, seed: int = 0) -> list[Sentence]:
    """``n`` short Spanish-like sentences whose IOB2 tags follow from the words (learnable)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        tokens, tags = [], []
        for _ in range(rng.randint(3, 12)):
            r = rng.random()
            if r < 0.15:
                tokens += [rng.choice(NAMES), rng.choice(["Garcia", "Perez"])]
                tags += ["B-PER", "I-PER"]
            elif r < 0.3:
                tokens.append(rng.choice(PLACES))
                tags.append("B-LOC")
            else:
                tokens.append(rng.choice(WORDS))
                tags.append("O")
        out.append(Sentence(tokens, tags))
    return out


SETTINGS = {
    "feature_template": "ner",
    "scheme": "IOB2",
    "tagset": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],
    "consolidation_interval": 10_000,
    "strategy": "kd-pc",
    "strategy_params": {"k": 10, "candidates": 200},
}


class Project:
    """A project with ``n`` pool sentences (gold tags kept as the simulated annotators' answers)."""

    def __init__(self, engine: Engine, project_id: int, users: dict[str, int]) -> None:
        self.engine, self.id, self.users = engine, project_id, users
        self.gold = {s.id: s.gold_tags for s in list_sentences(engine, project_id)}
        self.lengths = {s.id: len(s.tokens) for s in list_sentences(engine, project_id)}
        self.sessions: list[ProjectSession] = []

    def session(self, **overrides) -> ProjectSession:
        s = ProjectSession(SqlStore(self.engine), self.id, **overrides)
        self.sessions.append(s)
        return s


@pytest.fixture
def make_project(engine: Engine, tmp_path: Path) -> Iterator[Callable[..., Project]]:
    made: list[Project] = []

    def make(n: int = 120, name: str = "live", **settings) -> Project:
        path = tmp_path / f"{name}.conll"
        write_conll(synthetic(n), path)
        users = {u: add_user(engine, f"{name}-{u}", "pw") for u in ("ann", "bob", "cat", "dan")}
        pid = create_project(engine, name, {**SETTINGS, **settings})
        import_file(engine, pid, path)
        made.append(Project(engine, pid, users))
        return made[-1]

    yield make
    for p in made:
        for s in p.sessions:
            s.close()
    close_all()
