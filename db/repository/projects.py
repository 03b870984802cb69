"""Projects and their settings (one JSON document: learner, strategy, scheme, tag set, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from cwal.io import schemes
from db.engine import read_transaction, write_transaction
from db.models import Project, utcnow
from db.repository.base import (
    DuplicateError,
    InvalidValueError,
    NotFoundError,
    check_json,
    check_name,
    is_unique_violation,
)
from db.repository.label_config import check_labels

DEFAULT_SETTINGS: dict[str, Any] = {
    "learner": "arow",  # a cwal.learners.make name
    "learner_params": {},
    "strategy": "kd-pc",  # a cwal.strategies name
    "strategy_params": {},
    "feature_template": "chunk",  # "chunk" or "ner"
    "scheme": "IOB2",
    "strict_scheme": True,  # invalid tag sequences are refused (False: repaired on import)
    "tagset": None,  # list of allowed tags; None accepts any tag
    "labels": None,  # the editor's order, colour and key of each type (label_config)
    "labels_revision": 0,  # changes that rewrote stored tags (db.repository.labels)
    "columns": None,  # CoNLL column roles for imports; None: the reader's default
    "consolidation_interval": 50,  # annotations between two full retrainings
    "lease_ttl_seconds": 900,
    "pool_clusters": None,  # word clusters of the pool text as features; None: by template
}


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    name: str
    settings: dict[str, Any]
    created_at: datetime


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def validate_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings merged over the defaults, after checking each known key's type."""
    merged = {**DEFAULT_SETTINGS, **dict(settings)}
    for key in ("learner", "strategy", "feature_template"):
        if not isinstance(merged[key], str) or not merged[key]:
            raise InvalidValueError(f"setting {key!r} must be a non-empty string")
    for key in ("learner_params", "strategy_params"):
        if not isinstance(merged[key], dict):
            raise InvalidValueError(f"setting {key!r} must be a JSON object")
    if merged["scheme"] is not None:
        try:
            merged["scheme"] = schemes.get(merged["scheme"]).name
        except ValueError as exc:
            raise InvalidValueError(f"setting 'scheme': {exc}") from None
    if not isinstance(merged["strict_scheme"], bool):
        raise InvalidValueError("setting 'strict_scheme' must be true or false")
    tagset = merged["tagset"]
    if tagset is not None and (not _is_str_list(tagset) or len(set(tagset)) != len(tagset)):
        raise InvalidValueError("setting 'tagset' must be null or a list of distinct tags")
    merged["labels"] = check_labels(merged["labels"], tagset)
    revision = merged["labels_revision"]
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 0:
        raise InvalidValueError("setting 'labels_revision' must be an integer >= 0")
    if merged["columns"] is not None and not _is_str_list(merged["columns"]):
        raise InvalidValueError("setting 'columns' must be null or a list of column roles")
    if merged["pool_clusters"] not in (None, True, False):
        raise InvalidValueError("setting 'pool_clusters' must be null, true or false")
    interval = merged["consolidation_interval"]
    if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
        raise InvalidValueError("setting 'consolidation_interval' must be an integer >= 1")
    ttl = merged["lease_ttl_seconds"]
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise InvalidValueError("setting 'lease_ttl_seconds' must be a number > 0")
    return check_json(merged, "settings")


def create_project(engine: Engine, name: str, settings: Mapping[str, Any] | None = None) -> int:
    """Create a project (settings merged over DEFAULT_SETTINGS) and return its id."""
    check_name(name, "project name")
    merged = validate_settings(settings or {})
    try:
        with write_transaction(engine) as conn:
            return conn.execute(
                insert(Project)
                .values(name=name, settings=merged, created_at=utcnow())
                .returning(Project.id)
            ).scalar_one()
    except IntegrityError as exc:
        if is_unique_violation(exc):
            raise DuplicateError(f"project name {name!r} is already taken") from None
        raise


_COLUMNS = (Project.id, Project.name, Project.settings, Project.created_at)


def project_settings(conn: Connection, project_id: int) -> dict[str, Any]:
    """The settings of a project inside an open transaction (NotFoundError when absent)."""
    settings = conn.execute(
        select(Project.settings).where(Project.id == project_id)
    ).scalar_one_or_none()
    if settings is None:
        raise NotFoundError(f"no project with id {project_id}")
    return {**DEFAULT_SETTINGS, **settings}


def get_project(engine: Engine, project_id: int) -> ProjectInfo:
    """The project with that id (NotFoundError otherwise)."""
    with read_transaction(engine) as conn:
        row = conn.execute(select(*_COLUMNS).where(Project.id == project_id)).one_or_none()
    if row is None:
        raise NotFoundError(f"no project with id {project_id}")
    return ProjectInfo(row.id, row.name, {**DEFAULT_SETTINGS, **row.settings}, row.created_at)


def find_project(engine: Engine, name: str) -> ProjectInfo | None:
    """The project of that exact name, or None."""
    with read_transaction(engine) as conn:
        row = conn.execute(select(*_COLUMNS).where(Project.name == name)).one_or_none()
    if row is None:
        return None
    return ProjectInfo(row.id, row.name, {**DEFAULT_SETTINGS, **row.settings}, row.created_at)


def list_projects(engine: Engine) -> list[ProjectInfo]:
    """All projects in creation order."""
    with read_transaction(engine) as conn:
        rows = conn.execute(select(*_COLUMNS).order_by(Project.id)).all()
    return [
        ProjectInfo(r.id, r.name, {**DEFAULT_SETTINGS, **r.settings}, r.created_at) for r in rows
    ]


def clusters_enabled(settings: Mapping[str, Any]) -> bool:
    """Whether the project's live model uses the word clusters of its pool (its
    ``pool_clusters`` setting; None: on for the ``ner`` template, off for ``chunk``, as
    bench/live_clusters.py measured; db.repository.clusters)."""
    chosen = settings.get("pool_clusters")
    if chosen is None:
        return settings.get("feature_template", "chunk") == "ner"
    return bool(chosen)


def update_project_settings(
    engine: Engine, project_id: int, changes: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge ``changes`` into a project's settings (atomically) and return the new settings."""
    with write_transaction(engine) as conn:
        query = select(Project.settings).where(Project.id == project_id)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        current = conn.execute(query).scalar_one_or_none()
        if current is None:
            raise NotFoundError(f"no project with id {project_id}")
        merged = validate_settings({**current, **dict(changes)})
        if clusters_enabled(merged) != clusters_enabled(current):  # other features: the
            merged["labels_revision"] += 1  # checkpoints are set aside, every process rebuilds
        conn.execute(update(Project).where(Project.id == project_id).values(settings=merged))
    return merged
