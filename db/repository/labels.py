"""Label configuration on a running project: add, rename, recolour, reorder, re-key, merge and
delete entity types.

Every change is one transaction that updates the project's ``tagset`` and ``labels`` settings,
rewrites the stored tags it concerns (every annotation row, the imported gold tags, the logged
predictions) and appends a ``label_changes`` row saying who, when, what and the mapping. A change
that rewrites tags or changes the tag set bumps ``labels_revision``: checkpoints of an earlier
revision are no longer used (``list_checkpoints(..., labels_revision=...)``), so the model is
rebuilt from the rewritten log. Deleting or merging a type that stored labels use needs an
explicit choice (:class:`LabelsInUseError` otherwise): merge into another type, or drop to O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Text, bindparam, insert, or_, select, type_coerce, update

from cwal.io import schemes
from db.engine import read_transaction, write_transaction
from db.models import Annotation, LabelChange, Prediction, Project, Sentence, User, utcnow
from db.repository.base import (
    InvalidValueError,
    NotFoundError,
    StoreError,
    lock_project_annotations,
    require_user,
)
from db.repository.label_config import (
    KEYS,
    PALETTE,
    LabelType,
    as_setting,
    check_type_name,
    label_types,
    map_tags,
    map_tagset,
)
from db.repository.projects import DEFAULT_SETTINGS, validate_settings

DROP = "O"
"""``into`` value of :func:`remove_label_type` that turns the type's spans into O."""


class LabelsInUseError(StoreError):
    """A type that stored labels use cannot go without saying where its spans go."""

    def __init__(self, name: str, used: int) -> None:
        self.type, self.used = name, used
        super().__init__(
            f"{used:,} stored labels use {name}: merge it into another type or drop its spans to O"
        )


@dataclass(frozen=True)
class LabelChangeInfo:
    id: int
    user_name: str
    created_at: datetime
    action: str
    mapping: dict[str, str | None]
    before: list[dict[str, str]]
    after: list[dict[str, str]]
    rewritten: int


_TABLES = (
    (Annotation, Annotation.tags, Annotation.project_id),
    (Sentence, Sentence.gold_tags, Sentence.project_id),
    (Prediction, Prediction.tags, Prediction.project_id),
)


def _like(name: str) -> str:
    """A LIKE pattern matching the JSON text of a tag list holding a tag of type ``name``."""
    body = json.dumps(f"-{name}", ensure_ascii=True)[1:-1] + '"'
    return "%" + body.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _holding(column: Any, names: list[str]) -> Any:
    text = type_coerce(column, Text)  # the JSON text itself, not a JSON-encoded pattern
    return or_(*(text.like(_like(n), escape="\\") for n in names))


def _has_type(tags: list[str] | None, names: set[str]) -> bool:
    for tag in tags or []:
        parts = schemes.split_tag(tag)
        if parts is not None and parts[1] in names:
            return True
    return False


