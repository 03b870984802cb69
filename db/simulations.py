"""Strategy comparisons in the store: the simulation engine's result sink over the database.

An *experiment* is one comparison: one ``simulation_runs`` row per (strategy, seed) cell, all
sharing ``config["experiment"]`` (a random key), plus one ``full-data`` row per seed. Each row's
``config`` holds the simulation settings, the corpus ref and, under ``resume``, the state at its
last curve point; the point and that state are written in one transaction. ``python -m
db.simulations KEY`` runs (or resumes) an experiment; :func:`launch` starts that in the
background, and a pid file tells whether it is still running.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Engine, func, insert, select, update

from cwal.live.config import LiveConfig
from cwal.simulate import Point, Ref, Saved, SimConfig, SimData, run_experiment
from cwal.simulate.parallel import Listener
from cwal.simulate.sinks import curves_frame
from cwal.simulate.summary import progress
from db import repository as repo
from db.engine import (
    data_home,
    database_url,
    make_engine,
    open_database,
    read_transaction,
    write_transaction,
)
from db.models import CurvePoint, Sentence, SimulationRun
from db.repository.base import InvalidValueError
from db.repository.state import in_project

TEMPLATES = ("chunk", "ner")


@dataclass(frozen=True)
class Experiment:
    """One comparison: its key, name, settings, and each cell's run id and status."""

    key: str
    name: str
    project_id: int | None
    config: SimConfig
    data: dict[str, Any]
    runs: dict[tuple[str, int], int]
    statuses: dict[tuple[str, int], str]
    created_at: Any

    @property
    def status(self) -> str:
        states = set(self.statuses.values())
        return "failed" if "failed" in states else "running" if "running" in states else "done"


def load_project_data(
    project_id: int, url: str | None = None, schema: str | None = None
) -> SimData:
    """A project's gold data: pool sentences that carry gold tags, and the ``eval`` split
    (``url``: the configured database when None)."""
    engine = make_engine(url, schema=schema)
    try:
        project = repo.get_project(engine, project_id)
        pool = [s.to_sentence() for s in repo.iter_sentences(engine, project_id, "pool")]
        held = [s.to_sentence() for s in repo.iter_sentences(engine, project_id, "eval")]
    finally:
        engine.dispose()
    template = project.settings.get("feature_template", "chunk")
    pool = [s for s in pool if s.tags is not None and len(s)]
    held = [s for s in held if s.tags is not None and len(s)]
    return SimData(pool, held, template if template in TEMPLATES else "chunk", project.name)


def gold_counts(engine: Engine, project_id: int) -> tuple[int, int]:
    """Sentences a comparison can use: pool sentences with gold tags, and the eval split."""
    with read_transaction(engine) as conn:
        counts = dict(
            conn.execute(
                select(Sentence.split, func.count())
                .where(in_project(project_id), Sentence.gold_tags.is_not(None))
                .group_by(Sentence.split)
            ).all()
        )
    return int(counts.get("pool", 0)), int(counts.get("eval", 0))


def project_config(settings: Mapping[str, Any], **overrides: Any) -> SimConfig:
    """A comparison as the project would run live: its learner (and parameters), its KD draws
    and noise scales and its candidate sample size; ``overrides`` replace any of these."""
    try:
        live = LiveConfig.from_settings(dict(settings))
    except ValueError:
        live = LiveConfig()
    values = {
        "learner": settings.get("learner", "cw"),
        "learner_params": dict(settings.get("learner_params") or {}),
        "candidates": live.candidates,
        "epochs": live.consolidation_epochs,
        "strategy_params": {
            "kd-pc": {"k": live.k, "s": live.s_pc},
            "kd-fixed": {"k": live.k, "s": live.s_fixed},
        },
    }
    return SimConfig(**{**values, **overrides})


