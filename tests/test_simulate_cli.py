"""Worker processes and the command line: same results in parallel, and a killed run resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from test_simulate import sentences

from cwal.io import write_conll
from cwal.simulate import (
    JsonDirSink,
    MemorySink,
    Ref,
    SimConfig,
    load_data,
    run_cell,
    run_experiment,
)

REPO = Path(__file__).resolve().parent.parent
CONFIG = dict(strategies=("kd-fixed", "min-margin", "random"), seeds=(0, 1), initial=20, batch=5,
              candidates=40, eval_every=30, budget=80)  # fmt: skip
ARGS = ["--strategies", "kd-fixed", "min-margin", "random", "--seeds", "0", "1", "--initial",
        "20", "--batch", "5", "--candidates", "40", "--eval-every", "30", "--budget", "80"]  # fmt: skip

TIMES = ["seconds", "cpu_seconds"]  # differ between runs


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("corpus")
    pool, held = folder / "pool.conll", folder / "eval.conll"
    write_conll(sentences(200, 11), pool, ["word", "pos", "tag"])
    write_conll(sentences(40, 12), held, ["word", "pos", "tag"])
    return pool, held


@pytest.fixture(scope="module")
def reference(files: tuple[Path, Path]):
    """The curves of an in-process run (one process, default numba threads)."""
    ref = Ref("cwal.simulate.data:load_files", {"pool": str(files[0]), "eval": str(files[1])})
    sink = MemorySink()
    config = SimConfig(**CONFIG)
    for strategy, seed in config.cells():
        run_cell(load_data(ref), config, strategy, seed, sink)
    return sink.curves().drop(columns=TIMES)


@pytest.fixture
def plain_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean ``__main__``: spawned workers re-import the parent's main module, and an earlier
    AppTest in the same pytest process leaves a Streamlit page script registered there."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


@pytest.mark.slow
@pytest.mark.usefixtures("plain_main")
def test_spawned_workers_give_the_in_process_results(files, reference, tmp_path: Path) -> None:
    data = Ref("cwal.simulate.data:load_files", {"pool": str(files[0]), "eval": str(files[1])})
    sink = Ref("cwal.simulate.sinks:JsonDirSink", {"path": str(tmp_path / "out")})
    events = []
    statuses = run_experiment(SimConfig(**CONFIG), data, sink, workers=2,
                              listener=lambda *e: events.append(e))  # fmt: skip
    assert set(statuses.values()) == {"done"} and len(statuses) == 8  # 3 strategies + full, x 2
    got = JsonDirSink(tmp_path / "out").curves().drop(columns=TIMES)
    assert got.equals(reference)
    finished = {(s, d) for s, d, n, status in events if status == "done"}
    assert finished == set(statuses)
    assert any(status == "running" and n == 80 for _, _, n, status in events)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cwal", "simulate", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.mark.slow
def test_a_killed_cli_run_resumes_to_the_same_curves(files, reference, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = _cli("--pool", str(files[0]), "--eval", str(files[1]), "--out", str(out),
               "--workers", "1", "--quiet", *ARGS)  # fmt: skip
    proc = subprocess.Popen(cmd, env=_env(), cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            cells = [json.loads(p.read_text()) for p in out.glob("cell-*.json")]
            if any(c["status"] == "running" and len(c["points"]) >= 2 for c in cells):
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = JsonDirSink(out).curves()
    assert 0 < len(partial) < len(reference), "the run should be killed part-way"
    done = subprocess.run(cmd + ["--json"], env=_env(), cwd=REPO, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert JsonDirSink(out).curves().drop(columns=TIMES).equals(reference)
    summary = json.loads(done.stdout)
    assert {r["strategy"] for r in summary["summary"]} == {"kd-fixed", "min-margin", "random"}
    assert summary["recommended"] in {"kd-fixed", "min-margin", "random"}
    costs = {r["strategy"]: r for r in summary["word_costs"]}
    assert set(costs) == {"kd-fixed", "min-margin", "random"}
    assert all(r["mean_length"] > 0 and r["seeds"] == 2 for r in costs.values())
    assert {r["strategy"] for r in summary["stopping"]} == set(costs)


@pytest.mark.slow
def test_cli_refuses_other_settings_in_the_same_folder(files, tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = ["--pool", str(files[0]), "--eval", str(files[1]), "--out", str(out), "--quiet"]
    first = subprocess.run(_cli(*base, *ARGS[:-1], "25", "--seeds", "0", "--workers", "1"),
                           env=_env(), cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "recommended:" in first.stdout
    assert "bootstrap intervals over seeds" in first.stdout and "stopping signal" in first.stdout
    other = subprocess.run(_cli(*base, *ARGS), env=_env(), cwd=REPO, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert other.returncode != 0 and "another experiment" in other.stderr


@pytest.mark.slow
def test_cli_usage_errors_are_one_line(files, tmp_path: Path) -> None:
    base = ["--pool", str(files[0]), "--eval", str(files[1]), "--out", str(tmp_path / "x")]
    bad = subprocess.run(_cli(*base, "--strategies", "psychic"), env=_env(), cwd=REPO,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: ") and "psychic" in bad.stderr
    assert "Traceback" not in bad.stderr
