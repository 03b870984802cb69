"""The cold start of a fresh install through the live service (bench/service.py's last table)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COLD = """
import sys, time, json
t0 = time.perf_counter()
from db.engine import open_database
from db.imports import import_file
from db.repository import add_user, create_project, list_sentences
from db.store import live_session
t_import = time.perf_counter()
url, schema, corpus, settings = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
engine = open_database(url, schema=None if schema == "-" else schema)
user = add_user(engine, "first", "pw")
pid = create_project(engine, "first", settings)
import_file(engine, pid, corpus)
gold = {s.id: s.gold_tags for s in list_sentences(engine, pid)}
t1 = time.perf_counter()
session = live_session(engine, pid)
(sug,) = session.next(user)
t2 = time.perf_counter()
session.submit(sug.sentence_id, gold[sug.sentence_id], user, 1.0)
(sug,) = session.next(user)
t3 = time.perf_counter()
print(json.dumps({"imports_s": t_import - t0, "setup_s": t1 - t_import,
                  "first_next_s": t2 - t1, "first_submit_and_next_s": t3 - t2}))
session.close()
"""


def cold_cell(db, corpus: Path, settings: dict, folder: Path) -> dict:
    """A fresh install served through the service in a new process with an empty numba cache:
    the imports, creating the project with the pool, the first ``next`` (model, ranking,
    compiled kernels) and the first submit with the ``next`` after it."""
    try:
        cache = folder / f"numba-{uuid.uuid4().hex[:6]}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(cache)}
        argv = [sys.executable, "-c", COLD, db.url, db.schema or "-", str(corpus),
                json.dumps(settings)]  # fmt: skip
        t = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        total = time.perf_counter() - t
        if done.returncode != 0:
            raise RuntimeError(f"the cold start failed: {done.stderr[-2000:]}")
    finally:
        db.drop()
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {"database": db.kind, **{k: round(v, 2) for k, v in got.items()},
            "process_s": round(total, 2)}  # fmt: skip