def create_experiment(
    engine: Engine,
    name: str,
    config: SimConfig,
    data: Ref,
    *,
    project_id: int | None = None,
) -> str:
    """Create the run rows of a new comparison (status ``running``); returns its key."""
    key = uuid.uuid4().hex[:12]
    for strategy, seed in config.cells():
        repo.create_simulation_run(
            engine,
            f"{name} · {strategy} · seed {seed}",
            {"experiment": key, "experiment_name": name, "strategy": strategy, "seed": seed,
             "sim": config.to_dict(), "data": data.to_dict(), "resume": None},
            project_id=project_id,
        )  # fmt: skip
    return key


def experiments(engine: Engine, project_id: int | None = None) -> list[Experiment]:
    """Every comparison (of one project), newest first."""
    groups: dict[str, list[repo.SimulationRunInfo]] = {}
    for run in repo.list_simulation_runs(engine, project_id):
        if "experiment" in run.config:
            groups.setdefault(run.config["experiment"], []).append(run)
    out = []
    for key, runs in groups.items():
        first = runs[0].config
        out.append(
            Experiment(
                key, first["experiment_name"], runs[0].project_id,
                SimConfig.from_dict(first["sim"]), first["data"],
                {(r.config["strategy"], r.config["seed"]): r.id for r in runs},
                {(r.config["strategy"], r.config["seed"]): r.status for r in runs},
                runs[0].created_at,
            )
        )  # fmt: skip
    return sorted(out, key=lambda e: min(e.runs.values()), reverse=True)


def experiment_progress(engine: Engine, experiment: Experiment) -> float:
    """Fraction of the experiment's work done (finished cells, labeled sentences of the rest)."""
    c = experiment.config
    return progress(experiment_curves(engine, experiment), experiment.statuses, c.initial, c.budget)


def get_experiment(engine: Engine, key: str) -> Experiment:
    for found in experiments(engine):
        if found.key == key:
            return found
    raise repo.NotFoundError(f"no simulation experiment {key!r}")


def experiment_curves(engine: Engine, experiment: Experiment) -> pd.DataFrame:
    """The experiment's points as ``ResultSink.curves`` gives them (strategy and seed columns)."""
    points = repo.curve_points(engine, list(experiment.runs.values()))
    cell = {run_id: key for key, run_id in experiment.runs.items()}
    rows = [
        {"strategy": cell[r["run_id"]][0], "seed": cell[r["run_id"]][1]}
        | {k: v for k, v in r.items() if k != "run_id"}
        for r in points.to_dict("records")
    ]
    return curves_frame(rows)


class DbSink:
    """``cwal.simulate.ResultSink`` over the run rows of one experiment."""

    def __init__(self, url: str, experiment: str, schema: str | None = None) -> None:
        self.engine = make_engine(url, schema=schema)
        self.experiment = get_experiment(self.engine, experiment)

    def _run(self, strategy: str, seed: int) -> int:
        try:
            return self.experiment.runs[strategy, seed]
        except KeyError:
            raise repo.NotFoundError(f"no cell {strategy} seed {seed} in this experiment") from None

    def saved(self, strategy: str, seed: int) -> Saved | None:
        run = repo.get_simulation_run(self.engine, self._run(strategy, seed))
        state = run.config.get("resume")
        return None if state is None and run.status == "running" else Saved(run.status, state)

    def record(self, strategy: str, seed: int, point: Point, state: dict[str, Any]) -> None:
        run_id = self._run(strategy, seed)
        values = {"run_id": run_id, "step": point.step, "n_sentences": point.n_sentences,
                  "n_tokens": point.n_tokens,
                  "metrics": {k: float(v) for k, v in point.metrics.items()}}  # fmt: skip
        with write_transaction(self.engine) as conn:
            config = conn.execute(
                select(SimulationRun.config).where(SimulationRun.id == run_id)
            ).scalar_one()
            conn.execute(insert(CurvePoint).values(values))
            conn.execute(
                update(SimulationRun)
                .where(SimulationRun.id == run_id)
                .values(config={**config, "resume": state}, status="running", finished_at=None)
            )

    def finish(self, strategy: str, seed: int, status: str) -> None:
        repo.finish_simulation_run(self.engine, self._run(strategy, seed), status)

    def curves(self) -> pd.DataFrame:
        return experiment_curves(self.engine, self.experiment)


