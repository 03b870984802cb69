"""A project's entity types as the editor shows them: order, colour and key (pure, no queries).

The ``tagset`` setting says which tags the store accepts and the learner predicts; the ``labels``
setting (a list of ``{"type", "color", "key"}``, in the order the lead set) says how the editor
shows them. A type of the tag set the list does not name follows the listed ones, in tag-set
order, with the first free colour and key, so the keys of existing types never move when files
add a type. ``labels_revision`` counts the changes that rewrote stored tags (the live model and
its checkpoints belong to one revision).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cwal.io import schemes
from db.repository.base import InvalidValueError

PALETTE = (
    "#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#ff7f0e", "#7f7f7f",
)  # fmt: skip
RESERVED_KEYS = frozenset("sugf")  # the editor's skip, undo, guidelines, flag
KEYS = tuple(str(d) for d in range(1, 10)) + tuple(
    c for c in "abcdefghijklmnopqrtvwxyz" if c not in RESERVED_KEYS
)
"""The keys a type may have, in the order defaults are handed out."""
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_TYPE = re.compile(r"^[^\s-][^\s]*$")


@dataclass(frozen=True)
class LabelType:
    """One entity type as the editor shows it."""

    type: str
    color: str
    key: str


def tag_types(tagset: Sequence[str] | None) -> list[str]:
    """The entity types of a tag set, in the order they first appear."""
    seen: list[str] = []
    for tag in tagset or []:
        parts = schemes.split_tag(tag)
        if parts and parts[1] and parts[1] not in seen:
            seen.append(parts[1])
    return seen


def check_type_name(name: object) -> str:
    """``name`` when it can be an entity type (no whitespace, not starting with '-')."""
    if not isinstance(name, str) or not _TYPE.match(name) or len(name) > 60:
        raise InvalidValueError(
            f"an entity type is 1 to 60 characters without spaces, not {name!r}"
        )
    return name


def check_labels(value: Any, tagset: Sequence[str] | None) -> list[dict[str, str]] | None:
    """The ``labels`` setting after checking it: distinct types of the tag set (when there is
    one), ``#rrggbb`` colours, distinct keys from :data:`KEYS` (InvalidValueError otherwise)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidValueError("setting 'labels' must be null or a list")
    known = set(tag_types(tagset)) if tagset is not None else None
    types: set[str] = set()
    keys: set[str] = set()
    clean: list[dict[str, str]] = []
    for item in value:
        if not isinstance(item, Mapping) or set(item) != {"type", "color", "key"}:
            raise InvalidValueError(f"a label is {{type, color, key}}, not {item!r}")
        name, color, key = check_type_name(item["type"]), item["color"], item["key"]
        if known is not None and name not in known:
            raise InvalidValueError(f"label type {name!r} is not in the tag set")
        if name in types:
            raise InvalidValueError(f"label type {name!r} is listed twice")
        if not isinstance(color, str) or not _COLOUR.match(color):
            raise InvalidValueError(f"the colour of {name} must look like #1f77b4, not {color!r}")
        if key not in KEYS:
            raise InvalidValueError(
                f"the key of {name} must be one of 1-9 or a letter other than "
                f"{', '.join(sorted(RESERVED_KEYS))} (the editor's own keys), not {key!r}"
            )
        if key in keys:
            raise InvalidValueError(f"key {key!r} is taken by another type")
        types.add(name)
        keys.add(key)
        clean.append({"type": name, "color": color.lower(), "key": key})
    return clean


def label_types(settings: Mapping[str, Any], extra: Sequence[str] = ()) -> list[LabelType]:
    """Every type of the project (then ``extra`` ones, e.g. a stale prediction's) in the order
    the lead set, each with its colour and key; unlisted types take the first free ones."""
    listed = [LabelType(i["type"], i["color"], i["key"]) for i in settings.get("labels") or []]
    names = {t.type for t in listed}
    rest = [t for t in [*tag_types(settings.get("tagset")), *extra] if t not in names]
    rest = list(dict.fromkeys(rest))
    used_keys = {t.key for t in listed}
    used_colours = {t.color for t in listed}
    free_keys = [k for k in KEYS if k not in used_keys]
    free_colours = [c for c in PALETTE if c not in used_colours] or list(PALETTE)
    if len(rest) > len(free_keys):
        raise ValueError(f"at most {len(KEYS)} entity types can have a key")
    out = list(listed)
    for i, name in enumerate(rest):
        out.append(LabelType(name, free_colours[i % len(free_colours)], free_keys[i]))
    return out


def entity_types(settings: Mapping[str, Any]) -> list[str]:
    """The entity types a project labels, in the order the lead set (tag-set order by default)."""
    return [t.type for t in label_types(settings)]


def as_setting(types: Sequence[LabelType]) -> list[dict[str, str]]:
    """The ``labels`` setting that lists ``types`` in this order."""
    return [{"type": t.type, "color": t.color, "key": t.key} for t in types]


def map_tags(
    tags: Sequence[str], mapping: Mapping[str, str | None], scheme: str | None
) -> list[str]:
    """``tags`` with each span of a mapped type renamed (or dropped to O when mapped to None).
    Under a scheme the spans are rebuilt, so two neighbouring spans merged into one type stay
    two spans (IOB1 marks the second with B-)."""
    if scheme:
        try:
            found = schemes.spans(tags, scheme)
        except ValueError:
            found = None
        if found is not None:
            kept = [(mapping.get(t, t), s, e) for t, s, e in found]
            return schemes.from_spans([c for c in kept if c[0] is not None], len(tags), scheme)
    out: list[str] = []
    for tag in tags:
        parts = schemes.split_tag(tag)
        if parts is None or not parts[1] or parts[1] not in mapping:
            out.append(tag)
        else:
            new = mapping[parts[1]]
            out.append(schemes.OUTSIDE if new is None else f"{parts[0]}-{new}")
    return out


def map_tagset(tagset: Sequence[str], mapping: Mapping[str, str | None]) -> list[str]:
    """The tag set after ``mapping``: a dropped or merged type's tags leave, a renamed type's
    tags take the new name in place (order kept, no tag twice)."""
    out: list[str] = []
    for tag in tagset:
        parts = schemes.split_tag(tag)
        if parts is not None and parts[1] and parts[1] in mapping:
            new = mapping[parts[1]]
            tag = None if new is None else f"{parts[0]}-{new}"
        if tag is not None and tag not in out:
            out.append(tag)
    return out
