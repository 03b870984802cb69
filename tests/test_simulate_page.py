"""The "Compare strategies" page, run by streamlit's AppTest against a fresh store."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest
from test_simulate import sentences

from cwal.io import write_conll
from cwal.live.config import LiveConfig
from cwal.simulate import SimConfig
from db import open_database
from db import repository as repo
from db import simulations as sims
from db.imports import import_file

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "compare_strategies.py")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    url = f"sqlite:///{tmp_path / 'cwal.sqlite3'}"
    monkeypatch.setenv("CWAL_DATABASE_URL", url)
    monkeypatch.setenv("CWAL_HOME", str(tmp_path))
    engine = open_database(url)
    lead = repo.add_user(engine, "lena", "correct horse battery", role="lead")
    ann = repo.add_user(engine, "arno", "correct horse battery")
    project = repo.create_project(engine, "np", {"columns": ["word", "pos", "tag"]})
    for split, n, seed in (("pool", 120, 31), ("eval", 30, 32)):
        path = tmp_path / f"{split}.conll"
        write_conll(sentences(n, seed), path, ["word", "pos", "tag"])
        import_file(engine, project, path, split=split, tags_as="gold")
    launched: list[str] = []

    def launch(url: str, key: str, workers: int = 2) -> None:  # run now, in this process
        launched.append(key)
        sims.run(url, key, workers=1)

    monkeypatch.setattr(sims, "launch", launch)
    yield SimpleNamespace(url=url, engine=engine, lead=lead, ann=ann, project=project,
                          launched=launched)  # fmt: skip
    from ui import state

    state._engine.clear()
    engine.dispose()


def page(user_id: int) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["cw_user_id"] = user_id
    return at.run()


def test_annotators_are_refused(store) -> None:
    at = page(store.ann)
    assert not at.exception
    assert "leads only" in at.error[0].value


def test_without_gold_the_page_explains_how_to_add_it(store) -> None:
    empty = repo.create_project(store.engine, "no gold", {"columns": ["word", "pos", "tag"]})
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["cw_user_id"] = store.lead
    at.session_state["cw_project_id"] = empty
    at.run()
    assert not at.exception
    assert "0 gold pool sentences" in at.info[0].value and "Add files" in at.info[0].value
    assert not at.button  # nothing to start


def test_a_lead_runs_a_comparison_and_adopts_a_strategy(store) -> None:
    at = page(store.lead)
    assert not at.exception
    assert "120 pool sentences with gold tags, 30 for evaluation" in at.markdown[0].value
    at.multiselect[0].set_value(["kd-fixed", "random"])
    assert at.number_input[0].value == 5  # five seeds by default
    at.number_input[0].set_value(2)
    at.number_input[1].set_value(70)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert len(store.launched) == 1
    exp = sims.get_experiment(store.engine, store.launched[0])
    assert exp.status == "done" and exp.config.budget == 70 and exp.config.seeds == (0, 1)
    assert exp.config.learner == "arow"  # the project's learner and live KD settings
    live = LiveConfig()
    assert exp.config.strategy_params["kd-fixed"] == {"k": live.k, "s": live.s_fixed}
    (chart,) = at.get("vega_lite_chart")
    assert '"area"' in chart.proto.spec and '"line"' in chart.proto.spec
    table = at.dataframe[0].value
    assert set(table["strategy"]) == {"kd-fixed", "random"}
    assert table["final_f1"].between(0, 1).all()  # a fraction, shown in percent
    shown = json.loads(at.dataframe[0].proto.columns)  # F1 read as percent, not a bare 100
    for field, label in (("final_f1", "Final F1"), ("auc", "AUC (mean F1)")):
        assert shown[field]["label"] == label
        assert shown[field]["type_config"]["format"] == "percent"
    costs = at.dataframe[1].value  # words relative to Random's, with seed-bootstrap intervals
    assert set(costs.index) == {"kd-fixed", "random"}
    assert (costs["words per sentence picked"] > 0).all()
    assert any("interval" in column for column in costs.columns)
    assert "Pick **" in at.success[0].value
    choice = [s for s in at.selectbox if s.label == "Strategy for this project"][0]
    choice.set_value("random")
    [b for b in at.button if b.label == "Use for this project"][0].click().run()
    assert not at.exception
    assert repo.get_project(store.engine, store.project).settings["strategy"] == "random"


def test_a_stopped_comparison_can_be_resumed(store) -> None:
    config = SimConfig(strategies=("random",), seeds=(0,), budget=60)
    key = sims.create_experiment(store.engine, "paused", config, sims.project_ref(store.project),
                                 project_id=store.project)  # fmt: skip
    at = page(store.lead)
    assert not at.exception
    assert "0% done · stopped" in at.get("progress")[0].proto.text
    [b for b in at.button if b.label == "Resume"][0].click().run()
    assert store.launched == [key]
    assert sims.get_experiment(store.engine, key).status == "done"
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 1
