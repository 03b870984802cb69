"""A stand-in live service over the SQL store, with the ``cwal.live.ProjectSession`` API: it
leases sentences in id order with an all-O prediction and made-up confidences. The controller
tests use it to check the page's side of the contract without training a model."""

from __future__ import annotations

from sqlalchemy import Engine

from cwal.live import Suggestion
from db import repository as repo
from db.store import SqlStore


class FakeSession:
    def __init__(self, engine: Engine, project_id: int) -> None:
        self.engine = engine
        self.store = SqlStore(engine)
        self.project_id = project_id
        self.submitted: list[tuple[int, list[str], float | None]] = []
        self.predicts = False  # True: entity predictions the pre-fill policy keeps or drops

    def next(self, annotator_id: int, n: int = 1) -> list[Suggestion]:
        out = []
        for sid in self.store.lease(self.project_id, annotator_id, None, 900, n):
            s = repo.get_sentence(self.engine, sid)
            conf = [round(0.5 + 0.45 * ((i * 7) % 5) / 4, 3) for i in range(len(s.tokens))]
            least = min(range(len(conf)), key=conf.__getitem__)
            pred = ["O"] * len(s.tokens)
            if self.predicts:  # a sure PER on the first token, an unsure LOC on the last
                pred[0], pred[-1] = "B-PER", "B-LOC"
                conf[0], conf[-1] = 0.95, 0.3
            out.append(Suggestion(sid, s.tokens, s.columns, pred, conf, least, 1, 1, "fake"))
        return out

    def submit(
        self, sentence_id: int, tags: list[str], annotator_id: int, seconds: float | None
    ) -> int:
        self.submitted.append((sentence_id, list(tags), seconds))
        return repo.submit_annotation(self.engine, sentence_id, annotator_id, tags, seconds=seconds)

    def skip(self, sentence_id: int, annotator_id: int) -> None:
        repo.skip(self.engine, sentence_id, annotator_id)

    def undo(self, annotator_id: int) -> int | None:
        done = repo.undo_last(self.engine, self.project_id, annotator_id, lease_ttl=900)
        return None if done is None else done.sentence_id

    def status(self) -> dict:
        return {"model_version": 1}

    def close(self, timeout: float | None = None) -> None:
        """Nothing runs in the background."""
