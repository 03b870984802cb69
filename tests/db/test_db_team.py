"""Team rules in the store, on SQLite and PostgreSQL: membership, overlap versions handed to
different annotators, agreement settled automatically, adjudication as the only gold learned."""

from __future__ import annotations

import pytest

from db import imports
from db import repository as repo
from db.repository import versions
from db.store import SqlStore

NP = ["B-NP", "I-NP", "B-VP"]
OTHER = ["B-NP", "B-NP", "B-VP"]


@pytest.fixture
def pool(engine, project, corpus):
    imports.import_file(engine, project, corpus(40), tags_as="gold")
    return repo.sentence_ids(engine, project)


def test_membership_roles_and_projects(engine, project, people):
    other = repo.create_project(engine, "other", {})
    repo.set_member(engine, project, people["ann"], "annotator")
    repo.set_member(engine, other, people["bob"], "reviewer")
    repo.set_member(engine, other, people["bob"], "lead")  # a second call changes the role
    assert [p.id for p in repo.projects_of(engine, people["ann"])] == [project]
    assert [p.id for p in repo.projects_of(engine, people["bob"])] == [other]
    assert [p.id for p in repo.projects_of(engine, people["lea"])] == [project, other]
    assert repo.project_role(engine, other, people["bob"]) == "lead"
    assert repo.project_role(engine, other, people["ann"]) is None
    assert repo.project_role(engine, other, people["lea"]) == "lead"  # administrator
    with pytest.raises(repo.InvalidValueError):
        repo.set_member(engine, project, people["ann"], "owner")
    assert repo.remove_member(engine, project, people["ann"])
    assert repo.projects_of(engine, people["ann"]) == []


def test_every_sentence_overlaps_at_share_one_and_none_at_zero():
    ids = range(1, 10001)
    assert sum(versions.is_overlap(i, 0.25) for i in ids) == pytest.approx(2500, abs=150)
    assert not any(versions.is_overlap(i, 0.0) for i in ids)
    assert all(versions.is_overlap(i, 1.0) for i in ids)


def test_overlap_sentences_go_to_k_different_annotators(engine, project, people, pool):
    versions.set_overlap(engine, project, 1.0, 2)
    ann, bob, lea = people["ann"], people["bob"], people["lea"]
    first = repo.lease_next(engine, project, ann, [pool[0]])
    assert first == pool[0]
    vid = repo.submit_annotation(engine, first, ann, NP)
    assert repo.annotation_history(engine, first)[-1].status == "version"
    assert repo.current_annotations(engine, project) == []  # no gold, nothing to learn
    # ann is not offered it again, bob is (the ranking asks for it first)
    assert repo.lease_next(engine, project, ann, [first]) != first
    assert repo.lease_next(engine, project, bob, [first]) == first
    repo.submit_annotation(engine, first, bob, OTHER)
    # k versions: closed to everyone, waiting for adjudication
    assert first not in repo.unlabeled_pool_ids(engine, project, lea)
    (d,) = versions.disagreements(engine, project)
    assert d.sentence_id == first and d.differing_tokens == 1
    assert [v.annotator for v in d.versions] == ["ann", "bob"]
    assert d.versions[0].id == vid


def test_agreeing_versions_become_gold_once(engine, project, people, pool):
    versions.set_overlap(engine, project, 1.0, 3)
    sid = pool[1]
    for who in ("ann", "bob"):
        repo.submit_annotation(engine, sid, people[who], NP)
    assert repo.current_annotations(engine, project) == []  # k = 3: still one to go
    repo.submit_annotation(engine, sid, people["lea"], NP)
    (gold,) = repo.current_annotations(engine, project)
    assert gold.sentence_id == sid and gold.tags == NP and gold.annotator == "lea"
    stats = {s.name: s.total for s in repo.annotator_stats(engine, project)}
    assert stats == {"ann": 1, "bob": 1, "lea": 1}  # the agreed gold is not a second label
    assert versions.disagreements(engine, project) == []


def test_adjudication_is_the_only_label_the_model_learns(engine, project, people, pool):
    versions.set_overlap(engine, project, 1.0, 2)
    sid = pool[2]
    a = repo.submit_annotation(engine, sid, people["ann"], NP)
    b = repo.submit_annotation(engine, sid, people["bob"], OTHER)
    store = SqlStore(engine)
    assert [r.status for r in store.log_after(project, 0)] == ["version", "version"]
    with pytest.raises(repo.InvalidValueError):  # accept must take one version unchanged
        versions.adjudicate(engine, sid, people["lea"], ["O", "O", "B-VP"], [a, b], "accept")
    with pytest.raises(repo.InvalidValueError):  # sources must be this sentence's versions
        versions.adjudicate(engine, sid, people["lea"], NP, [a, 999999], "accept")
    gold = versions.adjudicate(engine, sid, people["lea"], OTHER, [a, b], "accept")
    (current,) = repo.current_annotations(engine, project)
    assert (current.id, current.tags, current.annotator) == (gold, OTHER, "lea")
    assert versions.adjudicated_ids(engine, project) == {sid: gold}
    learned = [r for r in store.log_after(project, 0) if r.status == "submitted"]
    assert [r.id for r in learned] == [gold]  # the live model replays only this row
    # a second decision supersedes the first in the append-only log
    merged = versions.adjudicate(engine, sid, people["lea"], ["B-NP", "I-NP", "O"], [a], "edit")
    (current,) = repo.current_annotations(engine, project)
    assert current.id == merged
    assert [e.supersedes_id for e in repo.annotation_history(engine, sid)][-1] == gold
    assert versions.disagreements(engine, project) == []
    assert len(versions.disagreements(engine, project, include_settled=True)) == 1


def test_undoing_a_version_reopens_the_sentence_to_its_annotator(engine, project, people, pool):
    versions.set_overlap(engine, project, 1.0, 2)
    sid = pool[3]
    repo.submit_annotation(engine, sid, people["ann"], NP)
    done = repo.undo_last(engine, project, people["ann"])
    assert done is not None and done.undone_status == "version"
    assert sid in repo.unlabeled_pool_ids(engine, project, people["ann"])
    assert versions.overlap_versions(engine, project) == {}


def test_without_overlap_a_submission_is_gold_at_once(engine, project, people, pool):
    assert versions.get_overlap(engine, project) == (0.0, 2)
    repo.submit_annotation(engine, pool[4], people["ann"], NP)
    assert [e.status for e in repo.annotation_history(engine, pool[4])] == ["submitted"]
    with pytest.raises(repo.InvalidValueError):
        versions.set_overlap(engine, project, 1.5, 2)
    with pytest.raises(repo.InvalidValueError):
        versions.set_overlap(engine, project, 0.5, 1)
