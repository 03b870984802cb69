"""Two app processes against one database: they never hand out the same sentence, and both end
up with the same model, which has seen every annotation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from db.models import Annotation

WORKER = Path(__file__).with_name("live_worker.py")
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_processes_serve_one_database(backend, make_project, tmp_path: Path) -> None:
    p = make_project(n=150)
    n_each, plan = 5, [("ann", "bob"), ("cat", "dan")]
    total = n_each * 4
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = []
    for k, users in enumerate(plan):
        ids = ",".join(str(p.users[u]) for u in users)
        argv = [sys.executable, str(WORKER), backend.url, backend.schema or "-", str(p.id), ids,
                str(n_each), str(total), str(tmp_path / f"out{k}.json")]  # fmt: skip
        procs.append(subprocess.Popen(argv, env=env, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-3000:]
    outs = [json.loads((tmp_path / f"out{k}.json").read_text()) for k in range(len(plan))]
    served = Counter(sid for out in outs for _, sid in out["served"])
    assert len(served) == total and max(served.values()) == 1  # never the same sentence twice
    with p.engine.connect() as conn:
        stored = conn.execute(
            select(Annotation.sentence_id).where(
                Annotation.project_id == p.id, Annotation.status == "submitted"
            )
        ).scalars()
        assert Counter(stored) == served
    assert outs[0]["version"] == outs[1]["version"] == total  # each saw every annotation
    assert outs[0]["digest"] == outs[1]["digest"]  # ... and built the same model from them
