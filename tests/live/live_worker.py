"""One app process for the two-process test: ``python live_worker.py url schema project users n
total out``. Its annotators (comma-separated user ids, one thread each) take ``n`` sentences each
through a ProjectSession; once the database holds ``total`` submissions the process catches up
and writes what it served and a digest of its live model to ``out`` (JSON)."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import func, select

from cwal.live import ProjectSession
from db.engine import make_engine
from db.models import Annotation
from db.repository import get_sentence
from db.store import SqlStore


def digest(session: ProjectSession) -> str:
    h = hashlib.sha256()
    model = session.model
    h.update(json.dumps([model.labels_, model.features_.strings]).encode())
    for arr in (*model.averaged(), *model.covariance()):
        h.update(arr.tobytes())
    return h.hexdigest()


def main(url: str, schema: str, project: int, users: str, n: int, total: int, out: Path) -> None:
    engine = make_engine(url, schema=None if schema == "-" else schema)
    session = ProjectSession(SqlStore(engine), project)
    served: list[list[int]] = []

    def annotator(user: int) -> None:
        for _ in range(n):
            (sug,) = session.next(user)
            served.append([user, sug.sentence_id])
            gold = get_sentence(engine, sug.sentence_id).gold_tags
            session.submit(sug.sentence_id, gold, user, 1.0)

    threads = [threading.Thread(target=annotator, args=(int(u),)) for u in users.split(",")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    query = select(func.count()).where(
        Annotation.project_id == project, Annotation.status == "submitted"
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            if conn.execute(query).scalar_one() >= total:
                break
        time.sleep(0.05)
    session.sync()
    status = session.status()
    out.write_text(
        json.dumps(
            {"served": served, "version": status["model_version"], "digest": digest(session)}
        )
    )
    session.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], int(a[2]), a[3], int(a[4]), int(a[5]), Path(a[6]))
