"""The app process that the kill-during-retrain test kills: ``python kill_worker.py url schema
project user phase folder``. One annotator submits gold labels through a ProjectSession and
appends each confirmed annotation id to ``folder/confirmed`` (after ``submit`` returned). At the
moment ``phase`` of a consolidation (``fit``: the retrain has started; ``saved``: its checkpoint
is committed, not yet swapped in) it writes ``folder/marker`` and stalls there, while the
annotator keeps submitting, until the test kills it with SIGKILL."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from cwal.live import ProjectSession
from cwal.live import session as session_module
from db.engine import make_engine
from db.repository import list_sentences
from db.store import SqlStore


def main(url: str, schema: str, project: int, user: int, phase: str, folder: Path) -> None:
    engine = make_engine(url, schema=None if schema == "-" else schema)
    marker, confirmed = folder / "marker", folder / "confirmed"

    def stall() -> None:
        marker.write_text(phase)
        time.sleep(600)  # killed here

    retrain, save = session_module.retrain, SqlStore.save_checkpoint

    def stalled_retrain(*args, **kwargs):
        if phase == "fit":
            stall()
        return retrain(*args, **kwargs)

    def stalled_save(self, *args, **kwargs):
        cid = save(self, *args, **kwargs)
        if phase == "saved":
            stall()
        return cid

    session_module.retrain = stalled_retrain
    SqlStore.save_checkpoint = stalled_save
    gold = {s.id: s.gold_tags for s in list_sentences(engine, project)}
    session = ProjectSession(SqlStore(engine), project)
    with open(confirmed, "a", encoding="utf-8") as out:
        while True:
            (sug,) = session.next(user)
            aid = session.submit(sug.sentence_id, gold[sug.sentence_id], user, 1.0)
            out.write(f"{aid} {sug.sentence_id}\n")
            out.flush()  # in the OS's hands: SIGKILL does not lose it
            time.sleep(0.01)


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], int(a[2]), int(a[3]), a[4], Path(a[5]))
