"""The lead configures the entity types of a running project on Files & settings (AppTest):
rename, recolour, re-key, move, add, and delete with the question of where the spans go; the
annotator's editor follows at once and every stored tag follows in one logged change."""

from __future__ import annotations

from sqlalchemy import select

from db import repository as repo
from db.models import Sentence
from tests.app.conftest import app, editor_data


def _gold_types(engine, project_id: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    with engine.connect() as conn:
        query = select(Sentence.gold_tags).where(Sentence.project_id == project_id)
        for tags in conn.execute(query).scalars():
            for tag in tags or []:
                if tag.startswith("B-"):
                    counts[tag[2:]] = counts.get(tag[2:], 0) + 1
    return counts


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_the_lead_renames_recolours_rekeys_moves_adds_and_deletes_types(store, users, demo):
    engine = store.engine
    gold = _gold_types(engine, demo)
    assert set(gold) == {"PER", "ORG", "LOC", "MISC"}
    at = app("pages/add_files.py", user=users.lead).run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert list(table["type"]) == ["PER", "ORG", "LOC", "MISC"]
    assert list(table["key"]) == ["1", "2", "3", "4"]

    # LOC becomes PLACE, dark blue, key 9, first
    next(s for s in at.selectbox if s.label == "Change the type").select("LOC").run()
    next(t for t in at.text_input if t.label == "Name").input("PLACE")
    at.color_picker[0].pick("#123456")
    next(s for s in at.selectbox if s.label == "Key").select("9")
    next(n for n in at.number_input if n.label == "Position").set_value(1)
    _button(at, "Save type").click().run()
    assert not at.exception and not at.error
    assert "Renamed LOC to PLACE" in at.success[0].value
    types = repo.label_types(repo.get_project(engine, demo).settings)
    assert [(t.type, t.key, t.color) for t in types][0] == ("PLACE", "9", "#123456")
    assert [t.type for t in types] == ["PLACE", "PER", "ORG", "MISC"]
    after = _gold_types(engine, demo)
    assert after.get("PLACE") == gold["LOC"] and "LOC" not in after

    # a new type takes the next free key
    next(t for t in at.text_input if t.label == "New type").input("DATE")
    _button(at, "Add type").click().run()
    assert not at.exception and not at.error
    types = repo.label_types(repo.get_project(engine, demo).settings)
    assert (types[-1].type, types[-1].key) == ("DATE", "3")  # 1, 2, 4 and 9 are taken

    # deleting a type that labels use asks where its spans go
    next(s for s in at.selectbox if s.label == "Delete the type").select("MISC").run()
    assert f"{gold['MISC']:,} stored labels" in at.warning[0].value
    at.radio(key="delete_into").set_value("merge into ORG")
    _button(at, "Delete MISC").click().run()
    assert not at.exception and not at.error
    after = _gold_types(engine, demo)
    assert after["ORG"] == gold["ORG"] + gold["MISC"] and "MISC" not in after

    next(s for s in at.selectbox if s.label == "Delete the type").select("ORG").run()
    at.radio(key="delete_into").set_value("drop its spans to O")
    _button(at, "Delete ORG").click().run()
    assert not at.exception and not at.error
    assert set(_gold_types(engine, demo)) == {"PER", "PLACE"}

    # an unused type goes without a question
    next(s for s in at.selectbox if s.label == "Delete the type").select("DATE").run()
    assert not at.warning
    _button(at, "Delete DATE").click().run()
    assert not at.exception and not at.error

    history = repo.label_changes(engine, demo)
    assert [c.action for c in history] == ["delete", "delete", "merge", "add", "rename"]
    assert history[2].mapping == {"MISC": "ORG"} and history[1].mapping == {"ORG": None}
    assert {c.user_name for c in history} == {"lena"}

    # the annotator's editor shows the lead's order, keys and colours
    ann = app("pages/annotate.py", user=users.annotator).run()
    assert not ann.exception
    labels = editor_data(ann)["labels"]
    assert labels == [
        {"type": "PLACE", "key": "9", "color": "#123456"},
        {"type": "PER", "key": "1", "color": types[1].color},
    ]


def test_an_annotator_cannot_change_types(store, users, demo):
    import pytest

    from db.service import Forbidden
    from ui import state

    actions = state.service()
    with pytest.raises(Forbidden):
        actions.update_label_type(users.annotator, demo, "PER", rename="PERSON")
    with pytest.raises(Forbidden):
        actions.remove_label_type(users.annotator, demo, "PER", repo.DROP)
    at = app("pages/add_files.py", user=users.annotator).run()
    assert not at.dataframe and at.error