def _usage(conn: Connection, project_id: int, names: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(names, 0)
    if not names:
        return counts
    for _table, column, owner in _TABLES[:2]:
        query = select(column).where(owner == project_id, _holding(column, names))
        for tags in conn.execute(query).scalars():
            for name in {p[1] for p in map(schemes.split_tag, tags or []) if p and p[1]}:
                if name in counts:
                    counts[name] += 1
    return counts


def label_usage(engine: Engine, project_id: int, names: list[str] | None = None) -> dict[str, int]:
    """How many stored tag lists (annotation rows of any kind, gold tags) hold each type (of
    ``names``, or every type of the project)."""
    with read_transaction(engine) as conn:
        if names is None:
            settings = _settings(conn, project_id, lock=False)
            names = [t.type for t in label_types(settings)]
        return _usage(conn, project_id, list(names))


def _settings(conn: Connection, project_id: int, *, lock: bool) -> dict[str, Any]:
    query = select(Project.settings).where(Project.id == project_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    found = conn.execute(query).scalar_one_or_none()
    if found is None:
        raise NotFoundError(f"no project with id {project_id}")
    return {**DEFAULT_SETTINGS, **found}


def _rewrite(
    conn: Connection, project_id: int, mapping: Mapping[str, str | None], scheme: str | None
) -> int:
    """Rewrite every stored tag list of the project that holds a mapped type; rows changed."""
    names = list(mapping)
    wanted = set(names)
    changed = 0
    for table, column, owner in _TABLES:
        rows = conn.execute(
            select(table.id, column).where(owner == project_id, _holding(column, names))
        ).all()
        params = [
            {"row_id": rid, "new": map_tags(tags, mapping, scheme)}
            for rid, tags in rows
            if _has_type(tags, wanted)
        ]
        if params:
            statement = (
                update(table)
                .where(table.id == bindparam("row_id"))
                .values({column.key: bindparam("new", type_=column.type)})
            )
            conn.execute(statement, params)
            changed += len(params)
    return changed


def _change(
    engine: Engine,
    project_id: int,
    user_id: int,
    action: str,
    edit: Any,
    mapping: Mapping[str, str | None] | None = None,
    new_tagset: Any = None,
) -> int:
    """Apply one change atomically: ``edit(types, settings, conn) -> types`` on the current types; ``mapping``
    rewrites stored tags; the log row is appended. Returns the number of tag lists rewritten."""
    mapping = dict(mapping or {})
    with write_transaction(engine) as conn:
        require_user(conn, user_id)
        lock_project_annotations(conn, project_id)  # no submission interleaves with a rewrite
        settings = _settings(conn, project_id, lock=True)
        before = label_types(settings)
        after = edit(before, settings, conn)
        tagset = settings["tagset"]
        if new_tagset is not None:
            tagset = new_tagset(tagset, settings)
        elif mapping and tagset is not None:
            tagset = map_tagset(tagset, mapping)
        rewritten = _rewrite(conn, project_id, mapping, settings["scheme"]) if mapping else 0
        revision = settings["labels_revision"]
        if mapping or tagset != settings["tagset"]:
            revision += 1
        merged = validate_settings(
            {**settings, "tagset": tagset, "labels": as_setting(after), "labels_revision": revision}
        )
        conn.execute(update(Project).where(Project.id == project_id).values(settings=merged))
        conn.execute(
            insert(LabelChange).values(
                project_id=project_id,
                user_id=user_id,
                created_at=utcnow(),
                action=action,
                mapping=mapping,
                before=as_setting(before),
                after=as_setting(after),
                rewritten=rewritten,
            )
        )
    return rewritten


def _find(types: list[LabelType], name: str) -> int:
    for i, t in enumerate(types):
        if t.type == name:
            return i
    raise NotFoundError(f"the project has no entity type {name!r}")


def add_label_type(
    engine: Engine,
    project_id: int,
    user_id: int,
    name: str,
    *,
    color: str | None = None,
    key: str | None = None,
) -> None:
    """Add an entity type at the end (the next free colour and key unless given)."""
    check_type_name(name)

    def edit(types: list[LabelType], settings: dict[str, Any], conn: Connection) -> list[LabelType]:
        if any(t.type == name for t in types):
            raise InvalidValueError(f"the project already has the type {name!r}")
        keys = [k for k in KEYS if k not in {t.key for t in types}]
        if not keys and key is None:
            raise InvalidValueError(f"every key is taken: at most {len(KEYS)} types")
        colours = [c for c in PALETTE if c not in {t.color for t in types}] or list(PALETTE)
        return [*types, LabelType(name, color or colours[0], key or keys[0])]

    def tagset(current: list[str] | None, settings: dict[str, Any]) -> list[str] | None:
        prefixes = sorted(schemes.get(settings["scheme"] or "IOB2").alphabet)
        if current is None:  # a project that took any tag gets a tag set of its types
            names = [t.type for t in label_types(settings)]
            current = ["O"] + [f"{p}-{t}" for t in names for p in prefixes]
        base = current if "O" in current else ["O", *current]
        return base + [f"{p}-{name}" for p in prefixes]

    _change(engine, project_id, user_id, "add", edit, new_tagset=tagset)


def update_label_type(
    engine: Engine,
    project_id: int,
    user_id: int,
    name: str,
    *,
    rename: str | None = None,
    color: str | None = None,
    key: str | None = None,
    position: int | None = None,
) -> int:
    """Rename, recolour, re-key or move (0-based ``position``) one type; a rename rewrites every
    stored tag of the type. Returns the number of tag lists rewritten."""
    if rename is not None and rename != name:
        check_type_name(rename)
    mapping = {name: rename} if rename is not None and rename != name else {}

    def edit(types: list[LabelType], settings: dict[str, Any], conn: Connection) -> list[LabelType]:
        i = _find(types, name)
        if mapping and any(t.type == rename for t in types):
            raise InvalidValueError(
                f"{rename!r} is already a type: delete {name} and merge it into {rename} instead"
            )
        if key is not None:
            holder = [t.type for t in types if t.key == key and t.type != name]
            if holder:
                raise InvalidValueError(f"key {key!r} is taken by {holder[0]}")
        changed = replace(
            types[i],
            type=rename or name,
            color=color if color is not None else types[i].color,
            key=key if key is not None else types[i].key,
        )
        rest = types[:i] + types[i + 1 :]
        at = i if position is None else max(0, min(int(position), len(rest)))
        return rest[:at] + [changed] + rest[at:]

    action = "rename" if mapping else "edit"
    return _change(engine, project_id, user_id, action, edit, mapping)


def reorder_label_types(engine: Engine, project_id: int, user_id: int, order: list[str]) -> None:
    """Put the types in ``order`` (every type once): the editor's keys are not moved."""

    def edit(types: list[LabelType], settings: dict[str, Any], conn: Connection) -> list[LabelType]:
        if sorted(order) != sorted(t.type for t in types):
            raise InvalidValueError("a new order must name every type exactly once")
        by_name = {t.type: t for t in types}
        return [by_name[n] for n in order]

    _change(engine, project_id, user_id, "reorder", edit)


def remove_label_type(
    engine: Engine, project_id: int, user_id: int, name: str, *, into: str | None = None
) -> int:
    """Delete a type. When stored labels use it, ``into`` must say where its spans go: another
    type's name (merge) or :data:`DROP` (to O); without it, :class:`LabelsInUseError`. The
    rewrite, the new settings and the log row are one transaction. Returns the rows rewritten."""
    if into == name:
        raise InvalidValueError(f"{name} cannot be merged into itself")
    target = None if into in (None, DROP) else into

    def edit(types: list[LabelType], settings: dict[str, Any], conn: Connection) -> list[LabelType]:
        i = _find(types, name)
        if target is not None:
            _find(types, target)
        used = _usage(conn, project_id, [name])[name]
        if used and into is None:
            raise LabelsInUseError(name, used)
        return types[:i] + types[i + 1 :]

    action = "merge" if target is not None else "delete"
    return _change(engine, project_id, user_id, action, edit, {name: target})


def label_changes(engine: Engine, project_id: int) -> list[LabelChangeInfo]:
    """The project's label configuration history, newest first."""
    c = LabelChange
    query = (
        select(c.id, User.name, c.created_at, c.action, c.mapping, c.before, c.after, c.rewritten)
        .join(User, User.id == c.user_id)
        .where(c.project_id == project_id)
        .order_by(c.id.desc())
    )
    with read_transaction(engine) as conn:
        return [LabelChangeInfo(*row) for row in conn.execute(query)]


def mappings_since(engine: Engine, project_id: int, since: datetime) -> list[dict[str, str | None]]:
    """The tag rewrites made after ``since``, oldest first (to carry labels an editor still
    shows in the old names over to the new ones)."""
    query = (
        select(LabelChange.mapping)
        .where(LabelChange.project_id == project_id, LabelChange.created_at > since)
        .order_by(LabelChange.id)
    )
    with read_transaction(engine) as conn:
        return [dict(m) for m in conn.execute(query).scalars() if m]


def carry_over(
    tags: list[str], mappings: list[dict[str, str | None]], scheme: str | None
) -> list[str]:
    """``tags`` rewritten by each of ``mappings`` in turn."""
    for mapping in mappings:
        tags = map_tags(tags, mapping, scheme)
    return tags
