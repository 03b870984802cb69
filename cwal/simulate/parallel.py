"""Run every (strategy, seed) cell of a comparison, in worker processes, resumably.

Workers are joblib's loky processes (clean interpreters, never ``fork``: the numba kernels use
OpenMP, which is not fork-safe; they do not run the parent's ``__main__`` again, which under
Streamlit is a page) and run one numba thread each; so is the manager of the progress queue. They receive only plain data: the configuration as a
dict and two :class:`Ref` s naming a function (``"module:function"``) plus keyword arguments that
build the corpus and the result sink inside the worker, so nothing is pickled but strings and
numbers, and ``cwal`` never imports the database layer (``db.simulations`` supplies a sink ref).
A ref names one of the fixed ``TARGETS``: a name read back from the database never picks code.
A worker loads each corpus once and reuses it for every cell it runs.
"""

from __future__ import annotations

import importlib
import json
import queue as queue_mod
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import loky
from loky.backend import get_context

from cwal.simulate.config import SimConfig
from cwal.simulate.engine import SimData, run_cell
from cwal.simulate.sinks import ResultSink
from cwal.supervisor import SUPERVISOR

Listener = Callable[[str, int, int, str], None]
"""``listener(strategy, seed, labeled_sentences, status)``: status ``running``/``done``/``failed``."""


TARGETS = frozenset(
    {
        "cwal.simulate.data:load_task",
        "cwal.simulate.data:load_files",
        "cwal.simulate.sinks:JsonDirSink",
        "db.simulations:load_project_data",
        "db.simulations:open_sink",
    }
)
"""The data sources and sinks a ref may name (a stored experiment cannot name anything else)."""


@dataclass(frozen=True)
class Ref:
    """A function named ``"package.module:function"`` and the keyword arguments to call it with."""

    target: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"unknown data source or sink {self.target!r}")
        json.dumps(self.kwargs)  # plain data only

    def call(self) -> Any:
        module, name = self.target.split(":", 1)
        return getattr(importlib.import_module(module), name)(**self.kwargs)

    def key(self) -> str:
        return json.dumps([self.target, self.kwargs], sort_keys=True)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "kwargs": dict(self.kwargs)}


_DATA: dict[str, SimData] = {}
_SINKS: dict[str, ResultSink] = {}


def load_data(ref: Ref) -> SimData:
    """The corpus a ref builds, loaded once per process (with its feature cache)."""
    key = ref.key()
    if key not in _DATA:
        data = ref.call()
        if not isinstance(data, SimData):
            raise TypeError(f"{ref.target} returned {type(data).__name__}, not SimData")
        data.cache  # noqa: B018 - build the feature cache once, here
        _DATA[key] = data
    return _DATA[key]


def load_sink(ref: Ref) -> ResultSink:
    """The sink a ref builds, once per process (a database sink keeps one engine)."""
    key = ref.key()
    if key not in _SINKS:
        _SINKS[key] = ref.call()
    return _SINKS[key]


def _work(
    config: dict[str, Any],
    data_ref: dict[str, Any],
    sink_ref: dict[str, Any],
    strategy: str,
    seed: int,
    events: Any,
) -> tuple[str, int, str, str | None]:
    """One cell in a worker process (single numba thread): ``(strategy, seed, status, error)``.
    A failure is recorded in the sink and its ``repr`` returned, so the other cells go on."""
    import numba

    numba.set_num_threads(1)
    report = None if events is None else lambda st, sd, n: events.put((st, sd, n, "running"))
    try:
        status = _run_one(SimConfig.from_dict(config), Ref(**data_ref), Ref(**sink_ref),
                          strategy, seed, report)  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - returned, re-raised by the parent
        return strategy, seed, "failed", repr(exc)
    return strategy, seed, status, None


def _run_one(
    config: SimConfig,
    data_ref: Ref,
    sink_ref: Ref,
    strategy: str,
    seed: int,
    report: Callable[[str, int, int], None] | None,
) -> str:
    sink = load_sink(sink_ref)
    try:
        return run_cell(load_data(data_ref), config, strategy, seed, sink, report)
    except BaseException:
        sink.finish(strategy, seed, "failed")
        raise


