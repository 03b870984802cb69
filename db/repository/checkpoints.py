"""Model checkpoints: the engine's serialized state (bytes) and the last annotation it has seen."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from db.engine import read_transaction, write_transaction
from db.models import Checkpoint
from db.repository.base import InvalidValueError, NotFoundError, check_json, check_time
from db.repository.projects import get_project


@dataclass(frozen=True)
class CheckpointInfo:
    """A checkpoint; ``state`` is None in listings (it can be large)."""

    id: int
    project_id: int
    last_annotation_id: int | None
    info: dict[str, Any]
    created_at: datetime
    state: bytes | None = None


def save_checkpoint(
    engine: Engine,
    project_id: int,
    state: bytes,
    last_annotation_id: int | None,
    info: dict[str, Any] | None = None,
    *,
    now: datetime | None = None,
) -> int:
    """Store a model's serialized state (the bytes the engine's ``save`` wrote: an .npz with JSON
    metadata, never a pickle) and return the checkpoint id; its number is the model version."""
    if not isinstance(state, bytes | bytearray | memoryview):
        raise InvalidValueError("checkpoint state must be bytes")
    info = check_json(dict(info or {}), "checkpoint info")
    with write_transaction(engine) as conn:
        return conn.execute(
            insert(Checkpoint)
            .values(
                project_id=project_id,
                last_annotation_id=last_annotation_id,
                state=bytes(state),
                info=info,
                created_at=check_time(now),
            )
            .returning(Checkpoint.id)
        ).scalar_one()


_META = (
    Checkpoint.id,
    Checkpoint.project_id,
    Checkpoint.last_annotation_id,
    Checkpoint.info,
    Checkpoint.created_at,
)


def latest_checkpoint(engine: Engine, project_id: int) -> CheckpointInfo | None:
    """The project's newest checkpoint with its state, or None."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(*_META, Checkpoint.state)
            .where(Checkpoint.project_id == project_id)
            .order_by(Checkpoint.id.desc())
            .limit(1)
        ).one_or_none()
    return None if row is None else CheckpointInfo(*row[:5], state=bytes(row.state))


def get_checkpoint(engine: Engine, checkpoint_id: int) -> CheckpointInfo:
    """One checkpoint with its state (NotFoundError otherwise)."""
    with read_transaction(engine) as conn:
        row = conn.execute(
            select(*_META, Checkpoint.state).where(Checkpoint.id == checkpoint_id)
        ).one_or_none()
    if row is None:
        raise NotFoundError(f"no checkpoint with id {checkpoint_id}")
    return CheckpointInfo(*row[:5], state=bytes(row.state))


def list_checkpoints(
    engine: Engine, project_id: int, labels_revision: int | None = None
) -> list[CheckpointInfo]:
    """The project's checkpoints, oldest first, without their state; with ``labels_revision``,
    only those of models trained under that label configuration (``info["labels_revision"]``,
    0 when absent): a rename or merge since makes the older ones describe other tags."""
    with read_transaction(engine) as conn:
        rows = conn.execute(
            select(*_META).where(Checkpoint.project_id == project_id).order_by(Checkpoint.id)
        ).all()
    found = [CheckpointInfo(*row) for row in rows]
    if labels_revision is None:
        return found
    return [c for c in found if int(c.info.get("labels_revision", 0)) == labels_revision]


def current_checkpoints(engine: Engine, project_id: int) -> list[CheckpointInfo]:
    """The checkpoints of the project's current label configuration, oldest first."""
    revision = int(get_project(engine, project_id).settings.get("labels_revision", 0))
    return list_checkpoints(engine, project_id, revision)


def prune_checkpoints(engine: Engine, project_id: int, keep: int = 5) -> int:
    """Delete all but the ``keep`` newest checkpoints of a project (they can be rebuilt from the
    annotations); returns how many were deleted."""
    if keep < 1:
        raise InvalidValueError("keep at least one checkpoint")
    with write_transaction(engine) as conn:
        kept = (
            select(Checkpoint.id)
            .where(Checkpoint.project_id == project_id)
            .order_by(Checkpoint.id.desc())
            .limit(keep)
        )
        query = delete(Checkpoint).where(
            Checkpoint.project_id == project_id, Checkpoint.id.not_in(kept.scalar_subquery())
        )
        return conn.execute(query).rowcount
