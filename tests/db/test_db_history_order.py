"""Current annotations come in document order, or in the order a model learned them."""

from __future__ import annotations

import pytest

from db import imports
from db import repository as repo
from db.store import SqlStore

TAGS = ["B-NP", "I-NP", "B-VP"]


def test_current_annotations_in_document_or_learned_order(engine, project, people, corpus):
    imports.import_file(engine, project, corpus(4))
    ids = repo.sentence_ids(engine, project)  # document order
    for sid in (ids[2], ids[0], ids[3]):  # labeled out of document order
        repo.submit_annotation(engine, sid, people["ann"], TAGS)
    again = repo.submit_annotation(engine, ids[2], people["bob"], TAGS)  # relabeled last
    document = repo.current_annotations(engine, project)
    learned = repo.current_annotations(engine, project, order="learned")
    assert [e.sentence_id for e in document] == [ids[0], ids[2], ids[3]]
    assert [e.sentence_id for e in learned] == [ids[0], ids[3], ids[2]]
    assert learned[-1].id == again
    rows = SqlStore(engine).current_annotations(project, again)
    assert [r.id for r in rows] == [e.id for e in learned]
    with pytest.raises(repo.InvalidValueError):
        repo.current_annotations(engine, project, order="alphabetical")
