"""The Agreement page's live table on SQLite and PostgreSQL: kept up to date from the log's new
rows (new versions, undos, label renames), it always equals the table computed afresh from every
overlap sentence's versions, and it recounts only the sentences that changed."""

from __future__ import annotations

import pandas as pd
import pytest

from cwal.measures.agreement import agreement
from db import imports
from db import repository as repo
from db.repository import versions

NP = ["B-NP", "I-NP", "B-VP"]
VARIANTS = [NP, ["B-NP", "B-NP", "B-VP"], ["O", "B-NP", "B-VP"], ["B-NP", "I-NP", "O"]]
R = 60  # bootstrap replicates (the tables are compared, not the intervals' precision)


@pytest.fixture
def pool(engine, project, corpus):
    imports.import_file(engine, project, corpus(30), tags_as="gold")
    versions.set_overlap(engine, project, 1.0, 2)
    return repo.sentence_ids(engine, project)


def _afresh(engine, project):
    return agreement(repo.overlap_items(engine, project), "IOB2", replicates=R)


def _check(live, engine, project):
    got = live.table(R)
    pd.testing.assert_frame_equal(got, _afresh(engine, project))
    return got


def test_the_live_table_follows_the_log_and_recounts_only_changed_sentences(
    engine, project, people, pool
):
    ann, bob, lea = people["ann"], people["bob"], people["lea"]
    live = repo.LiveAgreement(engine, project, "IOB2")
    assert live.table(R).empty
    for i, sid in enumerate(pool[:8]):
        repo.submit_annotation(engine, sid, ann, NP)
        repo.submit_annotation(engine, sid, bob, VARIANTS[i % 4])
    first = _check(live, engine, project)
    assert live.recounted == 8 and len(first) > 0
    assert live.table(R) is first  # nothing new: the same table

    repo.submit_annotation(engine, pool[8], ann, VARIANTS[2])  # one version: not an item yet
    repo.submit_annotation(engine, pool[9], ann, NP)
    repo.submit_annotation(engine, pool[9], bob, VARIANTS[3])
    _check(live, engine, project)
    assert live.recounted == 1  # pool[9] only

    done = repo.undo_last(engine, project, bob)  # bob's version of pool[9] is retracted
    assert done is not None and done.sentence_id == pool[9]
    _check(live, engine, project)
    assert live.recounted == 0  # pool[9] left the items

    repo.submit_annotation(engine, pool[10], lea, NP)  # a third annotator: new columns
    repo.submit_annotation(engine, pool[10], ann, VARIANTS[1])
    table = _check(live, engine, project)
    assert {"ann × lea"} <= set(table.scope) and live.recounted == 9

    repo.update_label_type(engine, project, lea, "NP", rename="NOUN")  # tags rewritten in place
    table = _check(live, engine, project)
    assert "NOUN" in set(table.type) and "NP" not in set(table.type)
    assert live.recounted == 9


def test_overlap_changes_reads_the_sentences_after_the_watermark(engine, project, people, pool):
    ann, bob = people["ann"], people["bob"]
    repo.submit_annotation(engine, pool[0], ann, NP)
    before = repo.overlap_changes(engine, project, None)
    assert before.items == {pool[0]: {"ann": NP}} and before.label_mark == 0
    repo.submit_annotation(engine, pool[1], bob, VARIANTS[1])
    after = repo.overlap_changes(engine, project, before.last_id)
    assert after.items == {pool[1]: {"bob": VARIANTS[1]}}
    assert after.last_id > before.last_id
    repo.undo_last(engine, project, bob)
    assert repo.overlap_changes(engine, project, after.last_id).items == {pool[1]: None}