def run_experiment(
    config: SimConfig,
    data_ref: Ref,
    sink_ref: Ref,
    workers: int = 2,
    listener: Listener | None = None,
    cluster: str | None = None,
) -> dict[tuple[str, int], str]:
    """Run (or resume) every cell of ``config``; returns each cell's final status.

    ``workers`` > 1 runs cells in that many joblib (loky) worker processes, otherwise in this
    one; ``cluster`` (a Dask scheduler address) runs them on that cluster's workers instead
    (the listener then hears only when cells end). A cell
    already ``done`` in the sink is skipped; a cell with saved points continues from its last
    one. A failing cell is marked ``failed`` and the others go on; its error is re-raised at the
    end as a RuntimeError naming every failed cell.
    """
    notify = listener or (lambda *a: None)
    results: dict[tuple[str, int], str] = {}
    errors: dict[tuple[str, int], BaseException] = {}
    sink = load_sink(sink_ref)
    cells = []
    for strategy, seed in config.cells():
        saved = sink.saved(strategy, seed)
        if saved is not None and saved.status == "done":
            results[strategy, seed] = "done"
            notify(strategy, seed, -1, "done")
        else:
            cells.append((strategy, seed))
    workers = min(workers, len(cells))
    if workers <= 1 and cluster is None:
        for strategy, seed in cells:
            try:
                report = lambda st, sd, n: notify(st, sd, n, "running")  # noqa: E731
                results[strategy, seed] = _run_one(
                    config, data_ref, sink_ref, strategy, seed, report
                )
            except Exception as exc:  # noqa: BLE001 - recorded, re-raised below
                results[strategy, seed], errors[strategy, seed] = "failed", exc
            notify(strategy, seed, -1, results[strategy, seed])
    else:
        plain = (config.to_dict(), data_ref.to_dict(), sink_ref.to_dict())
        with _engine(cluster, workers, notify) as (submit, completed, events):
            running = [submit(_work, *plain, s, d, events) for s, d in cells]
            for future in completed(running):
                strategy, seed, status, error = future.result()
                results[strategy, seed] = status
                if error is not None:
                    errors[strategy, seed] = RuntimeError(error)
                notify(strategy, seed, -1, status)
    if errors:
        failed = ", ".join(f"{s} seed {d}: {e!r}" for (s, d), e in errors.items())
        raise RuntimeError(f"{len(errors)} simulation cell(s) failed: {failed}")
    return results


@contextmanager
def _engine(cluster: str | None, workers: int, notify: Listener) -> Iterator[tuple[Any, Any, Any]]:
    """``(submit, as_completed, events)``: how to start a cell, how to wait for cells in the
    order they finish, and the queue workers report progress on (None on a cluster, whose
    workers may be on other machines)."""
    if cluster is not None:
        try:
            from dask.distributed import Client, as_completed
        except ImportError:
            raise RuntimeError(
                "--cluster needs Dask: python3 -m pip install 'dask[distributed]'"
            ) from None
        with Client(cluster) as client:
            yield partial(client.submit, pure=False), as_completed, None
        return
    with get_context("loky").Manager() as manager:
        events = manager.Queue()
        stop = threading.Event()
        pump = SUPERVISOR.start("cwal-sim-events", _pump, events, notify, stop, stop=stop.set)
        try:
            pool = loky.get_reusable_executor(max_workers=workers, timeout=60)
            yield pool.submit, futures.as_completed, events
        finally:
            stop.set()
            pump.join()


def _pump(events: Any, notify: Listener, stop: threading.Event) -> None:
    """Forward worker events to the listener until stopped and drained."""
    while True:
        try:
            notify(*events.get(timeout=0.2))
        except queue_mod.Empty:
            if stop.is_set():
                return
        except (EOFError, OSError):
            return
