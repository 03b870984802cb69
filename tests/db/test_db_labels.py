"""Label configuration on a running project, on SQLite and PostgreSQL: order, colours and keys;
renames, merges and deletions rewrite every stored tag in one transaction with a log entry, and
the model is rebuilt from the rewritten log (older checkpoints are not used)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from cwal.live.replay import LearnerSpec, build
from db import imports
from db import repository as repo
from db.models import Annotation, Prediction, Sentence
from db.repository.label_config import map_tags
from db.store import SqlStore

TYPES = ["PER", "LOC", "ORG", "MISC"]
TAGSET = ["O"] + [f"{p}-{t}" for t in TYPES for p in "BI"]
JSONL = "\n".join(
    [
        '{"tokens": ["Ann", "Lee", "in", "Rome"], "tags": ["B-PER", "I-PER", "O", "B-LOC"]}',
        '{"tokens": ["IBM", "and", "Bo"], "tags": ["B-ORG", "O", "B-PER"]}',
        '{"tokens": ["a", "Euro", "cup"], "tags": ["O", "B-MISC", "O"]}',
    ]
)


@pytest.fixture
def ner(engine, tmp_path, people):
    pid = repo.create_project(
        engine, "ner", {"tagset": TAGSET, "scheme": "IOB2", "feature_template": "ner"}
    )
    path = tmp_path / "gold.jsonl"
    path.write_text(JSONL, encoding="utf-8")
    imports.import_file(engine, pid, path, split="eval")
    path2 = tmp_path / "pool.jsonl"
    path2.write_text(JSONL.replace("Ann", "Ana"), encoding="utf-8")
    imports.import_file(engine, pid, path2, split="pool", tags_as="gold")
    return pid


def _pool(engine, pid):
    return repo.sentence_ids(engine, pid, "pool")


def _tags(engine, table, column, pid):
    with engine.connect() as conn:
        rows = conn.execute(
            select(column).where(table.project_id == pid).order_by(table.id)
        ).scalars()
        return [t for t in rows if t is not None]


def test_default_order_colours_and_keys_follow_the_tag_set(engine, ner):
    types = repo.label_types(repo.get_project(engine, ner).settings)
    assert [(t.type, t.key) for t in types] == [("PER", "1"), ("LOC", "2"), ("ORG", "3"),
                                                 ("MISC", "4")]  # fmt: skip
    assert len({t.color for t in types}) == 4


def test_keys_stay_when_a_type_is_added_and_follow_the_leads_order(engine, ner, people):
    lead = people["lea"]
    repo.reorder_label_types(engine, ner, lead, ["ORG", "PER", "LOC", "MISC"])
    repo.add_label_type(engine, ner, lead, "DATE")
    settings = repo.get_project(engine, ner).settings
    types = repo.label_types(settings)
    assert [t.type for t in types] == ["ORG", "PER", "LOC", "MISC", "DATE"]
    assert [t.key for t in types] == ["3", "1", "2", "4", "5"]  # keys kept, the new one next
    assert {"B-DATE", "I-DATE"} <= set(settings["tagset"])
    # the lead sets the keys: 1 to ORG (PER's key is freed first)
    repo.update_label_type(engine, ner, lead, "PER", key="9")
    repo.update_label_type(engine, ner, lead, "ORG", key="1", color="#000000", position=4)
    types = repo.label_types(repo.get_project(engine, ner).settings)
    assert [(t.type, t.key) for t in types][-1] == ("ORG", "1")
    assert types[-1].color == "#000000"
    with pytest.raises(repo.InvalidValueError, match="taken"):
        repo.update_label_type(engine, ner, lead, "LOC", key="1")
    with pytest.raises(repo.InvalidValueError, match="editor's own keys"):
        repo.update_label_type(engine, ner, lead, "LOC", key="s")
    with pytest.raises(repo.InvalidValueError, match="colour"):
        repo.update_label_type(engine, ner, lead, "LOC", color="red")
    with pytest.raises(repo.InvalidValueError, match="already a type"):
        repo.update_label_type(engine, ner, lead, "LOC", rename="PER")
    log = repo.label_changes(engine, ner)
    assert [c.action for c in log] == ["edit", "edit", "add", "reorder"]
    assert {c.user_name for c in log} == {"lea"}
    assert all(c.rewritten == 0 for c in log)


def test_rename_rewrites_every_stored_tag_in_one_change(engine, ner, people):
    pool = _pool(engine, ner)
    repo.set_member(engine, ner, people["ann"], "annotator")
    first = repo.submit_annotation(engine, pool[0], people["ann"], ["B-PER", "I-PER", "O", "O"])
    repo.submit_annotation(engine, pool[0], people["bob"], ["B-PER", "O", "O", "B-LOC"])
    repo.log_prediction(engine, pool[1], 1, ["B-PER", "O", "O"], [0.5] * 3, "kd-pc")
    before = repo.get_project(engine, ner).settings["labels_revision"]
    n = repo.update_label_type(engine, ner, people["lea"], "PER", rename="PERSON")
    # 2 annotations + 1 prediction + 2 gold lists in the eval split + 2 in the pool
    assert n == 7
    anns = _tags(engine, Annotation, Annotation.tags, ner)
    assert anns == [["B-PERSON", "I-PERSON", "O", "O"], ["B-PERSON", "O", "O", "B-LOC"]]
    gold = _tags(engine, Sentence, Sentence.gold_tags, ner)
    assert ["B-PERSON", "I-PERSON", "O", "B-LOC"] in gold
    assert not any("PER" in t.split("-")[-1:] for g in gold for t in g)
    assert _tags(engine, Prediction, Prediction.tags, ner) == [["B-PERSON", "O", "O"]]
    settings = repo.get_project(engine, ner).settings
    assert "B-PERSON" in settings["tagset"] and "B-PER" not in settings["tagset"]
    assert settings["tagset"].index("B-PERSON") == TAGSET.index("B-PER")  # in place
    assert repo.label_types(settings)[0].type == "PERSON"  # keeps its key and place
    assert settings["labels_revision"] == before + 1
    change = repo.label_changes(engine, ner)[0]
    assert (change.action, change.mapping, change.user_name) == ("rename", {"PER": "PERSON"}, "lea")
    assert change.before[0]["type"] == "PER" and change.after[0]["type"] == "PERSON"
    # an old-named label arriving after the rename is refused, not stored
    with pytest.raises(repo.InvalidValueError, match="not in the tag set"):
        repo.submit_annotation(engine, pool[2], people["ann"], ["O", "B-PER", "O"])
    history = repo.annotation_history(engine, pool[0])
    assert history[0].id == first and history[0].tags[0] == "B-PERSON"


def test_a_used_type_is_not_deleted_without_a_choice(engine, ner, people, snapshot):
    before = snapshot(engine)
    with pytest.raises(repo.LabelsInUseError) as err:
        repo.remove_label_type(engine, ner, people["lea"], "MISC")
    assert err.value.used == 2  # gold of the eval and pool copies
    assert snapshot(engine) == before
    with pytest.raises(repo.NotFoundError):  # merging into a type that does not exist
        repo.remove_label_type(engine, ner, people["lea"], "MISC", into="EVENT")
    assert snapshot(engine) == before


def test_delete_drops_to_o_and_merge_moves_spans(engine, ner, people):
    lead = people["lea"]
    repo.add_label_type(engine, ner, lead, "DATE")
    repo.remove_label_type(engine, ner, lead, "DATE")  # unused: no question asked
    repo.remove_label_type(engine, ner, lead, "MISC", into=repo.DROP)
    gold = _tags(engine, Sentence, Sentence.gold_tags, ner)
    assert ["O", "O", "O"] in gold
    n = repo.remove_label_type(engine, ner, lead, "ORG", into="PER")
    assert n == 2
    gold = _tags(engine, Sentence, Sentence.gold_tags, ner)
    assert ["B-PER", "O", "B-PER"] in gold
    settings = repo.get_project(engine, ner).settings
    assert repo.entity_types(settings) == ["PER", "LOC"]
    assert settings["tagset"] == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    actions = [(c.action, c.mapping) for c in repo.label_changes(engine, ner)]
    assert actions[:2] == [("merge", {"ORG": "PER"}), ("delete", {"MISC": None})]


def test_merging_neighbours_keeps_two_spans_under_iob1():
    assert map_tags(["I-LOC", "I-PER"], {"LOC": "PER"}, "IOB1") == ["I-PER", "B-PER"]
    assert map_tags(["B-LOC", "I-LOC", "B-PER"], {"LOC": None}, "IOB2") == ["O", "O", "B-PER"]
    assert map_tags(["S-LOC", "B-PER", "E-PER"], {"PER": "X"}, "BIOES") == ["S-LOC", "B-X", "E-X"]


def test_the_model_is_rebuilt_from_the_rewritten_log(engine, ner, people):
    pool = _pool(engine, ner)
    repo.submit_annotation(engine, pool[0], people["ann"], ["B-PER", "I-PER", "O", "B-LOC"])
    store = SqlStore(engine)
    spec = LearnerSpec.from_settings(store.settings(ner))
    live = build(store, ner, spec, (1.0, 1.0))
    store.save_checkpoint(ner, live.model.to_bytes(), live.watermark, {"version": live.version})
    assert len(store.checkpoints(ner)) == 1
    repo.update_label_type(engine, ner, people["lea"], "PER", rename="PERSON")
    assert store.checkpoints(ner) != []  # a session built before keeps its own world...
    fresh = SqlStore(engine)
    assert fresh.checkpoints(ner) == []  # ...a new one ignores the old checkpoint
    assert repo.current_checkpoints(engine, ner) == []
    spec = LearnerSpec.from_settings(fresh.settings(ner))
    rebuilt = build(fresh, ner, spec, (1.0, 1.0))
    predicted = rebuilt.model.predict_one(["Ann", "Lee", "in", "Rome"])
    assert "B-PER" not in predicted and "PERSON" in " ".join(rebuilt.model.labels_)
    cid = fresh.save_checkpoint(ner, rebuilt.model.to_bytes(), rebuilt.watermark, {"version": 1})
    assert [c.id for c in fresh.checkpoints(ner)] == [cid]
