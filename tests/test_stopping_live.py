"""The dashboard's stopping signal over stored checkpoints, against kappas computed by hand with
scikit-learn on the checkpoint models' own predictions."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score
from test_reports_views import demo_store  # noqa: F401 - the demo project fixture


def _model(engine, project, sentences, epochs):
    from cwal.learners import make
    from db import repository as repo

    settings = repo.get_project(engine, project).settings
    labels = sorted({t for s in sentences for t in s.tags})
    learner = make(settings["learner"], labels=labels,
                   template=settings.get("feature_template", "chunk"))  # fmt: skip
    return learner.fit(sentences, epochs=epochs, seed=0)


def test_the_signal_compares_consecutive_checkpoints(demo_store) -> None:  # noqa: F811
    from cwal.io import Sentence
    from db import repository as repo
    from db.repository import analysis
    from db.repository.stopping import stopping_signal

    engine, project, user = demo_store
    assert stopping_signal(engine, project).kappas == []  # no checkpoints yet
    assert "needs two" in stopping_signal(engine, project).message()
    gold = [(s, g) for s, g in analysis.split_sentences(engine, project, "eval") if g]
    train = [Sentence(list(s.tokens), list(g)) for s, g in gold]
    models = [_model(engine, project, train[:n], e) for n, e in ((3, 1), (12, 2), (12, 2))]
    models += [models[-1], models[-1]]  # the model stops changing
    for version, model in enumerate(models, 1):
        repo.save_checkpoint(engine, project, model.to_bytes(), None, {"version": version})
    signal = stopping_signal(engine, project)
    stops = analysis.pool_sample_ids(engine, project)
    pool = [Sentence(list(s.tokens), None, dict(s.columns or {}))
            for s, _ in analysis.split_sentences(engine, project, "pool", stops)]  # fmt: skip
    tags = [sum(m.predict(pool), []) for m in models[-4:]]
    want = [cohen_kappa_score(a, b) for a, b in zip(tags, tags[1:], strict=False)]
    assert signal.versions == [2, 3, 4, 5]
    assert signal.kappas == pytest.approx(want, abs=1e-12)
    assert signal.kappas[1:] == [1.0, 1.0] and signal.kappas[0] == 1.0  # 12/2 vs 12/2 from v2
    assert signal.fired and "stopped paying" in signal.message()
    changed = _model(engine, project, train[:3], 1)
    repo.save_checkpoint(engine, project, changed.to_bytes(), None, {"version": 6})
    later = stopping_signal(engine, project)
    assert later.versions == [3, 4, 5, 6] and later.kappas[-1] < 1.0 and not later.fired
    assert "Keep annotating" in later.message()
