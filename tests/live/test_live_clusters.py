"""Word clusters learned from a project's pool (issue 24): learned once at the import, stored as
JSON, and the same features in every process, every rebuild from the label log and the pool
cache's encoding."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, text

from cwal.features import FeatureIndex
from cwal.features import clusters as cl
from cwal.io import Sentence, write_conll
from cwal.learners import make
from cwal.live.pool import PoolCache
from cwal.live.protocol import PoolSentence
from db.imports import import_file
from db.models import ProjectClusters
from db.repository import (
    get_sentence,
    learn_pool_clusters,
    list_sentences,
    load_clusters,
    update_project_settings,
)
from db.store import SqlStore, standalone_model

from .conftest import SETTINGS
from .helpers import annotate, assert_same_model

WORKER = Path(__file__).with_name("live_worker.py")
REPO = Path(__file__).resolve().parents[2]


def wordy(n: int, seed: int = 0) -> list[Sentence]:
    """``n`` sentences over a few hundred words in three distributional classes (enough text for
    ``clusters.MIN_TOKENS``): names (B-PER), places after ``en`` (B-LOC), filler (O)."""
    rng = random.Random(seed)
    names = [f"Nom{i}" for i in range(60)]
    places = [f"Lugar{i}" for i in range(60)]
    filler = [f"pal{i}" for i in range(150)]
    out = []
    for _ in range(n):
        tokens, tags = [], []
        for _ in range(rng.randint(5, 12)):
            r = rng.random()
            if r < 0.2:
                tokens += ["dice", rng.choice(names)]
                tags += ["O", "B-PER"]
            elif r < 0.4:
                tokens += ["en", rng.choice(places)]
                tags += ["O", "B-LOC"]
            else:
                tokens.append(rng.choice(filler))
                tags.append("O")
        out.append(Sentence(tokens, tags))
    return out


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setenv("CWAL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "clusters-cache"))


@pytest.fixture
def clustered(engine, tmp_path: Path):
    """A make_project-like project whose pool has enough text for clusters."""
    from db.repository import add_user, create_project

    from .conftest import Project

    def make(name: str = "clu", n: int = 2600, **settings) -> Project:
        path = tmp_path / f"{name}.conll"
        write_conll(wordy(n), path)
        users = {u: add_user(engine, f"{name}-{u}", "pw") for u in ("ann", "bob")}
        pid = create_project(engine, name, {**SETTINGS, **settings})
        import_file(engine, pid, path)
        return Project(engine, pid, users)

    made = []

    def tracked(*a, **kw):
        made.append(make(*a, **kw))
        return made[-1]

    yield tracked
    for p in made:
        for s in p.sessions:
            s.close()


def test_learned_at_import_stored_as_json_and_kept(clustered, engine, tmp_path: Path) -> None:
    p = clustered()
    pool = [s.tokens for s in list_sentences(engine, p.id, "pool")]
    truth = cl.learn(pool, cache=False)  # the library on the same text, independently
    found = load_clusters(engine, p.id)
    assert truth is not None and found is not None
    assert found.words == truth.words and found.sizes == truth.sizes
    assert np.array_equal(found.ids, truth.ids)
    with engine.connect() as conn:  # plain JSON text, no pickle
        raw = conn.execute(
            text("SELECT words, ids, sizes FROM project_clusters WHERE project_id = :p"),
            {"p": p.id},
        ).one()
    assert [json.loads(v) for v in raw][0] == truth.words
    session = p.session()
    annotate(session, p, "ann", 2)
    more = tmp_path / "more.conll"
    write_conll(wordy(2600, seed=5), more)
    import_file(engine, p.id, more)  # after the first label: the old clusters stay
    with engine.connect() as conn:
        rows = conn.execute(select(ProjectClusters.n_sentences)).scalars().all()
    assert rows == [len(pool)]
    assert load_clusters(engine, p.id).words == truth.words


def test_defaults_by_template_and_the_setting(clustered, engine) -> None:
    chunk = clustered("chunky", feature_template="chunk")
    assert load_clusters(engine, chunk.id) is None  # chunk: off by default (bench/live_clusters)
    off = clustered("off", pool_clusters=False)
    assert load_clusters(engine, off.id) is None
    assert off.session().model.features_.clusters is None
    settings = update_project_settings(engine, off.id, {"pool_clusters": True})
    assert learn_pool_clusters(engine, off.id, settings)  # turned on before the first label
    assert load_clusters(engine, off.id) is not None
    assert not learn_pool_clusters(engine, off.id, settings)  # once
    assert settings["labels_revision"] == 1  # turned on: the checkpoints are set aside


def test_turned_off_after_labels_the_model_is_rebuilt_without(clustered, engine) -> None:
    p = clustered()
    session = p.session()
    done = annotate(session, p, "ann", 6)
    session.sync()
    assert session.model.features_.clusters is not None
    store = SqlStore(engine)  # a checkpoint with the clusters, of the current revision
    store.save_checkpoint(p.id, session.model.to_bytes(), done[-1][0], {"version": len(done)})
    settings = update_project_settings(engine, p.id, {"pool_clusters": False})
    assert settings["labels_revision"] == 1
    again = p.session()
    assert again.model.features_.clusters is None
    reference = make("arow", labels=SETTINGS["tagset"], template="ner")
    for _, sid in done:
        s = get_sentence(engine, sid)
        reference.learn_one(s.tokens, p.gold[sid], **s.columns)
    assert_same_model(again.model, reference)


def test_sessions_rebuild_and_pool_encoding_agree(clustered, engine, backend) -> None:
    p = clustered()
    first = p.session()
    done = annotate(first, p, "ann", 12)
    first.sync()
    model = first.model
    assert model.features_.clusters is not None
    assert any(f.startswith("c16[+0]=") for f in model.features_.strings)
    # an independent reference: a fresh learner with the stored clusters, fed the labels in order
    reference = make("arow", labels=SETTINGS["tagset"], template="ner")
    reference.features_ = FeatureIndex("ner", clusters=load_clusters(engine, p.id))
    for _, sid in done:
        s = get_sentence(engine, sid)
        reference.learn_one(s.tokens, p.gold[sid], **s.columns)
    assert_same_model(model, reference)
    # a second session over the same store, and a rebuild from the log: the same weights
    assert_same_model(p.session().model, model)
    assert_same_model(standalone_model(engine, p.id).model, model)
    # the pool cache encodes as the model does
    sents = list_sentences(engine, p.id, "pool")[:40]
    cache = PoolCache("ner", first.spec.clusters)
    cache.add([PoolSentence(s.id, list(s.tokens), dict(s.columns)) for s in sents])
    cache.sync(model.features_)
    got = cache.encode([s.id for s in sents])
    want = model.encode([Sentence(list(s.tokens), None, dict(s.columns)) for s in sents])
    for a, b in zip(
        (got.feat_ids, got.tok_offsets, got.sent_offsets),
        (want.feat_ids, want.tok_offsets, want.sent_offsets),
        strict=True,
    ):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    # another process builds the same model from the store
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"clu-{os.getpid()}-{p.id}.json"
    argv = [sys.executable, str(WORKER), backend.url, backend.schema or "-", str(p.id),
            str(p.users["bob"]), "0", str(len(done)), str(out)]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    sys.path.insert(0, str(WORKER.parent))
    from live_worker import digest

    result = json.loads(out.read_text())
    out.unlink()
    assert result["version"] == len(done)
    assert result["digest"] == digest(first)


def test_checkpoint_with_other_clusters_is_rebuilt_from_the_log(clustered, engine) -> None:
    p = clustered()
    session = p.session()
    done = annotate(session, p, "ann", 5)
    session.sync()
    plain = make("arow", labels=SETTINGS["tagset"], template="ner")  # no clusters: stale
    for _, sid in done:
        s = get_sentence(engine, sid)
        plain.learn_one(s.tokens, p.gold[sid], **s.columns)
    SqlStore(engine).save_checkpoint(p.id, plain.to_bytes(), done[-1][0], {"version": len(done)})
    again = p.session()
    assert any("other word clusters" in w for w in again.warnings)
    assert_same_model(again.model, session.model)


def test_demo_project_stays_without_clusters(engine) -> None:
    """The demo pool (4,336 tokens) is under clusters.MIN_TOKENS: its live model is unchanged."""
    from db.service.projects import install_demo

    pid = install_demo(engine)
    n = sum(len(s.tokens) for s in list_sentences(engine, pid, "pool"))
    assert n < cl.MIN_TOKENS
    assert load_clusters(engine, pid) is None
    assert SqlStore(engine).clusters(pid, {"feature_template": "ner"}) is None
