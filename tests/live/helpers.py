"""Shared checks of the live-service tests: driving a session and comparing models."""

from __future__ import annotations

import numpy as np

from cwal.learners import SequenceLearner, make
from cwal.live import ProjectSession


def annotate(session: ProjectSession, project, user: str, n: int) -> list[tuple[int, int]]:
    """``n`` rounds of next + submit (gold tags) by one annotator: ``(annotation id, sentence)``."""
    uid = project.users[user]
    done = []
    for _ in range(n):
        (sug,) = session.next(uid)
        assert sug.model_version - sug.scored_version <= session.config.max_staleness
        aid = session.submit(sug.sentence_id, project.gold[sug.sentence_id], uid, 1.0)
        done.append((aid, sug.sentence_id))
    return done


def online_reference(project, sentence_ids: list[int], labels: list[str]) -> SequenceLearner:
    """An independent model: a fresh learner fed the gold labels one by one in this order."""
    from db.repository import get_sentence

    model = make("arow", labels=labels, template="ner")
    for sid in sentence_ids:
        s = get_sentence(project.engine, sid)
        model.learn_one(s.tokens, project.gold[sid], **s.columns)
    return model


def assert_same_model(a: SequenceLearner, b: SequenceLearner) -> None:
    """Same labels, same feature index, same averaged weights and covariance (to 1e-12)."""
    assert a.labels_ == b.labels_
    assert a.features_.strings == b.features_.strings
    for x, y in zip(
        (*a.averaged(), *a.covariance()), (*b.averaged(), *b.covariance()), strict=True
    ):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
