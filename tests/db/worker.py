"""Subprocess driver for the concurrency and crash tests (run as ``python worker.py MODE ...``).

Modes (``url`` and ``schema`` name the test's database; schema ``-`` means none):
* ``annotate url schema project user n out``: connect, create ``out.ready`` and wait for the file
  ``go`` beside it (so all annotators start together), lease and submit up to ``n`` sentences,
  then write one JSON line per event (lease / submit with ids and times) to ``out``.
* ``import url schema project path marker``: import a file; after the first chunk is stored
  (inside the open transaction) touch ``marker`` and stall, waiting to be killed.
* ``bigimport url schema project path marker [hold_at]``: import a file in full; touch
  ``marker`` after the first chunk; with ``hold_at``, once that many sentences are staged wait
  (between chunks, no transaction open) for ``marker.release`` before going on to publish; write
  ``{"n": sentences, "t": end time}`` to ``marker.done`` at the end.
* ``submit url schema sentence user marker``: submit one annotation, write its id to ``marker``,
  then stall, waiting to be killed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from db.engine import make_engine
from db.imports import ImportProgress, import_file
from db.repository import get_sentence, lease_next, submit_annotation


def _engine(url: str, schema: str):
    return make_engine(url, schema=None if schema == "-" else schema)


def annotate(url: str, schema: str, project: int, user: int, n: int, out: Path) -> None:
    engine = _engine(url, schema)
    with engine.connect():  # connected and warm before the start signal
        pass
    out.with_suffix(".ready").touch()
    go = out.with_name("go")
    while not go.exists():
        time.sleep(0.01)
    events = []
    for _ in range(n):
        sentence_id = lease_next(engine, project, user, ttl=3600)
        if sentence_id is None:
            break
        events.append({"event": "lease", "sentence": sentence_id, "t": time.time()})
        tags = get_sentence(engine, sentence_id).gold_tags
        annotation_id = submit_annotation(engine, sentence_id, user, tags, seconds=1.0)
        events.append(
            {"event": "submit", "sentence": sentence_id, "id": annotation_id, "t": time.time()}
        )
    out.write_text("".join(json.dumps(e) + "\n" for e in events))
    engine.dispose()


def stalled_import(url: str, schema: str, project: int, path: str, marker: Path) -> None:
    engine = _engine(url, schema)

    def progress(p: ImportProgress) -> None:
        if not marker.exists():
            marker.write_text(str(p.sentences))
            time.sleep(120)  # the test kills us here, mid-import

    import_file(engine, project, path, progress=progress, chunk_size=200, batch_ms=0)


def full_import(
    url: str, schema: str, project: int, path: str, marker: Path, hold_at: int | None = None
) -> None:
    engine = _engine(url, schema)
    release = marker.with_suffix(".release")

    def progress(p: ImportProgress) -> None:
        if not marker.exists():
            marker.write_text(str(p.sentences))
        if hold_at is not None and p.sentences >= hold_at:
            deadline = time.monotonic() + 600  # (a test that died never releases us)
            while not release.exists() and time.monotonic() < deadline:
                time.sleep(0.01)

    result = import_file(engine, project, path, progress=progress)
    done = {"n": result.n_sentences, "t": time.time()}
    marker.with_suffix(".done").write_text(json.dumps(done))
    engine.dispose()


def submit_then_stall(url: str, schema: str, sentence: int, user: int, marker: Path) -> None:
    engine = _engine(url, schema)
    tags = get_sentence(engine, sentence).gold_tags
    annotation_id = submit_annotation(engine, sentence, user, tags)
    marker.write_text(str(annotation_id))
    time.sleep(120)  # the test kills us here, right after the submission returned


def main(argv: list[str]) -> None:
    mode, url, schema, *rest = argv
    if mode == "annotate":
        project, user, n, out = rest
        annotate(url, schema, int(project), int(user), int(n), Path(out))
    elif mode == "import":
        project, path, marker = rest
        stalled_import(url, schema, int(project), path, Path(marker))
    elif mode == "bigimport":
        project, path, marker, *hold_at = rest
        hold = int(hold_at[0]) if hold_at else None
        full_import(url, schema, int(project), path, Path(marker), hold)
    elif mode == "submit":
        sentence, user, marker = rest
        submit_then_stall(url, schema, int(sentence), int(user), Path(marker))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
