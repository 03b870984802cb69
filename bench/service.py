"""Live-service latency: submit (store + update) and next (KD-PC, K=50, 1,000 candidates).

Simulated annotators answer with the gold tags on a 10,000-sentence pool built from CoNLL-2002
Spanish (esp.train then esp.testa), one ProjectSession per database as in the web app (annotators
are threads of one process). Each annotator loops next -> think -> submit; p50 and p95 of both
calls are reported on SQLite and on PostgreSQL with 1, 4 and 8 concurrent annotators (targets
with 8: submit p95 <= 20 ms, next p95 <= 300 ms, consolidations included). Then "submit latency
while a big import runs": 8 annotators (think 1 s) keep working while another process imports a
1,000,000-sentence file (--quick: 50,000) into the same project; store-level submit p50/p95 (the
write an annotator waits for; without the model update) of the submits that started during it (targets: p95 <= 50 ms on SQLite, <= 20 ms on PostgreSQL), failed submits
and the import's duration (batches time-boxed to 50 ms; --baseline: also fixed 500-sentence
batches). Each latency cell also reports where the time goes (statements per request, time in
the store, in the advisory-lock statement, waiting for the session lock). Then a project with 5,000 annotations is restarted (cold start): the
time until the first ``next`` returns, and whether the model and the suggestion are identical to
before the restart. Last the cold start of a fresh install through the service (a new process,
empty numba cache): imports, project set-up, first ``next``, first submit and the ``next`` after.

    python bench/service.py [--quick] [--json PATH] [--think S] [--rounds N] [--pg-url URL]
                            [--import-size N] [--no-import] [--no-restart] [--no-cold] [--baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import event, text  # noqa: E402

from bench._service_cold import cold_cell  # noqa: E402
from bench._service_probe import Probe, breakdown, pct  # noqa: E402
from cwal.io import read_conll, write_conll  # noqa: E402
from cwal.live import ProjectSession  # noqa: E402
from db import imports  # noqa: E402
from db.engine import make_engine, upgrade  # noqa: E402
from db.import_pacing import BATCH_MS  # noqa: E402
from db.imports import import_file  # noqa: E402
from db.repository import add_user, create_project, list_sentences  # noqa: E402
from db.store import SqlStore  # noqa: E402

DATA = Path(os.environ.get("CWAL_DATA_DIR", ROOT.parent / "shared" / "data")) / "conll2002"
PG_URL = os.environ.get(
    "CWAL_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
SETTINGS = {
    "feature_template": "ner",
    "scheme": "IOB2",
    "strict_scheme": False,  # CoNLL-2002 has a few IOB2 slips: repaired on import
    "strategy": "kd-pc",
    "strategy_params": {"k": 50, "candidates": 1000},
    "consolidation_interval": 50,
}


def pool(n: int, folder: Path) -> Path:
    """The first ``n`` sentences of esp.train + esp.testa as one CoNLL file (word pos tag)."""
    sents = list(read_conll(DATA / "esp.train")) + list(read_conll(DATA / "esp.testa"))
    path = folder / f"esp-{n}.conll"
    write_conll(sents[:n], path, columns=["word", "pos", "tag"])
    return path


class Database:
    """A fresh database: a SQLite file, or a new schema on the PostgreSQL server."""

    def __init__(self, kind: str, folder: Path, pg_url: str) -> None:
        self.kind, self.schema = kind, None
        if kind == "sqlite":
            self.url = f"sqlite:///{folder / f'bench-{uuid.uuid4().hex[:8]}.sqlite3'}"
        else:
            self.url, self.schema = pg_url, f"cwal_bench_{uuid.uuid4().hex[:12]}"
            with make_engine(pg_url).begin() as conn:
                conn.execute(text(f'CREATE SCHEMA "{self.schema}"'))
        self.engine = make_engine(self.url, schema=self.schema)
        upgrade(self.engine)

    def drop(self) -> None:
        self.engine.dispose()
        if self.schema:
            with make_engine(self.url).begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{self.schema}" CASCADE'))


def project(db: Database, corpus: Path, n_users: int, tags_as: str | None = None):
    users = [add_user(db.engine, f"a{i}-{uuid.uuid4().hex[:6]}", "pw") for i in range(n_users)]
    pid = create_project(db.engine, f"bench-{uuid.uuid4().hex[:8]}", SETTINGS)
    options = {"tags_as": tags_as, "annotator_id": users[0]} if tags_as else {}
    import_file(db.engine, pid, corpus, **options)
    gold = {s.id: s.gold_tags for s in list_sentences(db.engine, pid)}
    return pid, users, gold


def annotator(session, user, gold, rounds, think, warmup, out, probe=None) -> None:
    for r in range(warmup + rounds):
        probe and probe.take()
        t0 = time.perf_counter()
        (sug,) = session.next(user)
        t1 = time.perf_counter()
        phases_next = probe and probe.take()
        time.sleep(think)
        t2 = time.perf_counter()
        session.submit(sug.sentence_id, gold[sug.sentence_id], user, think)
        t3 = time.perf_counter()
        phases_submit = probe and probe.take()
        if r >= warmup:
            out["next"].append((t1 - t0) * 1e3)
            out["submit"].append((t3 - t2) * 1e3)
            out["age"].append(sug.model_version - sug.scored_version)
            if probe:
                out["phases_next"].append(phases_next)
                out["phases_submit"].append(phases_submit)


def plans_off(db: Database) -> None:
    """Switch the PostgreSQL planning fixes off (the ``--baseline`` cells): the server's
    default plan cache mode (generic plans after 5 runs) and no statistics after an import."""

    def generic(dbapi_connection, _record) -> None:
        dbapi_connection.execute("SET plan_cache_mode = auto")
        dbapi_connection.commit()

    event.listen(db.engine, "connect", generic)
    db.engine.dispose()


def latency_cell(kind, n_ann, corpus, args, folder, fixed: bool = True) -> dict:
    db = Database(kind, folder, args.pg_url)
    try:
        if not fixed:
            plans_off(db)
        with mock.patch.object(imports, "refresh_statistics", imports.refresh_statistics
                               if fixed else lambda engine: None):  # fmt: skip
            pid, users, gold = project(db, corpus, n_ann)
        probe = Probe(db.engine)
        session = ProjectSession(probe.wrap_store(SqlStore(db.engine)), pid)
        session._lock = probe.wrap_lock(session._lock)
        out = {"next": [], "submit": [], "age": [], "phases_next": [], "phases_submit": []}
        threads = [
            threading.Thread(
                target=annotator,
                args=(session, u, gold, args.rounds, args.think, 3, out, probe),
            )
            for u in users
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        session.close()
    finally:
        db.drop()
    row = {"database": kind if fixed else f"{kind} (baseline)", "annotators": n_ann,
           "think_s": args.think, "n": len(out["next"])}  # fmt: skip
    for name in ("submit", "next"):
        row[f"{name}_p50_ms"] = pct(out[name], 50)
        row[f"{name}_p95_ms"] = pct(out[name], 95)
    row["age_p95"] = pct(out["age"], 95)
    row["age_max"] = int(max(out["age"]))
    row["consolidations"] = len(session.consolidations)
    row.update(breakdown(out, probe))
    return row


IMPORTER = """
import sys
from db.engine import make_engine
from db.imports import import_file
url, schema, project, path, batch_ms = sys.argv[1:]
engine = make_engine(url, schema=None if schema == "-" else schema)
print(import_file(engine, int(project), path, batch_ms=float(batch_ms)).n_sentences)
"""


def big_file(corpus: Path, n: int, folder: Path) -> Path:
    """A CoNLL file of ``n`` sentences: the pool file's sentences in reverse order, repeated
    (bytes concatenated; the content differs from the pool file, so it is a new import)."""
    blocks = corpus.read_bytes().rstrip(b"\n").split(b"\n\n")[::-1]
    path = folder / f"big-{n}.conll"
    with open(path, "wb") as out:
        for start in range(0, n, len(blocks)):
            part = blocks[: min(len(blocks), n - start)]
            out.write(b"\n\n".join(part) + b"\n\n")
    return path


def working(store, pid, user, gold, think, stop, out) -> None:
    """An annotator at the store level (lease -> think -> submit, the writes an annotator waits
    for; the model update after them is in the latency table) until ``stop``; submit
    (start, ms) pairs and failures go to ``out``."""
    while not stop.is_set():
        try:
            (sid,) = store.lease(pid, user, None, 3600.0, 1)
            time.sleep(think)
            t = time.perf_counter()
            store.submit(sid, user, gold[sid], think)
            out["submit"].append((t, (time.perf_counter() - t) * 1e3))
        except Exception as exc:  # counted: the target is 0
            out["failed"].append(repr(exc))


def import_cell(kind, n_ann, corpus, big, args, folder, batch_ms: float = BATCH_MS) -> dict:
    """Submit latency of ``n_ann`` annotators while another process imports ``big`` (its
    staging transactions time-boxed to ``batch_ms``; 0: fixed chunks of 500 sentences)."""
    db = Database(kind, folder, args.pg_url)
    try:
        pid, users, gold = project(db, corpus, n_ann)
        store = SqlStore(db.engine)
        out, stop = {"submit": [], "failed": []}, threading.Event()
        threads = [
            threading.Thread(target=working, args=(store, pid, u, gold, args.think, stop, out))
            for u in users
        ]
        for t in threads:
            t.start()
        time.sleep(args.think + 1)  # every annotator past its first sentence
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [sys.executable, "-c", IMPORTER, db.url, db.schema or "-", str(pid), str(big),
                str(batch_ms)]  # fmt: skip
        t0 = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        t1 = time.perf_counter()
        stop.set()
        for t in threads:
            t.join()
        if done.returncode != 0:
            raise RuntimeError(f"the import failed: {done.stderr[-2000:]}")
    finally:
        db.drop()
    during = [ms for t, ms in out["submit"] if t0 <= t <= t1]
    return {
        "database": kind if batch_ms else f"{kind} (baseline)",
        "annotators": n_ann,
        "batch_ms": batch_ms if kind == "sqlite" else 0.0,  # the box applies on SQLite only
        "imported": int(done.stdout.split()[-1]),
        "import_s": round(t1 - t0, 1),
        "submits": len(during),
        "failed": len(out["failed"]),
        "submit_p50_ms": round(float(np.percentile(during, 50)), 1),
        "submit_p95_ms": round(float(np.percentile(during, 95)), 1),
        "submit_max_ms": round(float(max(during)), 1),
        "errors": sorted(set(out["failed"]))[:3],
    }


def restart_cell(kind, corpus, n_labeled, args, folder) -> dict:
    """A project whose first ``n_labeled`` pool sentences were imported labeled, consolidated,
    then annotated a little more; the time a new process needs to serve its first sentence."""
    db = Database(kind, folder, args.pg_url)
    try:
        labeled = folder / f"labeled-{kind}.conll"
        rest = folder / f"rest-{kind}.conll"
        sents = list(read_conll(corpus))
        write_conll(sents[:n_labeled], labeled, columns=["word", "pos", "tag"])
        write_conll(sents[n_labeled:], rest, columns=["word", "pos", "tag"])
        pid, users, _ = project(db, labeled, 2, tags_as="annotations")
        import_file(db.engine, pid, rest)
        gold = {s.id: s.gold_tags for s in list_sentences(db.engine, pid)}
        t = time.perf_counter()
        first = ProjectSession(SqlStore(db.engine), pid)
        first.sync()
        replay_s = time.perf_counter() - t
        first.wait_idle(timeout=900)  # the consolidation that writes the checkpoint
        annotator(first, users[1], gold, 20, 0.0, 0, {"next": [], "submit": [], "age": []})
        first.wait_idle(timeout=900)
        before = first.preview(1)[0]
        weights = first.model.averaged()
        first.close()
        t = time.perf_counter()
        again = ProjectSession(SqlStore(db.engine), pid)
        served = again.next(users[0])[0]
        ready_s = time.perf_counter() - t
        same_model = all(
            np.array_equal(a, b) for a, b in zip(weights, again.model.averaged(), strict=True)
        )
        status = again.status()
        again.close()
    finally:
        db.drop()
    return {
        "database": kind,
        "annotations": status["model_version"],
        "replay_without_checkpoint_s": round(replay_s, 2),
        "restart_ready_s": round(ready_s, 2),
        "same_model": same_model,
        "same_next": served.sentence_id == before.sentence_id
        and served.confidence == before.confidence,
    }


PHASES = ("statements", "store_p50_ms", "store_p95_ms", "db_p50_ms", "advisory_p95_ms",
          "lockwait_p95_ms", "rest_p50_ms", "rest_p95_ms")  # fmt: skip


def table(rows: list[dict], cols: list[str]) -> None:
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, SQLite restart only")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH")
    parser.add_argument("--think", type=float, default=1.0, help="seconds between next and submit")
    parser.add_argument("--rounds", type=int, default=None, help="measured rounds per annotator")
    parser.add_argument("--pg-url", default=PG_URL, help="PostgreSQL server (skipped if down)")
    parser.add_argument("--databases", default="sqlite,postgres", help="comma-separated")
    parser.add_argument("--annotators", default=None,
                        help="comma-separated counts (default 1,4,8; --quick 4,8)")  # fmt: skip
    parser.add_argument("--no-restart", action="store_true", help="skip the restart cells")
    parser.add_argument("--import-size", type=int, default=None,
                        help="sentences of the concurrent import (default 1,000,000; --quick 50,000)")  # fmt: skip
    parser.add_argument("--no-import", action="store_true", help="skip the import cells")
    parser.add_argument("--no-latency", action="store_true", help="skip the latency cells")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold-start cells (fresh install, empty numba cache)")  # fmt: skip
    parser.add_argument("--baseline", action="store_true",
                        help="also run each cell with the fixes off, for the ratio: PostgreSQL latency "
                             "cells with generic plans and no statistics after the import; import "
                             "cells (SQLite) with fixed 500-sentence batches (no time box)")  # fmt: skip
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (12 if args.quick else 60)
    args.annotators = args.annotators or ("4,8" if args.quick else "1,4,8")
    args.import_size = args.import_size or (50_000 if args.quick else 1_000_000)
    kinds = [k for k in args.databases.split(",") if k == "sqlite"]
    if "postgres" in args.databases.split(","):
        try:
            make_engine(args.pg_url).connect().close()
            kinds.append("postgres")
        except Exception as exc:  # no server: report SQLite only, and say so
            print(f"PostgreSQL unavailable ({type(exc).__name__}); skipped", file=sys.stderr)
    rows, restarts, during, colds = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = pool(10_000, folder)
        for kind in [] if args.no_latency else kinds:
            for n_ann in (int(a) for a in args.annotators.split(",")):
                for fixed in (True, False) if args.baseline and kind == "postgres" else (True,):
                    rows.append(latency_cell(kind, n_ann, corpus, args, folder, fixed))
                    print(json.dumps(rows[-1]), file=sys.stderr)
        big = None if args.no_import else big_file(corpus, args.import_size, folder)
        for kind in [] if big is None else kinds:
            for batch_ms in (BATCH_MS, 0.0) if args.baseline and kind == "sqlite" else (BATCH_MS,):
                during.append(import_cell(kind, 8, corpus, big, args, folder, batch_ms))
                print(json.dumps(during[-1]), file=sys.stderr)
        for kind in [] if args.no_restart else kinds[:1] if args.quick else kinds:
            restarts.append(restart_cell(kind, corpus, 5_000, args, folder))
            print(json.dumps(restarts[-1]), file=sys.stderr)
        for kind in [] if args.no_cold else kinds:
            colds.append(cold_cell(Database(kind, folder, args.pg_url), corpus, SETTINGS, folder))
            print(json.dumps(colds[-1]), file=sys.stderr)
    cols = ["database", "annotators", "n", "submit_p50_ms", "submit_p95_ms", "next_p50_ms",
            "next_p95_ms", "age_p95", "age_max", "consolidations"]  # fmt: skip
    table(rows, cols)
    for name in ("submit", "next"):
        table(rows, ["database", "annotators"] + [f"{name}_{c}" for c in PHASES])
    print(f"uptime: {os.popen('uptime').read().strip()}")
    print()
    icols = ["database", "annotators", "batch_ms", "imported", "import_s", "submits", "failed",
             "submit_p50_ms", "submit_p95_ms", "submit_max_ms"]  # fmt: skip
    print(" | ".join(icols))
    for r in during:
        print(" | ".join(str(r[c]) for c in icols))
    print()
    rcols = ["database", "annotations", "restart_ready_s", "replay_without_checkpoint_s",
             "same_model", "same_next"]  # fmt: skip
    print(" | ".join(rcols))
    for r in restarts:
        print(" | ".join(str(r[c]) for c in rcols))
    print()
    table(colds, ["database", "imports_s", "setup_s", "first_next_s", "first_submit_and_next_s",
                  "process_s"])  # fmt: skip
    print(f"uptime: {os.popen('uptime').read().strip()}")
    if args.json:
        report = {"latency": rows, "during_import": during, "restart": restarts, "cold": colds}
        Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
