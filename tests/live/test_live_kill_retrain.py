"""kill -9 of the app during a retrain (consolidation): after a restart every confirmed label is
in the database and the model equals a rebuild from the label log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from cwal.live import ProjectSession
from cwal.live.consolidation import retrain
from cwal.live.replay import build
from db.models import Annotation
from db.repository import list_checkpoints
from db.store import SqlStore

from .conftest import SETTINGS
from .helpers import assert_same_model, online_reference

WORKER = Path(__file__).with_name("kill_worker.py")
REPO = Path(__file__).resolve().parents[2]


def _kill_at(backend, p, phase: str, folder: Path) -> list[tuple[int, int]]:
    """Run the worker until it reaches ``phase`` of a consolidation and a few more labels are
    confirmed, SIGKILL it; the ``(annotation id, sentence id)`` pairs it had confirmed."""
    argv = [sys.executable, str(WORKER), backend.url, backend.schema or "-", str(p.id),
            str(p.users["ann"]), phase, str(folder)]  # fmt: skip
    proc = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(REPO)},
                            stderr=subprocess.PIPE)  # fmt: skip
    confirmed = folder / "confirmed"
    deadline = time.monotonic() + 240
    try:
        while not (folder / "marker").exists():
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "no consolidation started"
            time.sleep(0.05)
        at_marker = len(confirmed.read_text().splitlines())
        while len(confirmed.read_text().splitlines()) < at_marker + 3:  # submits go on meanwhile
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "no submit during the consolidation"
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    lines = confirmed.read_text().splitlines()
    return [(int(a), int(s)) for a, s in (line.split() for line in lines)]


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["fit", "saved"])
def test_kill_during_a_retrain_loses_nothing(backend, make_project, tmp_path, phase) -> None:
    p = make_project(n=150, consolidation_interval=8)
    confirmed = _kill_at(backend, p, phase, tmp_path)
    with p.engine.connect() as conn:
        rows = conn.execute(
            select(Annotation.id, Annotation.sentence_id, Annotation.tags)
            .where(Annotation.project_id == p.id, Annotation.status == "submitted")
            .order_by(Annotation.id)
        ).all()
    stored = {r.id: (r.sentence_id, r.tags) for r in rows}
    for aid, sid in confirmed:  # every confirmed label is there, as submitted
        assert stored[aid] == (sid, p.gold[sid])
    checkpoints = list_checkpoints(p.engine, p.id)
    assert bool(checkpoints) == (phase == "saved")  # the killed retrain wrote nothing
    again = ProjectSession(SqlStore(p.engine), p.id)  # the restart
    p.sessions.append(again)
    assert again.status()["model_version"] == len(rows) and not again.warnings
    if phase == "fit":  # truth: an empty learner taught every stored label, in log order
        reference = online_reference(p, [r.sentence_id for r in rows], SETTINGS["tagset"])
    else:  # truth: a retrain from the log as of the checkpoint, then the rest of the log
        (cp,) = checkpoints
        x = cp.last_annotation_id
        model, _ = retrain(again.store, p.id, again.spec, again.config.consolidation_epochs, 1, x)
        meta = next(c for c in again.store.checkpoints(p.id) if c.id == cp.id)
        defaults = (again.config.s_pc, again.config.s_fixed)
        reference = build(again.store, p.id, again.spec, defaults, base=meta, state=model).model
        assert x < rows[-1].id  # labels after the checkpoint were replayed on top of it
    assert_same_model(again.model, reference)
    (sug,) = again.next(p.users["bob"])  # and it serves annotators
    assert sug.sentence_id not in {sid for _, sid in confirmed}
