"""A damaged model checkpoint never makes its project unopenable: the label log rebuilds it."""

from __future__ import annotations

from sqlalchemy import select, update

from db.models import Annotation, Checkpoint
from db.repository import list_checkpoints

from .conftest import SETTINGS
from .helpers import annotate, assert_same_model, online_reference


def test_a_corrupt_checkpoint_falls_back_to_replaying_the_label_log(make_project) -> None:
    p = make_project(n=80, consolidation_interval=5)
    first = p.session()
    annotate(first, p, "ann", 8)
    first.wait_idle()
    assert list_checkpoints(p.engine, p.id), "the consolidation should have saved a checkpoint"
    first.close()
    with p.engine.begin() as conn:  # every checkpoint's bytes overwritten (a bad disk block)
        conn.execute(update(Checkpoint).values(state=b"PK\x03\x04 not a model"))
        order = list(
            conn.execute(
                select(Annotation.sentence_id)
                .where(Annotation.project_id == p.id, Annotation.status == "submitted")
                .order_by(Annotation.id)
            ).scalars()
        )
    again = p.session()  # opens: no exception
    assert again.warnings and "rebuilt from the label log" in again.warnings[0]
    assert again.status()["labeled_sentences"] == 8
    # independent truth: an empty learner taught every stored label online, in log order
    assert_same_model(again.model, online_reference(p, order, SETTINGS["tagset"]))
    (sug,) = again.next(p.users["bob"])  # and it serves annotators
    assert sug.sentence_id not in order