def open_sink(url: str, experiment: str, schema: str | None = None) -> DbSink:
    """The sink workers build from a ``Ref("db.simulations:open_sink", {...})``."""
    return DbSink(url, experiment, schema)


def project_ref(project_id: int) -> Ref:
    """The corpus ref of a project's gold data (stored without the database URL)."""
    return Ref("db.simulations:load_project_data", {"project_id": project_id})


def start(url: str, name: str, config: SimConfig, data: Ref, project_id: int | None = None) -> str:
    """Create a comparison in the database at ``url`` (migrated first); returns its key."""
    engine = open_database(url)
    try:
        return create_experiment(engine, name, config, data, project_id=project_id)
    finally:
        engine.dispose()


def curves_of(url: str, key: str, schema: str | None = None) -> pd.DataFrame:
    """The points of an experiment, read from the database at ``url``."""
    engine = make_engine(url, schema=schema)
    try:
        return experiment_curves(engine, get_experiment(engine, key))
    finally:
        engine.dispose()


def experiment_config(url: str, key: str, schema: str | None = None) -> dict[str, Any]:
    """The simulation settings of an experiment (as a dict)."""
    engine = make_engine(url, schema=schema)
    try:
        return get_experiment(engine, key).config.to_dict()
    finally:
        engine.dispose()


_CHILDREN: dict[str, subprocess.Popen] = {}
"""Background processes this process launched, by experiment (polled, so they are reaped)."""


def _pid_file(key: str) -> Path:
    folder = data_home() / "simulations"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_running(key: str) -> bool:
    """True while a process runs this experiment on this machine (launched from here and not
    finished, or holding the experiment's pid file)."""
    child = _CHILDREN.get(key)
    if child is not None:
        if child.poll() is None:
            return True
        del _CHILDREN[key]
    try:
        pid = int(_pid_file(key).read_text())
    except (FileNotFoundError, ValueError):
        return False
    return _alive(pid)


def _lock(key: str) -> None:
    """Take the experiment's pid file (exclusive create; a dead holder's file is replaced)."""
    path = _pid_file(key)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                holder = int(path.read_text())
            except (FileNotFoundError, ValueError):
                holder = 0
            if holder and holder != os.getpid() and _alive(holder):
                raise InvalidValueError(f"experiment {key} is already running") from None
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return
    raise InvalidValueError(f"experiment {key}: could not take {path}")


def run(
    url: str,
    key: str,
    workers: int = 2,
    schema: str | None = None,
    listener: Listener | None = None,
) -> dict:
    """Run or resume an experiment here (refused while another process runs it)."""
    _lock(key)
    try:
        engine = make_engine(url, schema=schema)
        found = get_experiment(engine, key)
        engine.dispose()
        sink = Ref("db.simulations:open_sink", {"url": url, "experiment": key, "schema": schema})
        data = Ref(**found.data)
        if data.target == "db.simulations:load_project_data":
            data = Ref(data.target, {**data.kwargs, "url": url, "schema": schema})
        return run_experiment(found.config, data, sink, workers, listener)
    finally:
        _pid_file(key).unlink(missing_ok=True)


def launch(url: str, key: str, workers: int = 2) -> subprocess.Popen:
    """Start :func:`run` in a detached background process (its output goes to a log file
    beside the pid file, under ``CWAL_HOME/simulations``)."""
    if is_running(key):
        raise InvalidValueError(f"experiment {key} is already running")
    log = _pid_file(key).with_suffix(".log").open("ab")
    env = {**os.environ, "CWAL_DATABASE_URL": url}
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    process = subprocess.Popen(
        [sys.executable, "-m", "db.simulations", key, "--workers", str(workers)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=root,
        start_new_session=True,
    )
    log.close()
    _CHILDREN[key] = process
    return process


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m db.simulations", description=run.__doc__)
    parser.add_argument("experiment")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    run(database_url(), args.experiment, args.workers)


if __name__ == "__main__":
    main()
