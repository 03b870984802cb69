"""Where a simulation's results go: the ``ResultSink`` protocol and two plain implementations.

A *cell* is one (strategy, seed) curve. At every evaluation point the engine hands the sink the
curve point together with the state needed to resume from it (labeled pool positions in order, the
step counter and the random generator's state: plain JSON), and the sink must keep both or
neither. ``db.simulations`` implements the protocol over the database; ``JsonDirSink`` keeps one
JSON file per cell (for the CLI and benchmarks without a database); ``MemorySink`` is for tests.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

STATUSES = ("running", "done", "failed")
CURVE_COLUMNS = ["strategy", "seed", "step", "n_sentences", "n_tokens"]


@dataclass(frozen=True)
class Point:
    """One curve point: after ``step`` selection steps, how much is labeled, what was measured."""

    step: int
    n_sentences: int
    n_tokens: int
    metrics: dict[str, float]


@dataclass(frozen=True)
class Saved:
    """What a sink holds of a cell: its status and the state at its last point (None: none)."""

    status: str
    state: dict[str, Any] | None


class ResultSink(Protocol):
    """What the simulation engine needs of a result store."""

    def saved(self, strategy: str, seed: int) -> Saved | None:
        """The cell's status and resume state, or None when it never started."""
        ...

    def record(self, strategy: str, seed: int, point: Point, state: dict[str, Any]) -> None:
        """Store a curve point and the resume state at it, atomically."""
        ...

    def finish(self, strategy: str, seed: int, status: str) -> None:
        """Mark the cell ``done`` or ``failed``."""
        ...

    def curves(self) -> pd.DataFrame:
        """All points: ``CURVE_COLUMNS`` plus one column per metric, by strategy, seed, step."""
        ...


def curves_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Point rows as the frame ``ResultSink.curves`` returns."""
    if not rows:
        return pd.DataFrame(columns=CURVE_COLUMNS + ["f1"])
    frame = pd.DataFrame.from_records(rows)
    return frame.sort_values(["strategy", "seed", "step"], kind="stable").reset_index(drop=True)


def point_row(strategy: str, seed: int, point: Point) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "seed": seed,
        "step": point.step,
        "n_sentences": point.n_sentences,
        "n_tokens": point.n_tokens,
        **point.metrics,
    }


class MemorySink:
    """Keeps everything in dictionaries (tests, in-process runs)."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, int], dict[str, Any]] = {}

    def _cell(self, strategy: str, seed: int) -> dict[str, Any]:
        return self.cells.setdefault(
            (strategy, seed), {"status": "running", "state": None, "points": []}
        )

    def saved(self, strategy: str, seed: int) -> Saved | None:
        cell = self.cells.get((strategy, seed))
        return None if cell is None else Saved(cell["status"], cell["state"])

    def record(self, strategy: str, seed: int, point: Point, state: dict[str, Any]) -> None:
        cell = self._cell(strategy, seed)
        cell["points"].append(point_row(strategy, seed, point))
        cell["state"] = json.loads(json.dumps(state))
        cell["status"] = "running"

    def finish(self, strategy: str, seed: int, status: str) -> None:
        if status not in ("done", "failed"):
            raise ValueError(f"a cell finishes as done or failed, not {status!r}")
        self._cell(strategy, seed)["status"] = status

    def curves(self) -> pd.DataFrame:
        return curves_frame([row for c in self.cells.values() for row in c["points"]])


class JsonDirSink:
    """One JSON file per cell under ``path`` (written whole to a temporary file, then renamed,
    so a killed process leaves either the old or the new file). ``experiment.json`` holds the
    configuration the CLI ran with."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    def _file(self, strategy: str, seed: int) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", strategy)
        return self.path / f"cell-{safe}-seed{int(seed)}.json"

    def _read(self, path: Path) -> dict[str, Any] | None:
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"))

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, allow_nan=False), encoding="utf-8")
        os.replace(tmp, path)

    def saved(self, strategy: str, seed: int) -> Saved | None:
        data = self._read(self._file(strategy, seed))
        return None if data is None else Saved(data["status"], data["state"])

    def record(self, strategy: str, seed: int, point: Point, state: dict[str, Any]) -> None:
        path = self._file(strategy, seed)
        data = self._read(path) or {"strategy": strategy, "seed": seed, "points": []}
        if any(p["step"] == point.step for p in data["points"]):
            raise ValueError(f"{strategy} seed {seed} already has a point at step {point.step}")
        data["points"].append(point_row(strategy, seed, point))
        data.update(status="running", state=state)
        self._write(path, data)

    def finish(self, strategy: str, seed: int, status: str) -> None:
        if status not in ("done", "failed"):
            raise ValueError(f"a cell finishes as done or failed, not {status!r}")
        path = self._file(strategy, seed)
        data = self._read(path) or {"strategy": strategy, "seed": seed, "points": [], "state": None}
        data["status"] = status
        self._write(path, data)

    def curves(self) -> pd.DataFrame:
        rows = []
        for path in sorted(self.path.glob("cell-*.json")):
            rows += json.loads(path.read_text(encoding="utf-8"))["points"]
        return curves_frame(rows)

    def write_experiment(self, info: dict[str, Any]) -> None:
        """Record the experiment's configuration (refuses a different one in the same folder)."""
        path = self.path / "experiment.json"
        old = self._read(path)
        if old is not None and old != json.loads(json.dumps(info)):
            raise ValueError(
                f"{self.path} holds another experiment; resume it with the same settings or "
                "choose another output folder"
            )
        self._write(path, info)

    def experiment(self) -> dict[str, Any] | None:
        return self._read(self.path / "experiment.json")
