"""The simulation grid on its engines: a Dask cluster gives the serial run's curves, and cells
that fail in loky workers are marked failed in the sink and named in the error."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import loky
import pytest
from test_simulate_cli import CONFIG, TIMES, files, reference  # noqa: F401 - fixtures

from cwal.simulate import JsonDirSink, Ref, SimConfig, run_experiment


def test_workers_never_run_the_parents_main_script(files, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    """Streamlit (and AppTest) run a page as ``__main__``: neither the loky workers nor the
    progress queue's manager process may run it again."""
    loky.get_reusable_executor().shutdown(wait=True)  # workers start under the page below
    marker, script = tmp_path / "ran", tmp_path / "page.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    data = Ref("cwal.simulate.data:load_files", {"pool": str(files[0]), "eval": str(files[1])})
    sink = Ref("cwal.simulate.sinks:JsonDirSink", {"path": str(tmp_path / "out")})
    config = SimConfig(strategies=("random", "min-margin"), seeds=(0,), initial=20, batch=5,
                       candidates=40, eval_every=30, budget=40, full_data=False)  # fmt: skip
    assert set(run_experiment(config, data, sink, workers=2).values()) == {"done"}
    assert not marker.exists()


@pytest.mark.slow
def test_a_dask_cluster_gives_the_serial_curves(files, reference, tmp_path: Path) -> None:  # noqa: F811
    distributed = pytest.importorskip("dask.distributed")
    data = Ref("cwal.simulate.data:load_files", {"pool": str(files[0]), "eval": str(files[1])})
    sink = Ref("cwal.simulate.sinks:JsonDirSink", {"path": str(tmp_path / "out")})
    ended = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:  # fmt: skip
        statuses = run_experiment(SimConfig(**CONFIG), data, sink, workers=2,
                                  listener=lambda *e: ended.append(e), cluster=cluster.scheduler_address)  # fmt: skip
    assert set(statuses.values()) == {"done"} and len(statuses) == 8
    assert JsonDirSink(tmp_path / "out").curves().drop(columns=TIMES).equals(reference)
    assert {(s, d) for s, d, _, status in ended if status == "done"} == set(statuses)


def test_cells_failing_in_workers_are_recorded_and_named(files, tmp_path: Path) -> None:  # noqa: F811
    good = Ref("cwal.simulate.data:load_files", {"pool": str(files[0]), "eval": str(files[1])})
    sink_ref = Ref("cwal.simulate.sinks:JsonDirSink", {"path": str(tmp_path / "out")})
    config = SimConfig(strategies=("random", "min-margin"), seeds=(0,),
                       initial=20, batch=5, candidates=40, eval_every=30, budget=40,
                       learner_params={"bogus": 1}, full_data=False)  # fmt: skip
    with pytest.raises(RuntimeError, match=r"2 simulation cell\(s\) failed: .*bogus"):
        run_experiment(config, good, sink_ref, workers=2)
    sink = JsonDirSink(tmp_path / "out")
    assert sink.saved("random", 0).status == "failed"
    assert sink.saved("min-margin", 0).status == "failed"
