"""One model per project per process: after annotators labeled through the live session, a lead
opens every lead page and the process still holds the one session and the one learner it built;
the pages read that session's model (its version), they never build a second one."""

from __future__ import annotations

import io
from collections import Counter

import pytest

from cwal.learners import SequenceLearner
from cwal.live import ProjectSession
from db import exports
from db.repository import analysis
from db.store import standalone_model
from tests.app.test_lead_pages import run_lead
from ui import state

LEAD_PAGES = [
    "pages/dashboard.py",
    "pages/error_analysis.py",
    "pages/review.py",
    "pages/compare_strategies.py",
    "pages/add_files.py",
    "pages/export.py",
    "pages/members.py",
    "pages/agreement.py",
    "pages/adjudication.py",
    "pages/progress.py",
]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, Counter]:
    """Counts of the live sessions built (per project) and of the learners constructed."""
    counts: dict[str, Counter] = {"sessions": Counter(), "learners": Counter()}
    session_init, learner_init = ProjectSession.__init__, SequenceLearner.__init__

    def session(self, store, project_id, **kw) -> None:  # noqa: ANN001
        counts["sessions"][project_id] += 1
        session_init(self, store, project_id, **kw)

    def learner(self, *args, **kw) -> None:  # noqa: ANN002, ANN003
        counts["learners"][type(self).__name__] += 1
        learner_init(self, *args, **kw)

    monkeypatch.setattr(ProjectSession, "__init__", session)
    monkeypatch.setattr(SequenceLearner, "__init__", learner)
    return counts


def test_lead_pages_read_the_annotators_model(store, users, demo, built) -> None:
    live = state.live(demo)  # as Annotate opens it
    for _ in range(6):
        (shown,) = live.next(users.annotator.id)
        live.submit(shown.sentence_id, ["O"] * len(shown.tokens), users.annotator.id, 2.0)
    live.wait_idle(60)
    assert live.status()["model_version"] == 6
    for page in LEAD_PAGES:
        run_lead(page, users.lead.id)
    engine = state.engine()  # the app's one engine per database: its sessions' key
    analysis.wait_fresh(engine, demo, 60)  # the prefetched model view too
    view = analysis.model_view(engine, demo)
    assert view.state.version == 6 and len(view.labeled)  # the pages read a trained model
    out = io.StringIO()  # the Export page's predictions read the same session, batch by batch
    assert exports.export_annotations(engine, demo, out, "jsonl", what="predictions") > 300
    assert built["sessions"] == Counter({demo: 1})
    assert sum(built["learners"].values()) == 1
    assert state.live(demo) is live
    standalone_model(store.engine, demo)  # what a second copy would count
    assert sum(built["learners"].values()) == 2
