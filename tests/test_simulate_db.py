"""Strategy comparisons stored in the database: a project's gold data, resumable runs, launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_simulate import Crash, CrashingSink, sentences

from cwal.io import write_conll
from cwal.simulate import MemorySink, SimConfig, load_files, run_cell
from db import simulations as sims
from db.engine import open_database
from db.imports import import_file
from db.repository import create_project, curve_points, get_simulation_run

REPO = Path(__file__).resolve().parent.parent
CONFIG = SimConfig(strategies=("kd-pc", "random"), seeds=(0,), initial=20, batch=5,
                   candidates=40, eval_every=30, budget=70)  # fmt: skip

TIMES = ["seconds", "cpu_seconds"]  # differ between runs


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CWAL_HOME", str(tmp_path / "home"))
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = open_database(url)
    pool, held = tmp_path / "pool.conll", tmp_path / "eval.conll"
    write_conll(sentences(150, 21), pool, ["word", "pos", "tag"])
    write_conll(sentences(30, 22), held, ["word", "pos", "tag"])
    project = create_project(engine, "np", {"scheme": "IOB2", "columns": ["word", "pos", "tag"]})
    import_file(engine, project, pool, split="pool", tags_as="gold")
    import_file(engine, project, held, split="eval")
    yield url, engine, project, load_files(str(pool), str(held))
    engine.dispose()


def memory_run(data, config: SimConfig):
    sink = MemorySink()
    for strategy, seed in config.cells():
        run_cell(data, config, strategy, seed, sink)
    return sink.curves().drop(columns=TIMES)


def test_project_gold_data_is_the_imported_corpus(setup) -> None:
    url, _, project, files = setup
    data = sims.load_project_data(project, url)
    assert data.fingerprint == files.fingerprint
    assert (len(data.pool), len(data.eval), data.template) == (150, 30, "chunk")


def test_a_stored_experiment_equals_the_in_process_run(setup) -> None:
    url, engine, project, files = setup
    key = sims.create_experiment(engine, "first", CONFIG, sims.project_ref(project),
                                 project_id=project)  # fmt: skip
    found = sims.experiments(engine, project)
    assert [e.key for e in found] == [key] and found[0].status == "running"
    assert "url" not in found[0].data["kwargs"]  # no credentials in the stored config
    sims.run(url, key, workers=1)
    exp = sims.get_experiment(engine, key)
    assert exp.status == "done" and set(exp.runs) == set(CONFIG.cells())
    got = sims.experiment_curves(engine, exp).drop(columns=TIMES)
    assert got.equals(memory_run(files, CONFIG))
    assert not sims.is_running(key)


def test_points_and_resume_state_are_stored_together(setup) -> None:
    url, engine, project, files = setup
    key = sims.create_experiment(engine, "resume", CONFIG, sims.project_ref(project))
    sink = sims.open_sink(url, key)

    class Dying(CrashingSink):
        def record(self, strategy, seed, point, state) -> None:
            sink.record(strategy, seed, point, state)
            super().record(strategy, seed, point, state)

    dying = Dying(after=2)
    dying.saved = sink.saved  # resume from what the database holds
    with pytest.raises(Crash):
        run_cell(sims.load_project_data(project, url), CONFIG, "kd-pc", 0, dying)
    run_id = sims.get_experiment(engine, key).runs["kd-pc", 0]
    stored = get_simulation_run(engine, run_id)
    points = curve_points(engine, run_id)
    assert len(points) == 2 and stored.status == "running"
    assert len(stored.config["resume"]["labeled"]) == points["n_sentences"].iloc[-1]
    sink.finish("kd-pc", 0, "failed")  # as a crashed worker reports it
    sims.run(url, key, workers=1)  # resumes the failed cell from its last point
    got = sims.experiment_curves(engine, sims.get_experiment(engine, key)).drop(columns=TIMES)
    assert got.equals(memory_run(files, CONFIG))


@pytest.mark.slow
def test_launch_runs_in_the_background(setup) -> None:
    url, engine, project, files = setup
    config = SimConfig(strategies=("random",), seeds=(0,), initial=20, batch=5, candidates=40,
                       eval_every=30, budget=50)  # fmt: skip
    key = sims.start(url, "bg", config, sims.project_ref(project), project)
    process = sims.launch(url, key, workers=1)
    assert sims.is_running(key)
    with pytest.raises(sims.InvalidValueError, match="already running"):
        sims.launch(url, key)
    assert process.wait(timeout=180) == 0
    deadline = time.monotonic() + 10
    while sims.is_running(key) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sims.is_running(key)
    assert sims.get_experiment(engine, key).status == "done"
    assert sims.curves_of(url, key)["n_sentences"].tolist() == [150, 20, 30, 50]


@pytest.mark.slow
def test_cli_stores_a_project_comparison_and_resumes_it(setup) -> None:
    url, engine, project, files = setup
    cli = [
        sys.executable,
        "-m",
        "cwal",
        "simulate",
        "--db",
        url,
        "--quiet",
        "--json",
        "--workers",
        "1",
    ]
    args = ["--project", str(project), "--strategies", "random", "--seeds", "0", "--initial",
            "20", "--batch", "5", "--candidates", "40", "--eval-every", "30", "--budget", "50"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    first = subprocess.run(cli + args, env=env, cwd=REPO, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
    assert first.returncode == 0, first.stderr
    key = json.loads(first.stdout)["experiment"]
    exp = sims.get_experiment(engine, key)
    assert exp.project_id == project and exp.status == "done"
    again = subprocess.run(cli + ["--resume", key], env=env, cwd=REPO, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["summary"] == json.loads(first.stdout)["summary"]
    assert len(sims.experiments(engine, project)) == 1
