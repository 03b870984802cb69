"""Simulation runs (an active-learning experiment replayed on gold data) and their curve points."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from db.engine import read_transaction, write_transaction
from db.models import CurvePoint, SimulationRun
from db.repository.base import (
    DuplicateError,
    InvalidValueError,
    NotFoundError,
    check_json,
    check_name,
    check_time,
    is_unique_violation,
)

if TYPE_CHECKING:  # pandas is imported by the functions that build frames
    import pandas as pd

RUN_STATUSES = ("running", "done", "failed")


@dataclass(frozen=True)
class SimulationRunInfo:
    id: int
    project_id: int | None
    name: str
    config: dict[str, Any]
    status: str
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class CurvePointInput:
    """One learning-curve point: after ``step``, how much was labeled and what was measured."""

    step: int
    n_sentences: int
    n_tokens: int
    metrics: Mapping[str, float]


def create_simulation_run(
    engine: Engine,
    name: str,
    config: Mapping[str, Any],
    *,
    project_id: int | None = None,
    now: datetime | None = None,
) -> int:
    """Start a run (status ``running``) with its configuration; returns its id."""
    check_name(name, "run name")
    config = check_json(dict(config), "run config")
    with write_transaction(engine) as conn:
        return conn.execute(
            insert(SimulationRun)
            .values(
                project_id=project_id,
                name=name,
                config=config,
                status="running",
                created_at=check_time(now),
                finished_at=None,
            )
            .returning(SimulationRun.id)
        ).scalar_one()


_COLUMNS = (
    SimulationRun.id,
    SimulationRun.project_id,
    SimulationRun.name,
    SimulationRun.config,
    SimulationRun.status,
    SimulationRun.created_at,
    SimulationRun.finished_at,
)


def get_simulation_run(engine: Engine, run_id: int) -> SimulationRunInfo:
    """One run (NotFoundError otherwise)."""
    with read_transaction(engine) as conn:
        row = conn.execute(select(*_COLUMNS).where(SimulationRun.id == run_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no simulation run with id {run_id}")
    return SimulationRunInfo(*row)


def list_simulation_runs(
    engine: Engine, project_id: int | None = None, *, status: str | None = None
) -> list[SimulationRunInfo]:
    """Runs in creation order (optionally of one project and/or status)."""
    query = select(*_COLUMNS).order_by(SimulationRun.id)
    if project_id is not None:
        query = query.where(SimulationRun.project_id == project_id)
    if status is not None:
        query = query.where(SimulationRun.status == status)
    with read_transaction(engine) as conn:
        return [SimulationRunInfo(*row) for row in conn.execute(query)]


def finish_simulation_run(
    engine: Engine, run_id: int, status: str = "done", *, now: datetime | None = None
) -> None:
    """Mark a run ``done`` or ``failed`` and stamp its end time."""
    if status not in ("done", "failed"):
        raise InvalidValueError(f"a run finishes as done or failed, not {status!r}")
    with write_transaction(engine) as conn:
        query = (
            update(SimulationRun)
            .where(SimulationRun.id == run_id)
            .values(status=status, finished_at=check_time(now))
        )
        if conn.execute(query).rowcount != 1:
            raise NotFoundError(f"no simulation run with id {run_id}")


def delete_simulation_run(engine: Engine, run_id: int) -> None:
    """Delete a run and its curve points."""
    with write_transaction(engine) as conn:
        conn.execute(delete(CurvePoint).where(CurvePoint.run_id == run_id))
        if conn.execute(delete(SimulationRun).where(SimulationRun.id == run_id)).rowcount != 1:
            raise NotFoundError(f"no simulation run with id {run_id}")


def _point_row(run_id: int, point: CurvePointInput) -> dict[str, Any]:
    metrics = {str(k): float(v) for k, v in dict(point.metrics).items()}
    clash = set(metrics) & {"run_id", "step", "n_sentences", "n_tokens"}
    if clash:
        raise InvalidValueError(f"step {point.step}: metric names {sorted(clash)} are reserved")
    if not all(math.isfinite(v) for v in metrics.values()):
        raise InvalidValueError(f"step {point.step}: metrics must be finite numbers")
    if point.step < 0 or point.n_sentences < 0 or point.n_tokens < 0:
        raise InvalidValueError(f"step {point.step}: counts must be >= 0")
    return {
        "run_id": run_id,
        "step": int(point.step),
        "n_sentences": int(point.n_sentences),
        "n_tokens": int(point.n_tokens),
        "metrics": metrics,
    }


def add_curve_points(engine: Engine, run_id: int, points: Iterable[CurvePointInput]) -> int:
    """Append curve points to a run in one transaction (a repeated step raises DuplicateError)."""
    rows = [_point_row(run_id, p) for p in points]
    if not rows:
        return 0
    try:
        with write_transaction(engine) as conn:
            found = conn.execute(select(SimulationRun.id).where(SimulationRun.id == run_id))
            if found.scalar_one_or_none() is None:
                raise NotFoundError(f"no simulation run with id {run_id}")
            conn.execute(insert(CurvePoint), rows)
    except IntegrityError as exc:
        if is_unique_violation(exc):
            raise DuplicateError(
                f"run {run_id} already has a point for one of these steps"
            ) from None
        raise
    return len(rows)


def add_curve_point(
    engine: Engine,
    run_id: int,
    step: int,
    n_sentences: int,
    n_tokens: int,
    metrics: Mapping[str, float],
) -> None:
    """Append one curve point to a run."""
    add_curve_points(engine, run_id, [CurvePointInput(step, n_sentences, n_tokens, metrics)])


def curve_points(engine: Engine, run_ids: int | Sequence[int]) -> pd.DataFrame:
    """The curve points of one or more runs as a DataFrame: ``run_id``, ``step``,
    ``n_sentences``, ``n_tokens`` and one column per metric, ordered by run then step."""
    import pandas as pd

    ids = [run_ids] if isinstance(run_ids, int) else list(run_ids)
    query = (
        select(
            CurvePoint.run_id,
            CurvePoint.step,
            CurvePoint.n_sentences,
            CurvePoint.n_tokens,
            CurvePoint.metrics,
        )
        .where(CurvePoint.run_id.in_(ids))
        .order_by(CurvePoint.run_id, CurvePoint.step)
    )
    with read_transaction(engine) as conn:
        rows = conn.execute(query).all()
    records = [
        {"run_id": r.run_id, "step": r.step, "n_sentences": r.n_sentences, "n_tokens": r.n_tokens}
        | r.metrics
        for r in rows
    ]
    base = ["run_id", "step", "n_sentences", "n_tokens"]
    return pd.DataFrame.from_records(records, columns=None if records else base)
